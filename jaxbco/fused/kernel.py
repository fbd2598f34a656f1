"""The round loop as one Pallas kernel: each program instance owns a block of B seeds of one
hyperparameter setting and runs rounds t0 .. t0 + L - 1 with its state in registers.

Per round it does what the scan back-ends do (the same code: ``engine.one_run``, so the
algorithm's ``play``/``step``, the loss, the constraint and the prox solver), on seeds-minor
blocks (``jaxbco.backends.seeds_minor``):

    vectors (P, B),  per-run scalars (B,),  the problem's arrays (P, 1),  hyperparameters (),

with the coordinates padded from d to P = the next power of two (``padding.py``): padded rows
of x, theta, u and the problem's vectors are zero and the padded sets act on the d real
coordinates, so every inner product, norm and projection is the unpadded one.  Each round's
data are the components' own ``sample``/``sample_direction`` on the scan engine's streams
(``jaxbco.keys``' round keys, ``draw``): float32, one Threefry-2x32 hash of the counter
(t, j) per row j under the seed key, its two words theta_t's and u_t's bits
(``prng.paired_keys``); the rows >= d zeroed, so row j < d is bitwise the engine's number
j and a seed's draws depend only on its key.  Curves are written at the checkpoints into
buffers aliased to the carry's.
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from jaxbco import comparator as _comparator
from jaxbco import (
    draws,  # engine: the round (``engine.one_run``)
    engine,
)
from jaxbco._src.prng import KeyBlock


class Config(NamedTuple):
    """Static launch choices: seeds per program instance (a power of two; every batch is
    padded to a multiple, so a seed's numbers never depend on its batch), warps per program,
    ``interpret`` (Pallas' interpreter: the kernel's semantics on any backend, for tests),
    ``prefetch`` (draw round t + 1's numbers during round t) and ``unroll`` (rounds per loop
    iteration).  Defaults: the fastest block x warps at 1e4 seeds x 1e4 rounds on an H100 with
    the counter-based streams; from ~1e5 seeds ``Config(block=32, warps=1)`` (one thread per
    seed) is faster (docs/gpu.md)."""

    block: int = 16
    warps: int = 1
    interpret: bool = False
    prefetch: bool = False
    unroll: int = 1


# --- the rounds' data, seeds-minor, in the kernel ------------------------------------------


def real_rows(tree, d: int, P: int):
    """Drawn data with the padded rows zeroed: every (P, B) leaf's rows >= d (the padded
    problem's sequences draw P numbers; rows j < d are the engine's numbers j)."""

    def f(a):
        if jnp.ndim(a) == 2 and a.shape[0] == P and P != d:
            return jnp.where(jax.lax.broadcasted_iota(jnp.int32, (P, 1), 0) < d, a, 0.0)
        return a

    return jax.tree_util.tree_map(f, tree)


def draw(problem, k0, k1, t, d: int, P: int, dtype):
    """(theta_t, u_t, phi_{t+1}) of every seed of the block: ``draws.round_draws`` on the
    block's ``KeyBlock``, theta_t's and u_t's numbers sharing one hash each (``paired``), the
    padded rows past d zeroed; shared data sampled once (``Fixed``: the problem's arrays,
    (P, 1))."""
    theta, u, phi_next = draws.round_draws(problem, KeyBlock(k0, k1), t, dtype, paired=P)
    theta_s, _, phi_s = draws.shared_data(problem, t)
    theta = real_rows(theta, d, P) if theta_s is None else theta_s
    phi_next = real_rows(phi_next, d, P) if phi_s is None else phi_s
    return theta, u, phi_next


# --- the kernel -------------------------------------------------------------------------------


def _load(ref, kind: str, g, s0, B: int):
    """A block of an input: 'c' constants (P, 1) or scalars (1,), 'h' per-setting scalars (G,),
    'r' per-run (G, [P,] S), 's' per-seed ([P,] S); 'k' and 'a' stay references (the
    checkpoint rounds, read one at a time, and the curve buffers, written at checkpoints)."""
    nd = len(ref.shape)
    if kind in ("k", "a"):
        return ref
    if kind == "c":
        return ref[0] if nd == 1 else ref[...]
    if kind == "h":
        return ref[g]
    if kind == "r":
        return ref[g, pl.ds(s0, B)] if nd == 2 else ref[g, :, pl.ds(s0, B)]
    return ref[pl.ds(s0, B)] if nd == 1 else ref[:, pl.ds(s0, B)]


def _store(ref, value, kind: str, g, s0, B: int):
    if kind == "r":
        if len(ref.shape) == 2:
            ref[g, pl.ds(s0, B)] = value
        else:
            ref[g, :, pl.ds(s0, B)] = value
    elif len(ref.shape) == 1:
        ref[pl.ds(s0, B)] = value
    else:
        ref[:, pl.ds(s0, B)] = value


class Spec(NamedTuple):
    """What the kernel body needs to rebuild its pytrees (all static)."""

    problem_def: object  # (treedef of the padded problem's arrays, its static part)
    hyper_def: object
    state_def: object
    d: int
    P: int
    B: int
    length: int
    n_ck: int
    stream: bool  # streaming comparator: sums of theta and |theta|^2
    phi_def: object  # treedef of phi_t's per-seed leaves (None: shared data, not carried)
    prefetch: bool  # ``Config.prefetch``
    unroll: int  # ``Config.unroll``


def n_phi(spec: Spec) -> int:
    """phi_t's per-seed leaves carried by the kernel (0 for shared data)."""
    return 0 if spec.phi_def is None else spec.phi_def.num_leaves


def input_kinds(spec: Spec) -> tuple:
    """How each kernel input is blocked, in the order ``body`` reads them."""
    return (
        ("c",) * spec.problem_def[0].num_leaves
        + ("h",) * spec.hyper_def.num_leaves
        + ("c", "k", "s", "s")
        + ("s",) * (not spec.stream)
        + ("r",) * (spec.state_def.num_leaves + 6)
        + ("s",) * n_phi(spec)
        + ("s", "s") * spec.stream
        + ("a",)
        + ("a", "a") * spec.stream
    )


def body(spec: Spec, algorithm, *refs):
    """The kernel: ``refs`` are the inputs (``input_kinds``) then the outputs: the carry's
    per-run leaves, phi_t's per-seed leaves and the sums (stored at the end), the curve buffers (aliased
    to their inputs, written at the checkpoints)."""
    kinds = input_kinds(spec)
    ins, outs = refs[: len(kinds)], refs[len(kinds) :]
    g, j = pl.program_id(0), pl.program_id(1)
    B, P, d = spec.B, spec.P, spec.d
    s0 = j * B
    it = iter([_load(r, k, g, s0, B) for r, k in zip(ins, kinds)])
    take = lambda n: [next(it) for _ in range(n)]
    pdef, pstatic = spec.problem_def
    problem = eqx.combine(jax.tree_util.tree_unflatten(pdef, take(pdef.num_leaves)), pstatic)
    hyper = jax.tree_util.tree_unflatten(spec.hyper_def, take(spec.hyper_def.num_leaves))
    t0, cps, k0, k1 = take(4)
    x_star = None if spec.stream else next(it)
    state = jax.tree_util.tree_unflatten(spec.state_def, take(spec.state_def.num_leaves))
    acc = engine.Acc(*take(4))
    failed, failed_round = take(2)
    phi = jax.tree_util.tree_unflatten(spec.phi_def, take(n_phi(spec))) if n_phi(spec) else None
    sums = tuple(take(2)) if spec.stream else ()
    bufs, sbuf = next(it), tuple(take(2)) if spec.stream else ()
    n_r = spec.state_def.num_leaves + 6
    n_p = n_phi(spec)
    bufs_out, sbuf_out = outs[n_r + n_p + 2 * spec.stream], outs[n_r + n_p + 2 * spec.stream + 1 :]
    del bufs, sbuf  # aliased: written through the outputs
    dtype = acc.loss.dtype
    per_run = engine.one_run(problem, algorithm, spec.stream, 1, stack=False)

    shared_phi = spec.phi_def is None

    def draws(t):
        return draw(problem, k0, k1, t, d, P, dtype)  # ``jaxbco.keys``' round streams

    def round_(i, c):
        state, acc, failed, failed_round, phi, sums, idx, drawn = c
        t = t0 + i
        if spec.prefetch:  # this round's numbers were drawn last round; draw the next round's
            (theta, u, phi_next), drawn = drawn, draws(t + 1)
        else:
            theta, u, phi_next = draws(t)
        if shared_phi:  # one sample for every seed (``Fixed``: the problem's own arrays)
            phi = problem.constraint_data.sample(None, t)
        else:  # carried per seed in the carry's shapes (a data array (P, 1) broadcast)
            phi_next = jax.tree_util.tree_map(
                lambda n, o: jnp.broadcast_to(n, o.shape).astype(o.dtype), phi_next, phi
            )
        new, acc, now_failed, rec, _ = per_run(
            hyper, state, acc, failed != 0, theta, phi, phi_next, u, None, x_star, t
        )
        failed_round = jnp.where(now_failed & (failed == 0), t, failed_round)
        if spec.stream:
            sums = (sums[0] + theta, sums[1] + _comparator.stream_stats(problem, theta)[1])
        hit = (idx < spec.n_ck) & (cps[jnp.minimum(idx, spec.n_ck - 1)] == t)

        @pl.when(hit)
        def _():
            for m, v in enumerate(rec):
                bufs_out[m, idx, g, pl.ds(s0, B)] = v
            if spec.stream:

                @pl.when(g == 0)  # the sums are per seed: one setting writes them
                def _():
                    sbuf_out[0][idx, :, pl.ds(s0, B)] = sums[0]
                    sbuf_out[1][idx, pl.ds(s0, B)] = sums[1]

        return (
            new,
            acc,
            now_failed.astype(jnp.int32),
            failed_round,
            None if shared_phi else phi_next,
            sums,
            idx + hit.astype(jnp.int32),
            drawn,
        )

    idx0 = _count_before(cps, t0, spec.n_ck)
    c = (state, acc, failed, failed_round, phi, sums, idx0, draws(t0) if spec.prefetch else ())
    n_main = spec.length // spec.unroll  # unrolled by hand (Triton's loop has no unroll)

    def rounds(k, c):
        for r in range(spec.unroll):
            c = round_(k * spec.unroll + r, c)
        return c

    c = jax.lax.fori_loop(0, n_main, rounds, c)
    if n_main * spec.unroll < spec.length:
        c = jax.lax.fori_loop(n_main * spec.unroll, spec.length, round_, c)
    state, acc, failed, failed_round, phi, sums, _, _ = c
    for ref, value in zip(
        outs, jax.tree_util.tree_leaves(state) + list(acc) + [failed, failed_round]
    ):
        _store(ref, value, "r", g, s0, B)
    rest = outs[n_r:]
    for ref, value in zip(rest, jax.tree_util.tree_leaves(phi)):
        _store(ref, value, "s", g, s0, B)
    if spec.stream:

        @pl.when(g == 0)
        def _():
            _store(rest[n_p], sums[0], "s", g, s0, B)
            _store(rest[n_p + 1], sums[1], "s", g, s0, B)


def _count_before(cps, t0, n_ck: int):
    """#{checkpoints < t0}: the next checkpoint to fill (they are sorted)."""
    return jax.lax.fori_loop(
        0, n_ck, lambda k, n: n + (cps[k] < t0).astype(jnp.int32), jnp.zeros((), jnp.int32)
    )
