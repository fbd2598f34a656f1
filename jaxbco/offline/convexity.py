"""A researcher's own f and g checked before a run: finite at the start point x_1, and convex
along probe directions through X's inscribed ball (second differences >= 0).

For a direction v and h = r/2 (r the inscribed ball's radius, so c +- h v lie in X),
    Delta(v) = fn(c + h v) + fn(c - h v) - 2 fn(c) >= 0
for every convex fn; a Delta below minus its round-off (64 eps times the values' size) plus a
relative 1e-4 is a certain sign of non-convexity, reported as a ValueError naming the function
(not the "infeasible" or NaN the solvers would meet later).  Directions: the coordinate axes
and 4 d fixed random ones, each projected onto X's hull (``tangent``).  Round 1's data are used
(a ``Fixed`` sequence's value; else the sample at a fixed key).  Only a ``CustomLoss`` or
``CustomConstraint`` is checked: the built-in families are convex by construction.

After a run the same test runs where the solvers went (``check_visited``): at each seed's x*
and final x_T, pulled a fraction λ towards c (p' = p + λ (c − p), so p' ± λ r v lie in X for
every unit v in the hull: X is convex and holds B(c, r)), for λ = 0.05 and 0.25, h = λ r.  A
function convex near the centre but not where the run went (x₀³ on a box) is then reported by
a ``NonConvexWarning`` naming it, and every run's certificates are marked failed (the cuts
they rest on hold only for convex functions).

Example::

    check_user_functions(problem)  # ValueError: CustomConstraint fn is not convex ...
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import constraints as C
from jaxbco._src import checks

_RANDOM_PER_DIM = 4
_PULLS = (0.05, 0.25)  # visited points pulled this fraction towards X's centre


class NonConvexWarning(UserWarning):
    """A user's f or g is not convex at points the run visited (``check_visited``): the
    run's certificates are marked failed."""


def _round_one(sequence):
    return sequence.sample(checks.threefry_key(0), jnp.ones((), jnp.int32))


def _directions(domain, d: int, dtype):
    axes = jnp.eye(d, dtype=dtype)
    rand = jax.random.normal(checks.threefry_key(1), (_RANDOM_PER_DIM * d, d), dtype)
    v = jax.vmap(domain.tangent)(jnp.concatenate([axes, rand]))
    n = jnp.linalg.norm(v, axis=1, keepdims=True)
    return jnp.where(n > 0, v / jnp.where(n > 0, n, 1.0), 0.0)


@jax.jit
def _second_differences(fn, data, c, h, v, x1):
    values = jax.vmap(lambda u: (fn(c + h * u, data), fn(c - h * u, data)))(v)
    return fn(c, data), values[0], values[1], fn(x1, data)


def _check_one(label: str, fn, data, problem) -> None:
    c, r = problem.domain.inscribed_ball()
    dtype = c.dtype
    x1 = problem.initial_point()
    v = _directions(problem.domain, c.shape[0], dtype)
    mid, plus, minus, start = (
        np.asarray(a, np.float64)
        for a in _second_differences(jax.tree_util.Partial(fn), data, c, 0.5 * r, v, x1)
    )
    if not np.isfinite(start):
        raise ValueError(
            f"{label} is {start} at the start point x_1 = {np.asarray(x1).tolist()} "
            f"(the centre of X's inscribed ball): it must be finite there"
        )
    bad, delta = _concave(plus, minus, mid, dtype)
    if bad.any():
        i = int(np.argmin(np.where(bad, delta, np.inf)))
        raise ValueError(
            f"{label} is not convex in x: along the direction v = "
            f"{np.round(np.asarray(v[i], np.float64), 4).tolist()} through x = "
            f"{np.asarray(c).tolist()} (h = {float(0.5 * r):.3g}), fn(x + h v) + fn(x - h v) - "
            f"2 fn(x) = {delta[i]:.3g} < 0.  jaxbco's prox and comparator need a convex function "
            f"(a non-convex one gives wrong answers, not an error)"
        )


def _concave(plus, minus, mid, dtype):
    """(bad, delta): second differences below minus their round-off and a relative 1e-4."""
    delta = plus + minus - 2.0 * mid
    size = np.abs(plus) + np.abs(minus) + 2.0 * np.abs(mid)
    eps = float(jnp.finfo(dtype).eps)
    return np.isfinite(delta) & (delta < -(64 * eps + 1e-4) * size), delta


@jax.jit
def _at_points(fn, data, points, c, r, v):
    """fn at every point pulled towards c by each of ``_PULLS``, and at +- lambda r v."""

    def one(p, lam):
        q = p + lam * (c - p)
        h = lam * r
        return jax.vmap(lambda u: (fn(q + h * u, data), fn(q - h * u, data)))(v) + (fn(q, data),)

    lams = jnp.asarray(_PULLS, points.dtype)
    return jax.vmap(lambda p: jax.vmap(lambda lam: one(p, lam))(lams))(points)


def _functions(problem):
    """(label, fn, round one's data) of the user's functions to check."""
    out = []
    if C.unshifted(problem.constraint).probe_convexity:
        out.append(
            (
                "the CustomConstraint's fn (g)",
                lambda x, phi: problem.constraint.value(x, phi),
                _round_one(problem.constraint_data),
            )
        )
    if problem.loss.probe_convexity:
        out.append(
            (
                "the CustomLoss's fn (f)",
                lambda x, theta: problem.loss.value(x, theta),
                _round_one(problem.loss_data),
            )
        )
    return out


def check_visited(problem, points) -> bool:
    """Whether a user's f and g are convex (to the second differences' test) near ``points``
    (k, d), the points a run visited; a ``NonConvexWarning`` naming the function, the point
    and the direction where not (module docstring).

    Args:
        problem: the ``Problem``.
        points: (k, d) points of X (x* and x_T of each run).

    Returns:
        True where nothing non-convex was seen (also for a problem without user functions).
    """
    checked = _functions(problem)
    points = np.asarray(points).reshape(-1, np.shape(points)[-1])
    points = points[np.all(np.isfinite(points), axis=1)]
    if not checked or points.size == 0:
        return True
    c, r = problem.domain.inscribed_ball()
    dtype = c.dtype
    v = _directions(problem.domain, c.shape[0], dtype)
    pts = jnp.asarray(points, dtype)
    for label, fn, data in checked:
        plus, minus, mid = (
            np.asarray(a, np.float64)
            for a in _at_points(jax.tree_util.Partial(fn), data, pts, c, r, v)
        )
        bad, delta = _concave(plus, minus, mid[..., None], dtype)
        if bad.any():
            k, j, i = np.unravel_index(np.argmin(np.where(bad, delta, np.inf)), delta.shape)
            q = points[k] + _PULLS[j] * (np.asarray(c) - points[k])
            warnings.warn(
                f"{label} is not convex where the run went: near x = "
                f"{np.round(np.asarray(q, np.float64), 4).tolist()} along v = "
                f"{np.round(np.asarray(v[i], np.float64), 4).tolist()} "
                f"(h = {_PULLS[j] * float(r):.3g}), fn(x + h v) + fn(x - h v) - 2 fn(x) = "
                f"{delta[k, j, i]:.3g} < 0.  jaxbco's prox, comparator and certificates assume "
                f"a convex function: every run's x* and prox certificates are marked failed",
                NonConvexWarning,
                stacklevel=3,
            )
            return False
    return True


def check_user_functions(problem) -> None:
    """ValueError naming the function when a ``CustomConstraint``'s g or a ``CustomLoss``'s f
    is not finite at x_1 or not convex along a probe direction (module docstring)."""
    if C.unshifted(problem.constraint).probe_convexity:
        data = _round_one(problem.constraint_data)
        _check_one(
            "the CustomConstraint's fn (g)",
            lambda x, phi: problem.constraint.value(x, phi),
            data,
            problem,
        )
    if problem.loss.probe_convexity:
        data = _round_one(problem.loss_data)
        _check_one(
            "the CustomLoss's fn (f)", lambda x, theta: problem.loss.value(x, theta), data, problem
        )
