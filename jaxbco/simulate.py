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
import time
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import _checks
from jaxbco.algorithms import AbstractAlgorithm, RectifiedBCO, RoundInput
from jaxbco.comparator import offline_optimum
from jaxbco.hyper import Hyper
from jaxbco.keys import algorithm_key, round_keys, seed_keys
from jaxbco.problem import Problem, validate

# Seeds are padded to a multiple of this: XLA's CPU code vectorises element-wise math over the
# flattened batch and finishes a remainder with scalar code whose rounding can differ by an
# ulp; with every batch a multiple of 16 lanes each seed takes the same path whatever the
# batch size or its position, so a seed's result is bitwise batch-independent.
SEED_PAD = 16

TRACES = {"simulate": 0}  # incremented only when _simulate is traced (i.e. compiled)

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


@eqx.filter_jit
def _simulate(problem: Problem, algorithm: AbstractAlgorithm, hyper: Hyper, master, seed_ids,
              checkpoints, horizon: int, directions, comparator: bool, record_decisions: bool):
    TRACES["simulate"] += 1  # Python side effect: runs at trace time only
    keys = seed_keys(master, seed_ids)  # (S,)
    n_grid = jax.tree_util.tree_leaves(hyper)[0].shape[0]
    x1 = problem.initial_point()
    dtype = x1.dtype
    if comparator:
        x_star = jax.vmap(offline_optimum, (None, 0, None))(problem, keys, horizon)
    else:
        x_star = jnp.broadcast_to(x1, (keys.shape[0],) + x1.shape)

    def init_grid(h):
        return jax.vmap(lambda _: algorithm.init(problem, h, x1))(keys)

    states = jax.vmap(init_grid)(hyper)  # (G, S)
    one = jnp.asarray(1, jnp.int32)
    phis = jax.vmap(lambda k: problem.constraint_data.sample(round_keys(k, one)[2], one))(keys)
    zeros = jnp.zeros((n_grid, keys.shape[0]), dtype)
    acc = _Acc(zeros, zeros, zeros, zeros)
    failed = jnp.zeros((n_grid, keys.shape[0]), bool)
    failed_round = jnp.zeros((n_grid, keys.shape[0]), jnp.int32)
    n_ck = checkpoints.shape[0]
    bufs = jnp.full((len(METRICS), n_ck, n_grid, keys.shape[0]), jnp.nan, dtype)
    xbuf = jnp.zeros((n_ck if record_decisions else 0, n_grid, keys.shape[0], x1.shape[0]), dtype)

    def per_run(h, state, acc, failed, theta, phi, phi_next, u, ka, xs, t):
        inp = RoundInput(t, theta, phi, phi_next, u, ka)
        x = algorithm.play(state, problem, h, inp)
        f = problem.loss.value(x, theta)
        g = problem.constraint.value(x, phi)
        f_star = problem.loss.value(xs, theta)
        lam = algorithm.multiplier(state)
        new = algorithm.step(state, problem, h, inp)
        finite = jnp.isfinite(f) & jnp.isfinite(g)
        for leaf in jax.tree_util.tree_leaves(new):
            finite = finite & jnp.all(jnp.isfinite(leaf))
        now_failed = failed | ~finite
        new = jax.tree_util.tree_map(lambda a, b: jnp.where(now_failed, a, b), state, new)
        acc_new = _Acc(acc.loss + f, acc.star + f_star, acc.hard + jnp.maximum(g, 0.0), acc.soft + g)
        acc_new = jax.tree_util.tree_map(lambda a, b: jnp.where(now_failed, a, b), acc, acc_new)
        rec = jnp.stack([acc_new.loss - acc_new.star, acc_new.hard, acc_new.soft, lam, f])
        rec = jnp.where(now_failed, jnp.nan, rec)
        return new, acc_new, now_failed, rec, x

    over_seeds = jax.vmap(per_run, (None, 0, 0, 0, 0, 0, 0, 0, 0, 0, None))
    over_grid = jax.vmap(over_seeds, (0, 0, 0, 0, None, None, None, None, None, None, None))

    def body(carry, xs):
        states, phis, acc, failed, failed_round, bufs, xbuf, idx = carry
        t, u_replay = xs
        t_next = t + 1
        kl, kd, _ = jax.vmap(round_keys, (0, None))(keys, t)
        _, _, kc = jax.vmap(round_keys, (0, None))(keys, t_next)
        ka = jax.vmap(algorithm_key, (0, None))(keys, t)
        theta = jax.vmap(problem.loss_data.sample, (0, None))(kl, t)
        phi_next = jax.vmap(problem.constraint_data.sample, (0, None))(kc, t_next)
        if u_replay is None:
            u = jax.vmap(lambda k: problem.domain.sample_direction(k, dtype))(kd)
        else:
            u = jnp.broadcast_to(u_replay, (keys.shape[0], x1.shape[0]))
        states, acc, now_failed, rec, xs_now = over_grid(hyper, states, acc, failed, theta, phis,
                                                         phi_next, u, ka, x_star, t)
        failed_round = jnp.where(now_failed & ~failed, t, failed_round)
        j = jnp.minimum(idx, n_ck - 1)
        hit = (idx < n_ck) & (checkpoints[j] == t)
        row = jnp.where(hit, jnp.moveaxis(rec, -1, 0), bufs[:, j])
        bufs = bufs.at[:, j].set(row)
        if record_decisions:
            xbuf = xbuf.at[j].set(jnp.where(hit, xs_now, xbuf[j]))
        return (states, phi_next, acc, now_failed, failed_round, bufs, xbuf, idx + hit), None

    ts = jnp.arange(1, horizon + 1, dtype=jnp.int32)
    if directions is not None and directions.ndim == 3:
        directions = jnp.swapaxes(directions, 0, 1)  # (T, S, d)
    carry = (states, phis, acc, failed, failed_round, bufs, xbuf, jnp.zeros((), jnp.int32))
    carry, _ = jax.lax.scan(body, carry, (ts, directions))
    states, _, _, failed, failed_round, bufs, xbuf, _ = carry
    x_final = jax.vmap(jax.vmap(algorithm.decision))(states)
    return bufs, failed, failed_round, x_star, x_final, xbuf


def sweep(problem: Problem, horizon: int, hyper: Hyper | None = None, *, seeds=1, key=0,
          algorithm: AbstractAlgorithm | None = None, checkpoints=None, dtype="float32",
          directions=None, comparator: bool = True, record_decisions: bool = False) -> Result:
    """Run every hyperparameter setting in ``hyper`` (leading grid axis, or none) on every seed.

    seeds: a count S (ids 0..S-1) or an array of seed ids; key: an int or a typed
    ``jax.random.key`` (the master key); checkpoints: rounds to record (default: about 100
    log-spaced); directions: replayed u_t, shape (T, d) or (S, T, d); comparator=False skips
    x* (regret is then measured against x_1); record_decisions keeps x_t at the checkpoints.  One compiled call; a new hyperparameter value
    or problem data of the same shapes never recompiles.
    """
    dtype = _checks.check_dtype(dtype)
    horizon = _checks.check_positive_int("horizon T", horizon)
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        seed_ids = np.arange(_checks.check_positive_int("seeds", seeds))
    else:
        seed_ids = np.asarray(seeds)
        if seed_ids.ndim != 1 or seed_ids.size < 1 or not np.issubdtype(seed_ids.dtype, np.integer):
            raise ValueError("seeds must be an integer >= 1 or a non-empty 1-D array of integer ids")
        if np.any(seed_ids < 0) or np.any(seed_ids >= 2**32):
            raise ValueError("seed ids must lie in [0, 2^32)")
    master = jax.random.key(key) if isinstance(key, (int, np.integer)) else key
    validate(problem, horizon)
    algorithm = RectifiedBCO() if algorithm is None else algorithm
    hyper = algorithm.default_hyper(problem, horizon) if hyper is None else hyper
    algorithm.check_hyper(hyper, problem)
    hyper = jax.tree_util.tree_map(lambda v: jnp.atleast_1d(v), hyper)
    n_grid = max(np.shape(v)[0] for v in jax.tree_util.tree_leaves(hyper))
    hyper = jax.tree_util.tree_map(lambda v: jnp.broadcast_to(v, (n_grid,)), hyper)
    checkpoints = log_checkpoints(horizon) if checkpoints is None else checkpoints
    checkpoints = _check_checkpoints(checkpoints, horizon)
    if directions is not None:
        directions = _check_directions(directions, problem, horizon, seed_ids.size, dtype)
    problem_c, hyper_c, algorithm_c = _cast((problem, hyper, algorithm), dtype)
    n_seeds = seed_ids.size
    padded = np.concatenate([seed_ids, np.full((-n_seeds) % SEED_PAD, seed_ids[-1])])
    if directions is not None and directions.ndim == 3:
        directions = jnp.concatenate(
            [directions, jnp.broadcast_to(directions[-1:], (padded.size - n_seeds,) + directions.shape[1:])])
    start = time.perf_counter()
    out = _simulate(problem_c, algorithm_c, hyper_c, master, jnp.asarray(padded, jnp.uint32),
                    jnp.asarray(checkpoints), horizon, directions, comparator,
                    record_decisions)
    out = jax.block_until_ready(out)
    wall = time.perf_counter() - start
    bufs, failed, failed_round, x_star, x_final, xbuf = jax.device_get(out)
    bufs, xbuf = bufs[..., :n_seeds], xbuf[:, :, :n_seeds]
    failed, failed_round = failed[:, :n_seeds], failed_round[:, :n_seeds]
    x_star, x_final = x_star[:n_seeds], x_final[:, :n_seeds]
    decisions = np.moveaxis(np.asarray(xbuf), 0, 2) if record_decisions else None
    curves = {m: np.asarray(bufs[i]).transpose(1, 2, 0) for i, m in enumerate(METRICS)}
    return Result(rounds=checkpoints, failed=np.asarray(failed),
                  failed_round=np.asarray(failed_round), x_star=np.asarray(x_star),
                  x_final=np.asarray(x_final), decisions=decisions, seed_ids=seed_ids, hyper=hyper, horizon=horizon,
                  dtype=str(dtype), wall_s=wall, **curves)


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
    tracers).  ``seed_pad`` keeps batch-independence (see ``SEED_PAD``).
    """
    dtype = _checks.check_dtype(dtype)
    horizon = _checks.check_positive_int("horizon T", horizon)
    validate(problem, horizon)
    algorithm = RectifiedBCO() if algorithm is None else algorithm
    checkpoints = _check_checkpoints(log_checkpoints(horizon) if checkpoints is None else checkpoints,
                                     horizon)
    problem_c, algorithm_c = _cast((problem, algorithm), dtype)
    cps = jnp.asarray(checkpoints)

    def fn(hyper: Hyper, master, seed_ids):
        hyper = jax.tree_util.tree_map(lambda v: jnp.atleast_1d(jnp.asarray(v, dtype)), hyper)
        n_grid = max(jnp.shape(v)[0] for v in jax.tree_util.tree_leaves(hyper))
        hyper = jax.tree_util.tree_map(lambda v: jnp.broadcast_to(v, (n_grid,)), hyper)
        ids = jnp.asarray(seed_ids, jnp.uint32)
        n = ids.shape[0]
        if seed_pad and n % SEED_PAD:
            ids = jnp.concatenate([ids, jnp.full(((-n) % SEED_PAD,), ids[-1], jnp.uint32)])
        bufs, failed, _, x_star, x_final, _ = _simulate(problem_c, algorithm_c, hyper, master, ids,
                                                        cps, horizon, None, comparator, False)
        out = {m: jnp.moveaxis(bufs[i], 0, -1)[:, :n] for i, m in enumerate(METRICS)}
        out.update(failed=failed[:, :n], x_star=x_star[:n], x_final=x_final[:, :n])
        return out

    return fn
