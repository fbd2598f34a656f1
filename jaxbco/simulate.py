"""The engine: one compiled call = scan over rounds, vmap over seeds and hyperparameter settings.

``sweep`` runs a grid of G hyperparameter settings x S seeds for T rounds; ``run`` is one
setting and one seed.  Inside: per-seed keys fold_in(master, seed_id); each round's data,
directions and next constraint are drawn once per seed and shared by all settings (common
random numbers); metrics are accumulated in the carry and written only at the checkpoint
rounds, so memory is O(G x S x checkpoints), never O(T).  A seed whose state turns non-finite
is flagged (``failed``), frozen, and recorded as NaN from then on; other seeds are untouched.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import tqdm
from jax.sharding import PartitionSpec as P

from jaxbco import _checks, _minor, _xla
from jaxbco import comparator as _comparator
from jaxbco import devices as _devices
from jaxbco import resume as _resume
from jaxbco.algorithms import AbstractAlgorithm, RectifiedBCO, RoundInput
from jaxbco.comparator import fixed_optimum, offline_optimum
from jaxbco.hyper import Hyper
from jaxbco.keys import algorithm_key, round_keys, seed_keys
from jaxbco.problem import Problem, validate

# Seeds are padded to a multiple of this: XLA's CPU code vectorises element-wise math over the
# flattened batch and finishes a remainder with scalar code whose rounding can differ by an
# ulp; with every batch a multiple of 16 lanes each seed takes the same path whatever the
# batch size or its position, so a seed's result is bitwise batch-independent.
SEED_PAD = 16

# Trace counters (Python side effects, so they count compilations): "simulate" counts the
# whole-run and start programs, "rounds" every trace of the round scan (``_advance``), in
# ``sweep``'s chunks and inside ``make_run``'s function alike.
TRACES = {"simulate": 0, "rounds": 0}

METRICS = ("regret", "hard_violation", "soft_violation", "lam", "loss")


class _Acc(NamedTuple):
    loss: jax.Array  # sum_s f_s(x_s)
    star: jax.Array  # sum_s f_s(x*)
    hard: jax.Array  # sum_s [g_s(x_s)]_+
    soft: jax.Array  # sum_s g_s(x_s)


@dataclasses.dataclass(frozen=True)
class Result:
    """Curves at the checkpoint rounds, arrays of shape (G, S, K) (``run``: (K,)).

    regret R_t = sum_{s<=t} f_s(x_s) - f_s(x*); hard_violation sum [g_s(x_s)]_+; soft_violation
    sum g_s(x_s); lam lambda_t; loss f_t(x_t).  ``failed``: (G, S) non-finite seeds (NaN curves
    from ``failed_round`` on).  ``x_star``: (S, d) comparators; ``x_final``: (G, S, d) x_{T+1};
    ``decisions``: (G, S, K, d) the played x_t at the checkpoints when ``record_decisions=True``, else None.
    """

    rounds: np.ndarray
    regret: np.ndarray
    hard_violation: np.ndarray
    soft_violation: np.ndarray
    lam: np.ndarray
    loss: np.ndarray
    failed: np.ndarray
    failed_round: np.ndarray
    x_star: np.ndarray
    x_final: np.ndarray
    decisions: np.ndarray | None
    seed_ids: np.ndarray
    hyper: Hyper
    horizon: int
    dtype: str
    wall_s: float


def _cast(tree, dtype):
    def f(leaf):
        if eqx.is_array(leaf) and jnp.issubdtype(leaf.dtype, jnp.floating):
            return leaf.astype(dtype)
        return leaf

    return jax.tree_util.tree_map(f, tree)


def log_checkpoints(horizon: int, count: int = 100) -> np.ndarray:
    """About ``count`` log-spaced rounds in [1, T], always including 1 and T."""
    pts = np.unique(np.round(np.logspace(0, np.log10(horizon), count)).astype(np.int64))
    return np.unique(np.concatenate([[1], pts, [horizon]])).clip(1, horizon)


def _check_checkpoints(checkpoints, horizon) -> np.ndarray:
    cps = np.asarray(checkpoints)
    if cps.ndim != 1 or cps.size == 0 or not np.issubdtype(cps.dtype, np.integer):
        raise ValueError("checkpoints must be a non-empty 1-D array of integer rounds")
    if np.any(np.diff(cps) <= 0) or cps[0] < 1 or cps[-1] > horizon:
        raise ValueError(f"checkpoints must be strictly increasing rounds in [1, {horizon}]")
    return cps.astype(np.int32)


def _check_directions(directions, problem, horizon, n_seeds, dtype):
    u = np.asarray(directions, dtype=np.float64)
    d = problem.dim
    ok_shapes = [(horizon, d), (n_seeds, horizon, d)]
    if u.shape not in ok_shapes:
        raise ValueError(f"directions must have shape (T, d) = {ok_shapes[0]} or (seeds, T, d) = "
                         f"{ok_shapes[1]}; got {u.shape}")
    if not np.all(np.isfinite(u)):
        raise ValueError("directions must be finite")
    tol = 1e-5 if dtype == jnp.float32 else 1e-10
    norms = np.linalg.norm(u, axis=-1)
    if np.max(np.abs(norms - 1.0)) > tol:
        raise ValueError(f"directions must be unit vectors: | ||u_t|| - 1 | must lie in [0, {tol:g}]; "
                         f"max deviation {np.max(np.abs(norms - 1.0)):.3g}")
    if problem.domain.hull_dim < d:
        off = np.max(np.abs(u.sum(-1)))
        if off > tol * np.sqrt(d):
            raise ValueError(f"directions must lie in the simplex's hull directions (sum u = 0); "
                             f"max |sum u| = {off:.3g}")
    return jnp.asarray(u, dtype)


class _Carry(NamedTuple):
    """The scan carry: everything a chunk hands to the next one (checkpointed by ``resume``)."""

    states: object  # (G, S) algorithm states
    phi: object  # (S,) this round's constraint data phi_t
    acc: _Acc  # (G, S) running sums
    failed: jax.Array  # (G, S)
    failed_round: jax.Array  # (G, S)
    bufs: jax.Array  # (metrics, K, G, S) curves at the checkpoints
    xbuf: jax.Array  # (K or 0, G, S, d) decisions at the checkpoints
    idx: jax.Array  # () next checkpoint to fill
    sums: object  # streaming comparator: (S, d), (S,) running sums of ``stream_stats``; else ()
    sbuf: object  # the sums at the checkpoints, (K, S, d), (K, S); else ()


def _streaming(problem, comparator: bool, x_star_given) -> bool:
    """Whether x* comes from running sums (``comparator.streams``) instead of a pre-pass."""
    return comparator and x_star_given is None and _comparator.streams(problem)


def _start(problem: Problem, algorithm: AbstractAlgorithm, hyper: Hyper, master, seed_ids,
           horizon: int, n_checkpoints: int, comparator: bool, record_decisions: bool,
           x_star_given=None):
    """Comparator pre-pass and the state before round 1: (carry, x_star).  ``x_star_given``:
    a seed-independent x* computed outside (``comparator.fixed_optimum``), used as is."""
    keys = seed_keys(master, seed_ids)  # (S,)
    n_grid = jax.tree_util.tree_leaves(hyper)[0].shape[0]
    x1 = problem.initial_point()
    dtype = x1.dtype
    stream = _streaming(problem, comparator, x_star_given)
    if comparator and x_star_given is not None:
        x_star = jnp.broadcast_to(jnp.asarray(x_star_given, dtype), (keys.shape[0],) + x1.shape)
    elif comparator and not stream:
        x_star = jax.vmap(offline_optimum, (None, 0, None))(problem, keys, horizon)
    else:
        x_star = jnp.broadcast_to(x1, (keys.shape[0],) + x1.shape)

    def init_grid(h):
        return jax.vmap(lambda _: algorithm.init(problem, h, x1))(keys)

    states = jax.vmap(init_grid)(hyper)  # (G, S)
    one = jnp.asarray(1, jnp.int32)
    phis = jax.vmap(lambda k: problem.constraint_data.sample(round_keys(k, one)[2], one))(keys)
    zeros = jnp.zeros((n_grid, keys.shape[0]), dtype)
    sums = sbuf = ()
    if stream:
        theta_like = jax.eval_shape(lambda: problem.loss_data.sample(keys[0], one))
        sums = (jnp.zeros((keys.shape[0],) + theta_like.shape, dtype),
                jnp.zeros((keys.shape[0],), dtype))
        sbuf = jax.tree_util.tree_map(lambda a: jnp.zeros((n_checkpoints,) + a.shape, dtype), sums)
    carry = _Carry(
        states=states, phi=phis, acc=_Acc(zeros, zeros, zeros, zeros),
        failed=jnp.zeros((n_grid, keys.shape[0]), bool),
        failed_round=jnp.zeros((n_grid, keys.shape[0]), jnp.int32),
        bufs=jnp.full((len(METRICS), n_checkpoints, n_grid, keys.shape[0]), jnp.nan, dtype),
        xbuf=jnp.zeros((n_checkpoints if record_decisions else 0, n_grid, keys.shape[0],
                        x1.shape[0]), dtype),
        idx=jnp.zeros((), jnp.int32), sums=sums, sbuf=sbuf)
    return carry, x_star


def _advance(problem: Problem, algorithm: AbstractAlgorithm, hyper: Hyper, master, seed_ids,
             x_star, carry: _Carry, t0, length: int, checkpoints, directions):
    """Rounds t0 .. t0 + length - 1 as one ``lax.scan``.

    ``directions``: None, or the replayed u_t of these rounds, (length, d) or (length, S, d).
    Seeds-minor (``jaxbco._minor``) where the problem allows, else ``vmap`` over grid and seeds."""
    TRACES["rounds"] += 1  # at trace time only
    keys = seed_keys(master, seed_ids)
    dtype = x_star.dtype
    d = x_star.shape[-1]
    n_ck = checkpoints.shape[0]
    record_decisions = carry.xbuf.shape[0] > 0
    stream = carry.sums != ()
    minor = _minor.applies(problem, algorithm, directions)
    nb = _minor.BATCH if minor else 0  # trailing batch axes the per-run code sees
    prob = _minor.expand(problem) if minor else problem

    def per_run(h, state, acc, failed, theta, phi, phi_next, u, ka, xs, t):
        inp = RoundInput(t, theta, phi, phi_next, u, ka)
        x = algorithm.play(state, prob, h, inp)
        f = prob.loss.value(x, theta)
        g = prob.constraint.value(x, phi)
        f_star = jnp.zeros_like(f) if stream else prob.loss.value(xs, theta)
        lam = algorithm.multiplier(state)
        new = algorithm.step(state, prob, h, inp)
        finite = jnp.isfinite(f) & jnp.isfinite(g)
        for leaf in jax.tree_util.tree_leaves(new):
            finite = finite & _minor.all_finite(leaf, nb)
        now_failed = failed | ~finite
        new = jax.tree_util.tree_map(lambda a, b: jnp.where(now_failed, a, b), state, new)
        acc_new = _Acc(acc.loss + f, acc.star + f_star, acc.hard + jnp.maximum(g, 0.0), acc.soft + g)
        acc_new = jax.tree_util.tree_map(lambda a, b: jnp.where(now_failed, a, b), acc, acc_new)
        rec = jnp.stack([acc_new.loss - acc_new.star, acc_new.hard, acc_new.soft, lam, f])
        rec = jnp.where(now_failed, jnp.nan, rec)
        return new, acc_new, now_failed, rec, x

    n_grid, n_seeds = carry.failed.shape
    if minor:
        # Blocks over the R = G * S runs (run g * S + s): vectors (d, R), per-run scalars and
        # hyperparameters (R,); a seed's data is repeated over the grid (common random numbers).
        runs = lambda a: jnp.tile(a, (1,) * (a.ndim - 1) + (n_grid,))  # (..., S) -> (..., R)
        hyper_b = jax.tree_util.tree_map(lambda v: jnp.repeat(v, n_seeds), hyper)
        phi_fixed = _minor.expand(problem.constraint_data.value)
        xs_block = runs(jnp.moveaxis(x_star, 0, -1))  # used only without a streaming x*

        def over_runs(states, acc, failed, theta, phi, phi_next, u, ka, xs, t):
            states, acc, now_failed, rec, x = per_run(
                hyper_b, states, acc, failed, jax.tree_util.tree_map(runs, theta), phi_fixed,
                phi_fixed, runs(u), ka, xs_block, t)
            if record_decisions:
                x = jnp.moveaxis(x, 0, -1).reshape(n_grid, n_seeds, -1)
            return states, acc, now_failed, rec, x
    else:
        over_seeds = jax.vmap(per_run, (None, 0, 0, 0, 0, 0, 0, 0, 0, 0, None))
        over_grid = jax.vmap(over_seeds, (0, 0, 0, 0, None, None, None, None, None, None, None))

        def over_runs(states, acc, failed, theta, phi, phi_next, u, ka, xs, t):
            states, acc, now_failed, rec, x = over_grid(hyper, states, acc, failed, theta, phi,
                                                        phi_next, u, ka, xs, t)
            return states, acc, now_failed, jnp.moveaxis(rec, -1, 0), x

    words = jax.random.key_data(keys)
    k0, k1 = words[:, 0], words[:, 1]

    def round_(c: _Carry, t, u_replay, drawn=None, active=True) -> _Carry:
        t_next = t + 1
        if minor:  # drawn for a block of rounds by ``_minor.draw_rounds``
            theta, u = drawn
            phi_next, ka = c.phi, keys
        else:
            kl, kd, _ = jax.vmap(round_keys, (0, None))(keys, t)
            _, _, kc = jax.vmap(round_keys, (0, None))(keys, t_next)
            ka = jax.vmap(algorithm_key, (0, None))(keys, t)
            theta = jax.vmap(problem.loss_data.sample, (0, None))(kl, t)
            phi_next = jax.vmap(problem.constraint_data.sample, (0, None))(kc, t_next)
            if u_replay is None:
                u = jax.vmap(lambda k: problem.domain.sample_direction(k, dtype))(kd)
            else:
                u = jnp.broadcast_to(u_replay, (keys.shape[0], d))
        states, acc, now_failed, rec, xs_now = over_runs(c.states, c.acc, c.failed, theta,
                                                         c.phi, phi_next, u, ka, x_star, t)
        failed_round = jnp.where(now_failed & ~c.failed, t, c.failed_round)
        j = jnp.minimum(c.idx, n_ck - 1)
        hit = (c.idx < n_ck) & (checkpoints[j] == t) & active
        bufs = c.bufs.at[:, j].set(jnp.where(hit, rec, c.bufs[:, j]))
        xbuf = c.xbuf
        if record_decisions:
            xbuf = xbuf.at[j].set(jnp.where(hit, xs_now, xbuf[j]))
        sums, sbuf = c.sums, c.sbuf
        if stream:
            stats = (_comparator.stream_stats(problem, theta) if minor else
                     jax.vmap(lambda th: _comparator.stream_stats(problem, th))(theta))
            sums = jax.tree_util.tree_map(jnp.add, sums, stats)
            sbuf = jax.tree_util.tree_map(lambda b, v: b.at[j].set(jnp.where(hit, v, b[j])), sbuf, sums)
        return _Carry(states, phi_next, acc, now_failed, failed_round, bufs, xbuf, c.idx + hit,
                      sums, sbuf)

    def body(c, xs):
        t, u_replay = xs
        return round_(c, t, u_replay), None

    ts = jnp.asarray(t0, jnp.int32) + jnp.arange(length, dtype=jnp.int32)
    if not minor:
        carry, _ = jax.lax.scan(body, carry, (ts, directions), unroll=_xla.scan_unroll())
        return carry

    # Seeds-minor inside the chunk only (one transpose each way per chunk).  The draws come
    # for blocks of ``BLOCK`` rounds aligned to round 1 (the same streams as ``jaxbco.keys``,
    # bitwise); a block's rounds outside this chunk run but change nothing.  So every round
    # of every chunking runs the same compiled block body: bitwise the same results.
    B = _minor.BLOCK
    t_end = ts[0] + length  # first round after the chunk
    first = ((ts[0] - 1) // B) * B + 1

    def block_body(c, k):
        t_block = first + k * B + jnp.arange(B, dtype=jnp.int32)
        drawn = _minor.draw_rounds(problem, k0, k1, t_block, dtype)

        def one(c, xs):
            t = xs[0]
            active = (t >= ts[0]) & (t < t_end)
            new = round_(c, t, None, xs[1:], active)
            keep = lambda a, b: jnp.where(active, a, b)
            return new._replace(states=jax.tree_util.tree_map(keep, new.states, c.states),
                                acc=jax.tree_util.tree_map(keep, new.acc, c.acc),
                                failed=keep(new.failed, c.failed),
                                failed_round=keep(new.failed_round, c.failed_round),
                                sums=jax.tree_util.tree_map(keep, new.sums, c.sums)), None

        c, _ = jax.lax.scan(one, c, (t_block,) + drawn, unroll=_xla.scan_unroll())
        return c, None

    n_blocks = -(-(length + B - 1) // B)  # blocks enough for any alignment of t0
    carry = _minor.carry_to_runs(carry)
    carry, _ = jax.lax.scan(block_body, carry, jnp.arange(n_blocks, dtype=jnp.int32))
    return _minor.carry_from_runs(carry, n_grid, n_seeds)


def _finish(problem: Problem, algorithm: AbstractAlgorithm, carry: _Carry, x_star, checkpoints,
            horizon: int):
    """(bufs, x_star, x_final): x_{T+1} of every run, (G, S, d); with a streaming comparator
    x* from the sums over all T rounds, and sum_{s<=t} f_s(x*) taken off the regret curves."""
    x_final = jax.vmap(jax.vmap(algorithm.decision))(carry.states)
    bufs = carry.bufs
    if carry.sums != ():
        x_star = jax.vmap(lambda s: _comparator.stream_optimum(problem, s, horizon))(carry.sums[0])
        tk = checkpoints.astype(x_star.dtype)[:, None]
        # On seeds-minor blocks, (d, K, S): every seed takes the same vector path, whatever S.
        x_block = jnp.moveaxis(x_star, -1, 0)[:, None, :]
        s_theta = jnp.moveaxis(carry.sbuf[0], -1, 0)
        star = _comparator.stream_star(_minor.expand(problem), x_block, (s_theta, carry.sbuf[1]), tk)
        bufs = bufs.at[0].add(-star[:, None, :])
    return bufs, x_star, x_final


class _Outcome(NamedTuple):
    """What a run hands back, on the device: curves (metrics, K, G, S), failure flags and
    rounds (G, S), x* (S, d), x_{T+1} (G, S, d), decisions at the checkpoints (K or 0, G, S, d)."""

    bufs: jax.Array
    failed: jax.Array
    failed_round: jax.Array
    x_star: jax.Array
    x_final: jax.Array
    xbuf: jax.Array


def _grid(hyper, dtype=None):
    """Hyperparameters with a leading grid axis of one common length G (scalars broadcast)."""
    cast = (lambda v: jnp.asarray(v, dtype)) if dtype is not None else (lambda v: v)
    hyper = jax.tree_util.tree_map(lambda v: jnp.atleast_1d(cast(v)), hyper)
    n_grid = max(jnp.shape(v)[0] for v in jax.tree_util.tree_leaves(hyper))
    return jax.tree_util.tree_map(lambda v: jnp.broadcast_to(v, (n_grid,)), hyper)


@eqx.filter_jit
def _simulate(problem: Problem, algorithm: AbstractAlgorithm, hyper: Hyper, master, seed_ids,
              checkpoints, horizon: int, directions, comparator: bool, record_decisions: bool,
              x_star_given=None):
    """The whole run in one traced function (``make_run``: differentiable, transformable)."""
    TRACES["simulate"] += 1  # Python side effect: runs at trace time only
    carry, x_star = _start(problem, algorithm, hyper, master, seed_ids, horizon,
                           checkpoints.shape[0], comparator, record_decisions, x_star_given)
    if directions is not None and directions.ndim == 3:
        directions = jnp.swapaxes(directions, 0, 1)  # (S, T, d) -> (T, S, d)
    carry = _advance(problem, algorithm, hyper, master, seed_ids, x_star, carry, 1, horizon,
                     checkpoints, directions)
    bufs, x_star, x_final = _finish(problem, algorithm, carry, x_star, checkpoints, horizon)
    return _Outcome(bufs, carry.failed, carry.failed_round, x_star, x_final, carry.xbuf)


_SPEC_S = P(_devices.SEEDS)
_SPEC_GS = P(None, _devices.SEEDS)
# Where the seed axis sits in each part of the carry (shard_map specs, prefixes of the carry).
_CARRY_SPECS = _Carry(states=_SPEC_GS, phi=_SPEC_S, acc=_SPEC_GS, failed=_SPEC_GS,
                      failed_round=_SPEC_GS, bufs=P(None, None, None, _devices.SEEDS),
                      xbuf=P(None, None, _devices.SEEDS), idx=P(), sums=_SPEC_S, sbuf=_SPEC_GS)


def _start_sharded(mesh, problem, algorithm, hyper, master, seed_ids, horizon, n_checkpoints,
                   comparator, record_decisions, x_star_given=None):
    TRACES["simulate"] += 1
    return _start_on(mesh, problem, algorithm, hyper, master, seed_ids, horizon, n_checkpoints,
                     comparator, record_decisions, x_star_given)


def _start_on(mesh, problem, algorithm, hyper, master, seed_ids, horizon, n_checkpoints,
              comparator, record_decisions, x_star_given=None):
    fn = _devices.sharded(_start, mesh, (P(), P(), P(), P(), _SPEC_S), (_CARRY_SPECS, _SPEC_S))
    return fn(problem, algorithm, hyper, master, seed_ids, horizon, n_checkpoints, comparator,
              record_decisions, x_star_given)


def _advance_fixed(fixed, carry, t0, directions):
    mesh, problem, algorithm, hyper, master, seed_ids, x_star, checkpoints, length = fixed
    dir_spec = P(None, _devices.SEEDS) if directions is not None and directions.ndim == 3 else P()
    fn = _devices.sharded(
        lambda p, a, h, m, ids, xs, c, t, ck, u: _advance(p, a, h, m, ids, xs, c, t, length, ck, u),
        mesh, (P(), P(), P(), P(), _SPEC_S, _SPEC_S, _CARRY_SPECS, P(), P(), dir_spec), _CARRY_SPECS)
    return fn(problem, algorithm, hyper, master, seed_ids, x_star, carry, t0, checkpoints, directions)


def _finish_sharded(mesh, problem, algorithm, carry, x_star, checkpoints, horizon):
    fn = _devices.sharded(lambda p, a, c, xs, ck: _finish(p, a, c, xs, ck, horizon), mesh,
                          (P(), P(), _CARRY_SPECS, _SPEC_S, P()),
                          (P(None, None, None, _devices.SEEDS), _SPEC_S, _SPEC_GS))
    return fn(problem, algorithm, carry, x_star, checkpoints)


@functools.lru_cache(maxsize=None)
def _jitted(options: tuple):
    """(start, advance, finish) compiled with XLA options (see ``jaxbco._xla``).
    The carry is donated: a chunk overwrites the previous chunk's buffers in place."""
    kw = {"compiler_options": dict(options)} if options else {}
    return (eqx.filter_jit(_start_sharded, **kw),
            eqx.filter_jit(_advance_fixed, donate="all-except-first", **kw),
            eqx.filter_jit(_finish_sharded, **kw))


def _chunk_length(chunk, horizon: int, want_chunks: bool) -> int:
    """The user's chunk, else all T, else (progress/resume) about T/100 rounds: a divisor of T
    in [T/200, T/50] when there is one (no shorter last chunk to compile), else ceil(T/100)."""
    if chunk is not None:
        return min(_checks.check_positive_int("chunk", chunk), horizon)
    if not want_chunks or horizon < 100:
        return horizon
    target = horizon / 100
    divisors = [n for n in range(max(1, horizon // 200), horizon // 50 + 1) if horizon % n == 0]
    if divisors:
        return min(divisors, key=lambda n: abs(n - target))
    return -(-horizon // 100)


def _check_seed_ids(seeds) -> np.ndarray:
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        return np.arange(_checks.check_positive_int("seeds", seeds))
    seed_ids = np.asarray(seeds)
    if seed_ids.ndim != 1 or seed_ids.size < 1 or not np.issubdtype(seed_ids.dtype, np.integer):
        raise ValueError("seeds must be an integer >= 1 or a non-empty 1-D array of integer ids")
    if np.any(seed_ids < 0) or np.any(seed_ids >= 2**32):
        raise ValueError("seed ids must lie in [0, 2^32)")
    return seed_ids


def sweep(problem: Problem, horizon: int, hyper: Hyper | None = None, *, seeds=1, key=0,
          algorithm: AbstractAlgorithm | None = None, checkpoints=None, dtype="float32",
          directions=None, comparator: bool = True, record_decisions: bool = False,
          chunk: int | None = None, progress: bool | None = None, resume: str | None = None,
          devices=None) -> Result:
    """Run every hyperparameter setting in ``hyper`` (leading grid axis, or none) on every seed.

    seeds: a count S (ids 0..S-1) or an array of seed ids; key: an int or a typed
    ``jax.random.key`` (the master key); checkpoints: rounds to record (default: about 100
    log-spaced); directions: replayed u_t, shape (T, d) or (S, T, d); comparator=False skips
    x* (regret is then measured against x_1); record_decisions keeps x_t at the checkpoints.

    Long runs: ``chunk`` rounds per compiled call (default: all T, or about T/100 when
    ``progress`` or ``resume`` asks for chunks), the carry donated from chunk to chunk;
    ``progress`` shows a tqdm bar (rounds/s, ETA; default: only on a terminal for runs of
    over 1e8 seed-rounds); ``resume``: a state file written atomically after every chunk and
    continued from if it exists (same configuration and versions, else ValueError).  Any
    chunking gives bitwise the same result.  ``devices``: devices to shard the seeds over
    (default: all local devices); bitwise the same as one device.  A new hyperparameter value
    or problem data of the same shapes never recompiles.
    """
    dtype = _checks.check_dtype(dtype)
    horizon = _checks.check_positive_int("horizon T", horizon)
    seed_ids = _check_seed_ids(seeds)
    master = jax.random.key(key) if isinstance(key, (int, np.integer)) else key
    validate(problem, horizon)
    algorithm = RectifiedBCO() if algorithm is None else algorithm
    hyper = algorithm.default_hyper(problem, horizon) if hyper is None else hyper
    algorithm.check_hyper(hyper, problem)
    hyper = _grid(hyper)
    n_grid = jax.tree_util.tree_leaves(hyper)[0].shape[0]
    checkpoints = log_checkpoints(horizon) if checkpoints is None else checkpoints
    checkpoints = _check_checkpoints(checkpoints, horizon)
    if directions is not None:
        directions = _check_directions(directions, problem, horizon, seed_ids.size, dtype)
    problem_c, hyper_c, algorithm_c = _cast((problem, hyper, algorithm), dtype)
    given = fixed_optimum(problem, horizon) if comparator else None
    _start_jit, _advance_jit, _finish_jit = _jitted(_xla.options())
    mesh = _devices.seed_mesh(devices)
    n_seeds = seed_ids.size
    lanes = SEED_PAD * _devices.n_devices(mesh)
    padded = np.concatenate([seed_ids, np.full((-n_seeds) % lanes, seed_ids[-1])])
    if directions is not None and directions.ndim == 3:
        directions = jnp.concatenate(
            [directions, jnp.broadcast_to(directions[-1:], (padded.size - n_seeds,) + directions.shape[1:])])
        directions = jnp.swapaxes(directions, 0, 1)  # (T, S, d)
    work = n_grid * padded.size * horizon
    if progress is None:
        progress = sys.stderr.isatty() and work > 1e8
    length = _chunk_length(chunk, horizon, bool(progress) or resume is not None)
    ids = _devices.put(jnp.asarray(padded, jnp.uint32), mesh, _SPEC_S)
    cps = jnp.asarray(checkpoints)
    start_args = (mesh, problem_c, algorithm_c, hyper_c, master, ids, horizon, cps.shape[0],
                  comparator, record_decisions, given)
    config_hash = None
    begin = time.perf_counter()
    state = None
    if resume is not None:
        config_hash = _resume.fingerprint((problem_c, algorithm_c, hyper_c, master, padded, horizon,
                                           checkpoints, str(dtype), comparator, record_decisions,
                                           directions))
        if os.path.exists(resume):
            like = jax.eval_shape(lambda: _start_on(*start_args)[0])  # shapes only, no compile
            state = _resume.load(resume, like, config_hash)
    t_done = 0 if state is None else state[2] - 1
    bar = tqdm.tqdm(total=horizon, initial=t_done, unit="round", unit_scale=True,
                    disable=not progress, dynamic_ncols=True, leave=False,
                    desc=f"{n_grid * n_seeds} runs")
    if state is None:
        if comparator:
            bar.set_description(f"{n_seeds} comparators x* over {horizon} rounds")
        carry, x_star = _start_jit(*start_args)
        t_next = 1
        if resume is not None:  # keep the comparator pass (minutes at 1e4 seeds x 1e5 rounds)
            _resume.save(resume, carry, x_star, t_next, config_hash)
        if progress:
            x_star.block_until_ready()
            bar.set_description(f"{n_grid * n_seeds} runs")
    else:
        leaves, x_star, t_next = state
        carry = jax.tree_util.tree_map(
            lambda spec, part: jax.tree_util.tree_map(lambda a: _devices.put(jnp.asarray(a), mesh, spec), part),
            _CARRY_SPECS, leaves, is_leaf=lambda x: isinstance(x, P))
        x_star = _devices.put(jnp.asarray(x_star), mesh, _SPEC_S)
    fixed = (mesh, problem_c, algorithm_c, hyper_c, master, ids, x_star, cps)
    with bar:
        while t_next <= horizon:
            # A shorter last chunk (T mod chunk rounds) compiles once more: only shapes are static.
            done = min(length, horizon - t_next + 1)
            u = None if directions is None else directions[t_next - 1:t_next - 1 + done]
            carry = _advance_jit(fixed + (done,), carry, jnp.asarray(t_next, jnp.int32), u)
            t_next += done
            if resume is not None:
                _resume.save(resume, carry, x_star, t_next, config_hash)
            elif progress:
                carry.idx.block_until_ready()
            bar.update(done)
    bufs, x_star, x_final = _finish_jit(mesh, problem_c, algorithm_c, carry, x_star, cps, horizon)
    out = jax.block_until_ready(_Outcome(bufs, carry.failed, carry.failed_round, x_star, x_final,
                                         carry.xbuf))
    wall = time.perf_counter() - begin
    bufs, failed, failed_round, x_star, x_final, xbuf = jax.device_get(out)
    bufs, xbuf = bufs[..., :n_seeds], xbuf[:, :, :n_seeds]
    failed, failed_round = failed[:, :n_seeds], failed_round[:, :n_seeds]
    x_star, x_final = x_star[:n_seeds], x_final[:, :n_seeds]
    decisions = np.moveaxis(np.asarray(xbuf), 0, 2) if record_decisions else None
    curves = {m: np.asarray(bufs[i]).transpose(1, 2, 0) for i, m in enumerate(METRICS)}
    return Result(rounds=checkpoints, failed=np.asarray(failed),
                  failed_round=np.asarray(failed_round), x_star=np.asarray(x_star),
                  x_final=np.asarray(x_final), decisions=decisions, seed_ids=seed_ids, hyper=hyper,
                  horizon=horizon, dtype=str(dtype), wall_s=wall, **curves)


def run(problem: Problem, horizon: int, hyper: Hyper | None = None, *, seed: int = 0, key=0,
        **kwargs) -> Result:
    """One setting, one seed: curves of shape (K,).  Same keyword options as ``sweep``."""
    res = sweep(problem, horizon, hyper, seeds=np.asarray([seed]), key=key, **kwargs)
    squeeze = {m: getattr(res, m)[0, 0] for m in METRICS}
    decisions = None if res.decisions is None else res.decisions[0, 0]
    return dataclasses.replace(res, decisions=decisions, failed=res.failed[0, 0], failed_round=res.failed_round[0, 0],
                               x_star=res.x_star[0], x_final=res.x_final[0, 0], **squeeze)


def make_run(problem: Problem, horizon: int, *, algorithm: AbstractAlgorithm | None = None,
             checkpoints=None, dtype="float32", comparator: bool = True, seed_pad: bool = True):
    """A pure JAX function ``fn(hyper, master_key, seed_ids) -> dict of curves``.

    For transformations: ``jax.grad``/``jax.jacfwd``/``jax.vmap`` over the hyperparameters
    (a ``Hyper`` without a grid axis is given one).  Curves have shape (G, S, K).  Inputs are
    validated once here (problem, horizon, checkpoints); hyperparameters are not (they may be
    tracers).  ``seed_pad`` keeps batch-independence (see ``SEED_PAD``).  On the CPU, compile it
    as ``jax.jit(fn, compiler_options=fn.compiler_options)`` (see ``jaxbco._xla``: up to 6x
    faster for solvers with inner loops, and bitwise batch-independent at large batches).
    """
    dtype = _checks.check_dtype(dtype)
    horizon = _checks.check_positive_int("horizon T", horizon)
    validate(problem, horizon)
    algorithm = RectifiedBCO() if algorithm is None else algorithm
    checkpoints = _check_checkpoints(log_checkpoints(horizon) if checkpoints is None else checkpoints,
                                     horizon)
    problem_c, algorithm_c = _cast((problem, algorithm), dtype)
    cps = jnp.asarray(checkpoints)
    given = fixed_optimum(problem, horizon) if comparator else None

    def fn(hyper: Hyper, master, seed_ids):
        hyper = _grid(hyper, dtype)
        ids = jnp.asarray(seed_ids, jnp.uint32)
        n = ids.shape[0]
        if seed_pad and n % SEED_PAD:
            ids = jnp.concatenate([ids, jnp.full(((-n) % SEED_PAD,), ids[-1], jnp.uint32)])
        res = _simulate(problem_c, algorithm_c, hyper, master, ids, cps, horizon, None,
                        comparator, False, given)
        out = {m: jnp.moveaxis(res.bufs[i], 0, -1)[:, :n] for i, m in enumerate(METRICS)}
        out.update(failed=res.failed[:, :n], x_star=res.x_star[:n], x_final=res.x_final[:, :n])
        return out

    fn.compiler_options = dict(_xla.options())
    return fn
