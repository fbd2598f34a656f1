"""The round loop as one Pallas kernel: each program instance owns a block of B seeds of one
hyperparameter setting and runs rounds t0 .. t0 + L - 1 with its state in registers.

Per round it does what ``engine.advance`` does (the same code: ``engine._one_run``, so
``RectifiedBCO.play``/``step``, the loss, the constraint and the ``Dual`` solver), on
seeds-minor blocks (``jaxbco._minor``):

    vectors (P, B),  per-run scalars (B,),  the problem's arrays (P, 1),  hyperparameters (),

with the coordinates padded from d to P = the next power of two (``padding.py``): padded rows
of x, theta, u and the problem's vectors are zero and the padded sets act on the d real
coordinates, so every inner product, norm and projection is the unpadded one.  The random
numbers are the scan engine's own streams (``jaxbco._random.RoundKey``), drawn in the kernel:
float32, one Threefry-2x32 hash of the counter (t, j) per row j under the seed key, its two
words theta_t's and u_t's bits; the rows >= d dropped, so row j < d is bitwise the engine's
number j and a seed's draws depend only on its key.  Curves are written at the checkpoints into buffers aliased to the carry's.
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from jaxbco import _normal, _random, engine  # engine: the round (``engine._one_run``)
from jaxbco import comparator as _comparator
from jaxbco import sequences as Seq
from jaxbco._threefry import threefry2x32_unrolled
from jaxbco.sets import Simplex


class Config(NamedTuple):
    """Static launch choices: seeds per program instance (a power of two; every batch is
    padded to a multiple, so a seed's numbers never depend on its batch), warps per program,
    ``interpret`` (Pallas' interpreter: the kernel's semantics on any backend, for tests),
    ``prefetch`` (draw round t + 1's numbers during round t) and ``unroll`` (rounds per loop
    iteration).  Defaults: the fastest measured at 1e4 seeds x 1e4 rounds on an H100 with the
    counter-based streams (16 x 1: 43.5 ms; 32 x 4: 50.3, 64 x 4: 55.2, 128 x 4: 69.7;
    benchmarks/NOTES.md, session 17)."""

    block: int = 16
    warps: int = 1
    interpret: bool = False
    prefetch: bool = False
    unroll: int = 1


# --- the random streams, seeds-minor, in the kernel -------------------------------------------

def _hash(k0, k1, t, c1):
    """H_k(t, c1) for seed key words (B,) and counters c1 (P, 1) or scalar: (P, B) or (B,)."""
    t = jnp.asarray(t).astype(jnp.uint32)
    k0, k1 = (k0[None, :], k1[None, :]) if jnp.ndim(c1) else (k0, k1)
    return threefry2x32_unrolled(k0, k1, t + jnp.zeros_like(c1), c1 + jnp.zeros_like(k0))


def _join(x0, x1):
    return (x0.astype(jnp.uint64) << 32) | x1.astype(jnp.uint64)


def round_bits(k0, k1, t, P: int, dtype):
    """(P, B) bits of round t's streams 0 and 1 (theta_t, u_t; ``jaxbco._random.RoundKey``):
    float32, the two words of one hash of (t, j) in row j; float64, one hash per number."""
    j = jax.lax.broadcasted_iota(jnp.uint32, (P, 1), 0)
    if jnp.dtype(dtype).itemsize == 4:
        return _hash(k0, k1, t, j)
    return tuple(_join(*_hash(k0, k1, t, j | jnp.uint32(2**31 + (s << 27)))) for s in (0, 1))


def _scalar_uniform(k0, k1, t, stream: int, dtype):
    """Number 0 of round t's ``stream`` as a uniform on [0, 1), (B,)."""
    if jnp.dtype(dtype).itemsize == 4:
        x0, x1 = _hash(k0, k1, t, jnp.uint32((stream >> 1) << 28))
        bits = x0 if stream % 2 == 0 else x1
    else:
        bits = _join(*_hash(k0, k1, t, jnp.uint32(2**31 + (stream << 27))))
    return _random.uniform_from_bits(bits, dtype)


def _rows_below(d: int, P: int):
    return jax.lax.broadcasted_iota(jnp.int32, (P, 1), 0) < d


def _normals(bits, d: int, P: int, dtype):
    """(P, B): ``jaxbco._normal.normal``'s values of the stream's bits in rows < d, zeros below."""
    z = _normal.normal_from_bits(bits, dtype)
    return jnp.where(_rows_below(d, P), z, 0.0)


def sample_loss(sequence, bits, d: int, P: int, B: int, dtype):
    """theta_t of every seed, (P, B) (``IIDNormal``, ``IIDUniform`` or ``Fixed``), from stream
    0's bits (P, B)."""
    if isinstance(sequence, Seq.Fixed):
        return jnp.broadcast_to(sequence.value, (P, B))
    if isinstance(sequence, Seq.IIDNormal):
        return sequence.mean + sequence.std * _normals(bits, d, P, dtype)
    u = _random.uniform_from_bits(bits, dtype)
    return jnp.where(_rows_below(d, P), sequence.low + (sequence.high - sequence.low) * u, 0.0)


def direction(domain, bits, d: int, P: int, dtype):
    """u_t of every seed, (P, B), from stream 1's bits: the set's ``sample_direction``, a
    normalised normal vector (``L2Ball``, ``Box``) or its projection onto the hull's
    directions (``Simplex``)."""
    z = _normals(bits, d, P, dtype)
    if isinstance(domain, Simplex):
        z = domain.tangent(z)
    return z / jnp.sqrt(jnp.sum(z * z, axis=0))


def sample_slack(sequence, k0, k1, t, dtype):
    """s_t of ``Slackened`` constraint data, (B,): stream 2 of round t."""
    return sequence.low + (sequence.high - sequence.low) * _scalar_uniform(k0, k1, t, 2, dtype)


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
    slack: bool  # Slackened constraint data: s_t carried per seed
    prefetch: bool  # ``Config.prefetch``
    unroll: int  # ``Config.unroll``


def input_kinds(spec: Spec) -> tuple:
    """How each kernel input is blocked, in the order ``body`` reads them."""
    return (("c",) * spec.problem_def[0].num_leaves + ("h",) * spec.hyper_def.num_leaves
            + ("c", "k", "s", "s") + ("s",) * (not spec.stream)
            + ("r",) * (spec.state_def.num_leaves + 6) + ("s",) * spec.slack
            + ("s", "s") * spec.stream + ("a",) + ("a", "a") * spec.stream)


def body(spec: Spec, algorithm, *refs):
    """The kernel: ``refs`` are the inputs (``input_kinds``) then the outputs: the carry's
    per-run leaves, the slack and the sums (stored at the end), the curve buffers (aliased
    to their inputs, written at the checkpoints)."""
    kinds = input_kinds(spec)
    ins, outs = refs[:len(kinds)], refs[len(kinds):]
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
    slack = next(it) if spec.slack else None
    sums = tuple(take(2)) if spec.stream else ()
    bufs, sbuf = next(it), tuple(take(2)) if spec.stream else ()
    n_r = spec.state_def.num_leaves + 6
    bufs_out, sbuf_out = outs[n_r + spec.slack + 2 * spec.stream], outs[n_r + spec.slack + 2 * spec.stream + 1:]
    del bufs, sbuf  # aliased: written through the outputs
    dtype = acc.loss.dtype
    per_run = engine._one_run(problem, algorithm, spec.stream, 1, stack=False)

    def phi_of(s):
        return problem.constraint_data.value if s is None else (problem.constraint_data.base, s)

    def draws(t):
        """theta_t, u_t and (Slackened data) s_{t+1}: streams 0 and 1 of round t, 2 of t + 1."""
        b_theta, b_u = round_bits(k0, k1, t, P, dtype)  # ``jaxbco.keys``' round streams
        theta = sample_loss(problem.loss_data, b_theta, d, P, B, dtype)
        u = direction(problem.domain, b_u, d, P, dtype)  # Alg. 1 line 3
        if not spec.slack:
            return theta, u, None
        return theta, u, sample_slack(problem.constraint_data, k0, k1, t + 1, dtype)

    def round_(i, c):
        state, acc, failed, failed_round, slack, sums, idx, drawn = c
        t = t0 + i
        if spec.prefetch:  # this round's numbers were drawn last round; draw the next round's
            (theta, u, slack_next), drawn = drawn, draws(t + 1)
        else:
            theta, u, slack_next = draws(t)
        slack_next = slack_next if spec.slack else slack
        new, acc, now_failed, rec, _ = per_run(hyper, state, acc, failed != 0, theta, phi_of(slack),
                                               phi_of(slack_next), u, None, x_star, t)
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

        return (new, acc, now_failed.astype(jnp.int32), failed_round, slack_next, sums,
                idx + hit.astype(jnp.int32), drawn)

    idx0 = _count_before(cps, t0, spec.n_ck)
    c = (state, acc, failed, failed_round, slack, sums, idx0, draws(t0) if spec.prefetch else ())
    n_main = spec.length // spec.unroll  # unrolled by hand (Triton's loop has no unroll)

    def rounds(k, c):
        for r in range(spec.unroll):
            c = round_(k * spec.unroll + r, c)
        return c

    c = jax.lax.fori_loop(0, n_main, rounds, c)
    if n_main * spec.unroll < spec.length:
        c = jax.lax.fori_loop(n_main * spec.unroll, spec.length, round_, c)
    state, acc, failed, failed_round, slack, sums, _, _ = c
    for ref, value in zip(outs, jax.tree_util.tree_leaves(state) + list(acc) + [failed, failed_round]):
        _store(ref, value, "r", g, s0, B)
    rest = outs[n_r:]
    if spec.slack:
        _store(rest[0], slack, "s", g, s0, B)
    if spec.stream:
        @pl.when(g == 0)
        def _():
            _store(rest[spec.slack], sums[0], "s", g, s0, B)
            _store(rest[spec.slack + 1], sums[1], "s", g, s0, B)


def _count_before(cps, t0, n_ck: int):
    """#{checkpoints < t0}: the next checkpoint to fill (they are sorted)."""
    return jax.lax.fori_loop(0, n_ck, lambda k, n: n + (cps[k] < t0).astype(jnp.int32),
                             jnp.zeros((), jnp.int32))
