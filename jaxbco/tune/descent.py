"""The descent loop of gradient tuning: each step's gradient by the chosen estimator
(``jaxbco.tune.estimators``), checked at intervals when the estimator is "auto", and one optax
step on z.

    for s = 0 .. steps - 1:
        pathwise:  every seed's dL/dz through the whole run (one compiled call)
        auto:      at s = 0, c, 2c, ...: the pathwise gradient against central differences on
                   the same seeds along a random direction; on disagreement, smoothed from here
        smoothed:  [L(z + s e_p) - L(z - s e_p)] / (2 s) e_p over P pairs x the seeds (one call)
        z <- optax step; with a budget, mu <- mu exp(lr clip((V - v) / v, -1, 1))
"""

from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco.tune import estimators
from jaxbco.tune.estimators import PATHWISE, SMOOTHED
from jaxbco.tune.objective import _Context, training_ids
from jaxbco.tune.step import _compiled_gradient, _compiled_update


@dataclasses.dataclass
class Descent:
    """What the loop leaves: per step "J", "L", "regret", "violation", "failed", "multiplier",
    "grad", "estimator"; the points z (steps + 1, k); the checks; the step at which it
    switched to the smoothed estimator (None: it did not); the runs of the steps and of the
    checks; the compile seconds."""

    rows: list
    zs: np.ndarray
    checks: list
    switched_at: int | None
    step_runs: int
    check_runs: int
    compile_s: float


def _rng(ctx: _Context, step: int, stream: int) -> np.random.Generator:
    """A NumPy generator of (master key, step, stream) alone."""
    data = np.asarray(jax.random.key_data(ctx.master)).ravel().astype(np.uint64).tolist()
    return np.random.default_rng(data + [int(step), int(stream)])


def _losses(ctx: _Context, Z, ids, mu):
    """L = R_T/T + mu V_T/T per (point, seed) of the exact algorithm, its R, V and kept flags."""
    r, v, failed = jax.device_get(ctx._run(ctx.grid_of(Z), jnp.asarray(ids, jnp.uint32)))
    L = r + float(mu) * v / ctx.horizon
    ok = ~failed & np.isfinite(L)
    return L, r, v, ok


def _smoothed_step(ctx, z, ids, mu, scale, pairs, rng):
    """The smoothed gradient at z and the step's summary (J, R/T, V at z estimated by the
    pairs' mean, which is J(z) + O(s^2))."""
    e = estimators.directions(rng, ctx.space.k, pairs)
    Z = np.concatenate([z + scale * e, z - scale * e])
    L, r, v, ok = _losses(ctx, Z, ids, mu)
    P = len(e)
    pair_ok = ok[:P] & ok[P:]
    g, _ = estimators.smoothed_gradient(L[:P], L[P:], pair_ok, e, scale)
    keep = pair_ok.all(axis=0)
    reg, vio = (float(estimators.kept_mean(x.mean(axis=0), keep)) for x in (r, v))
    return g, reg, vio, int((~keep).sum()), 2 * P * len(ids)


def descend(
    ctx: _Context,
    *,
    mode,
    estimator,
    optimizer,
    smoothing,
    remat,
    steps,
    seeds,
    fresh_seeds,
    budget,
    multiplier_lr,
    scale,
    pairs,
    check_every,
) -> Descent:
    """Run the descent (see the module docstring); ``pairs``: P of the smoothed estimator."""
    T, k = ctx.horizon, ctx.space.k
    ids0 = training_ids(0, seeds, fresh_seeds)
    z0 = jnp.asarray(ctx.space.start(ctx.init), ctx.dtype)
    t0 = time.perf_counter()
    update, opt_state = _compiled_update(optimizer, z0)
    grad, runs_per_seed = (None, 0)
    if estimator != SMOOTHED:
        grad, runs_per_seed = _compiled_gradient(ctx, mode, smoothing, remat, ids0)
    compile_s = time.perf_counter() - t0
    current = PATHWISE if estimator != SMOOTHED else SMOOTHED
    planned = [s for s in range(0, steps, check_every)] if estimator == estimators.AUTO else []
    z, mu = z0, float(ctx.kappa)
    rows, zs, checks = [], [np.asarray(z0, np.float64)], []
    switched, step_runs, check_runs = None, 0, 0
    for s in range(steps):
        ids = training_ids(s, seeds, fresh_seeds)
        zn = np.asarray(z, np.float64)
        used = current
        if current == PATHWISE:
            grads, (r, v, failed) = jax.device_get(
                grad(z, jnp.asarray(mu, ctx.dtype), jnp.asarray(ids, jnp.uint32))
            )
            grads, failed = np.asarray(grads, np.float64), np.asarray(failed, bool)
            ok = ~failed
            g = estimators.kept_mean(grads, ok[:, None], axis=0)
            reg, vio = (float(estimators.kept_mean(x, ok)) for x in (r, v))
            nfail = int(failed.sum())
            step_runs += runs_per_seed * len(ids)
            if s in planned:
                e = estimators.directions(_rng(ctx, s, 1), k, 1)[0]
                L, _, _, okL = _losses(ctx, np.stack([zn + scale * e, zn - scale * e]), ids, mu)
                check = estimators.compare(
                    s, grads, ok, L[0], L[1], okL[0] & okL[1], e, scale, len(planned)
                )
                checks.append(check)
                check_runs += 2 * len(ids)
                if check.disagree:
                    current, switched = SMOOTHED, s
        if current == SMOOTHED:
            used = SMOOTHED
            g, reg, vio, nfail, runs = _smoothed_step(
                ctx, zn, ids, mu, scale, pairs, _rng(ctx, s, 2)
            )
            step_runs += runs
        J = reg + ctx.kappa * vio / T
        rows.append(
            dict(
                J=J,
                L=reg + mu * vio / T,
                regret=reg,
                violation=vio,
                failed=nfail,
                grad=np.asarray(g, np.float64),
                multiplier=mu,
                estimator=used,
            )
        )
        z, opt_state = update(z, opt_state, jnp.asarray(g, ctx.dtype))
        zs.append(np.asarray(z, np.float64))
        if budget is not None:  # multiplicative dual ascent on mu (the Lagrangian's multiplier)
            excess = np.clip((vio - budget) / max(budget, 1e-12), -1.0, 1.0)
            mu = float(mu * np.exp(multiplier_lr * excess))
    return Descent(rows, np.stack(zs), checks, switched, step_runs, check_runs, compile_s)
