"""x* of a twice-differentiable loss (logistic) by projected Newton over X ∩ C, with
backtracking: each pass over the rounds sums the mean loss's value, gradient and Hessian at one
candidate, and the next candidate minimises the local quadratic model over X ∩ C (FISTA with
adaptive restart on the model, ``_model_minimiser``).

Example:
    >>> from jaxbco import comparator, problems
    >>> comparator.select(problems.make("logistic-ball", dim=3), 100).name
    'projected Newton (at most 8 passes)'
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco._src import ops
from jaxbco.comparator._base import AbstractOfflineMethod, region_projector
from jaxbco.offline.round_sums import mean_over_rounds

NEWTON_PASSES = 8
_MODEL_STEPS = 150


def _model_minimiser(project, x, g, H, steps):
    """argmin_{z in X n C} g.(z - x) + (1/2)(z - x)^T H (z - x): FISTA with adaptive restart,
    step 1/L with L from a power iteration on H (capped by ||H||_F, a bound on ||H||_2)."""
    dtype = x.dtype
    d = x.shape[0]
    v0 = jnp.ones_like(x) + 0.1 * jnp.arange(d, dtype=dtype).reshape((d,) + (1,) * (x.ndim - 1))
    matvec = lambda M, v: jnp.sum(M * v[None], axis=1)  # (d, d, runs) x (d, runs)

    def power(_, v):
        w = matvec(H, v)
        return w / jnp.maximum(jnp.sqrt(ops.inner(w, w)), jnp.finfo(dtype).tiny)

    v = jax.lax.fori_loop(0, 20, power, v0 / jnp.sqrt(ops.inner(v0, v0)))
    lip = jnp.minimum(1.1 * ops.inner(v, matvec(H, v)), jnp.sqrt(jnp.sum(H * H, axis=(0, 1))))
    lip = jnp.maximum(
        jnp.asarray(lip, dtype), jnp.finfo(dtype).tiny
    )  # a user's bound: the run's dtype
    one = jnp.ones(x.shape[1:], dtype)

    def body(_, carry):
        z_prev, w, tk = carry
        z = project(w - (g + matvec(H, w - x)) / lip)
        t_new = 0.5 * (1.0 + jnp.sqrt(1.0 + 4.0 * tk * tk))
        w_new = z + ((tk - 1.0) / t_new) * (z - z_prev)
        restart = ops.inner(w - z, z - z_prev) > 0
        return z, jnp.where(restart, z, w_new), jnp.where(restart, one, t_new)

    z, _, _ = jax.lax.fori_loop(0, steps, body, (x, x, one))
    return z


class ProjectedNewton(AbstractOfflineMethod):
    """Projected Newton with backtracking for a loss declaring ``offline = "newton"``.

    A candidate no worse than the current point is accepted and the next one is x + p,
    p = (the minimiser of the local quadratic model over X ∩ C) − x; otherwise the step is
    halved.  Every candidate lies in X ∩ C (a convex combination of two of its points).  A
    lane stops once its next step is within √ε (1 + |x|) (max norms): a full Newton step that
    small is taken without a pass to check it (its change of F, ~|p|², is below F's round-off),
    a halved one is not taken; at most ``NEWTON_PASSES`` passes over the rounds.

    Example:
        >>> from jaxbco import comparator, problems
        >>> method = comparator.select(problems.make("logistic-ball", dim=2), 100)
        >>> type(method).__name__, method.name
        ('ProjectedNewton', 'projected Newton (at most 8 passes)')
    """

    name = f"projected Newton (at most {NEWTON_PASSES} passes)"
    outside = False
    cost = f"up to {NEWTON_PASSES} passes over the rounds per seed (the data regenerated each)"

    def solve(self, problem, seed_key, horizon: int):
        _, _, project, c = region_projector(problem, seed_key, horizon)
        return _projected_newton(problem, seed_key, horizon, project, project(c))


def _projected_newton(problem, seed_key, horizon, project, x0):
    stats = lambda x: mean_over_rounds(
        problem, seed_key, horizon, lambda th: problem.loss.derivatives(x, th)
    )
    dtype = x0.dtype
    tol = jnp.sqrt(jnp.finfo(dtype).eps)
    runs = x0.shape[1:]
    one = jnp.ones(runs, dtype)

    def settle(x, p, t, fresh):
        """(the point a lane stops at, whether it stops): x + p for a small fresh step, x for
        a small halved one."""
        small = jnp.max(jnp.abs(t * p), axis=0) <= tol * (1.0 + jnp.max(jnp.abs(x), axis=0))
        return jnp.where(small & fresh, x + p, x), small

    f0, g0, H0 = stats(x0)
    p0 = _model_minimiser(project, x0, g0, H0, _MODEL_STEPS) - x0
    x0, done0 = settle(x0, p0, one, True)

    def body(carry):
        x, f, p, t, k, done = carry
        cand = x + t * p
        fc, gc, Hc = stats(cand)
        ok = fc <= f
        p_new = _model_minimiser(project, cand, gc, Hc, _MODEL_STEPS) - cand
        x_new, p_new, t_new = (
            jnp.where(ok, cand, x),
            jnp.where(ok, p_new, p),
            jnp.where(ok, 1.0, 0.5 * t).astype(t.dtype),
        )
        x_new, small = settle(x_new, p_new, t_new, ok)
        new = (x_new, jnp.where(ok, fc, f), p_new, t_new, k + 1, done | small)
        keep = lambda old, n: jnp.where(done, old, n)  # a stopped lane stays as it is
        return jax.tree_util.tree_map(keep, carry[:4], new[:4]) + new[4:]

    start = (x0, f0, p0, one, jnp.zeros((), jnp.int32), done0)
    x = jax.lax.while_loop(lambda c: (c[4] < NEWTON_PASSES - 1) & ~jnp.all(c[5]), body, start)[0]
    return x
