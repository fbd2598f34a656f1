"""Any smooth convex g on a box, simplex, ball or L1 ball: the quadratic interior point with g's
own value, gradient and Hessian (``jax.hessian``) in place of (P, q, s).

Eq. (5) is the same problem for any convex g; the interior point's Newton system needs g's
Hessian at the current x (2P for a quadratic g), so here each step differentiates the user's
function twice at that point.  On a seeds-minor block the lanes are laid out as
``QuadraticIPM`` lays them out (the binding ones gathered into chunks on a CPU), each lane
differentiating g with its own data (g under ``vmap`` over the lanes of a chunk).
Exact to round-off like ``QuadraticIPM`` (no curvature bound is used, none need be right),
with its round-off guard and its implicit derivatives, on g divided by its scale (the smaller
of its values at Π_S(y) and at S's centre: a user's g given as 10⁻²⁰ or 10²⁰ times a
well-scaled one is solved alike, and a steep g such as exp(20(⟨a, x⟩ − b)) − 1 is not
flattened by its size at a far point); each step is backtracked where g's linearisation
overshoots.  The Slater cap on β needs a point with g < 0: the family's ``interior_point``
where it gives one; without it, the scaled penalty βc/α (c: g's scale) is capped at
(1 + ‖y‖²)/ε.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from jaxbco._src import blocks, ops
from jaxbco.solvers import _ipm
from jaxbco.solvers._base import shrunk_projector
from jaxbco.solvers.quadratic import AbstractInteriorPoint, _attach, set_fields


class SmoothIPM(AbstractInteriorPoint):
    """Eq. (5) for any differentiable convex g on a ``Box``, ``Simplex``, ``L2Ball`` or ``L1Ball``.

    Args:
        ipm_steps: interior-point iterations at most (default 80).
        lanes: binding lanes solved at once on a seeds-minor block on a CPU, as
            ``QuadraticIPM``'s (default 32; None: every lane in one solve).

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints, sets, solvers
        >>> X = sets.Box(-jnp.ones(2), jnp.ones(2))
        >>> g = constraints.CustomConstraint(lambda x, r: jnp.sum(x**4) - r)   # a user's smooth g
        >>> solvers.Dual.method(X, g).__name__
        'SmoothIPM'
        >>> x = solvers.SmoothIPM().solve(X, 0.0, g, jnp.asarray(1 / 16), jnp.zeros(2),
        ...                               jnp.array([1.0, 0.0]), 1.0, 100.0)
        >>> bool(jnp.allclose(x, jnp.array([0.5, 0.0]), atol=1e-3))   # x₁⁴ = 1/16
        True
    """

    name = "smooth: interior point with g's Hessian"
    blocks = True

    def solve(self, domain, xi, constraint, phi, x0, y, alpha, beta):
        stop = jax.lax.stop_gradient
        dtype, d = y.dtype, y.shape[0]
        runs = y.shape[1:]  # () for one run (vmap back-end), else a block's run axes
        eps = jnp.finfo(dtype).eps
        project = shrunk_projector(domain, xi)
        g = lambda x: constraint.value(x, phi)
        x_proj = project(y)
        need = (g(x_proj) > 0) & (beta > 0)
        fixed = stop(phi)
        g_of = lambda z, data: jnp.asarray(constraint.value(z, data), dtype)
        g_fixed = lambda z: g_of(z, fixed)

        # g's scale c (degree 1 in g: |g| + |grad g| (1 + |x|), max norms: a square of a
        # float32 gradient of size 1e-20 or 1e20 leaves the range), the smaller of its values
        # at Pi_S(y) and at S's centre: a steep g (an exponential) is huge at a far Pi_S(y)
        # and would look flat near its zero set divided by it; the interior point solves
        # (beta c) [g / c]_+ (its tolerances are absolute: a g of size 1e-8 would look solved
        # at once in float32), except where b c < eps, a penalty this precision does not feel
        # (and whose multipliers float32 flushes to zero)
        centre = jnp.asarray(domain.inscribed_ball()[0], dtype)
        centre = project(jnp.broadcast_to(centre.reshape((d,) + (1,) * len(runs)), y.shape))
        c = jnp.minimum(_scale(g_fixed, stop(x_proj)), _scale(g_fixed, centre))
        c = stop(jnp.where(jnp.isfinite(c) & ((c > 1.0) | ((beta / alpha) * c >= eps)), c, 1.0))
        split = blocks.lanes(fixed, runs) if runs else None  # one run's data per lane
        n = y.size // d
        interior = (  # a user's interior(phi) is written for one run's data
            blocks.runs_last(split.map(constraint.interior_point, n), runs)
            if runs
            else constraint.interior_point(phi)
        )
        x_s = project(jnp.asarray(interior, dtype)) if interior is not None else x_proj
        g_s = stop(g(x_s))
        cap = stop(
            0.5
            * (ops.inner(x_s - y, x_s - y) - ops.inner(x_proj - y, x_proj - y))
            / jnp.where(g_s < 0, -g_s / c, 1.0)
        )
        b = jnp.minimum(beta * c / alpha, jnp.finfo(dtype).max * 1e-8)
        b = jnp.where(g_s < 0, jnp.minimum(b, 2.0 * cap + jnp.finfo(dtype).tiny), b)
        b = jnp.minimum(b, (1.0 + stop(ops.inner(y, y))) / eps)
        if not runs:  # one run
            data = _ipm.Data(
                jnp.zeros((d, d), dtype),
                jnp.zeros((1, d), dtype),
                jnp.zeros((1,), dtype),
                y[None],
                b[None],
                **set_fields(domain, xi, dtype),
                curv=jax.tree_util.Partial(functools.partial(_curv_one, g_of), (fixed, c)),
            )  # operands, not closures
            state = stop(_ipm.solve(stop(data), self.ipm_steps))
            x = _attach(state.x, state, data)[0]
        else:  # a block: lanes-major, the binding lanes solved in chunks (``QuadraticIPM``)
            full = lambda a: jnp.broadcast_to(a, runs).reshape(n)
            data = _ipm.Data(
                jnp.zeros((d, d), dtype),
                jnp.zeros((d,), dtype),
                jnp.zeros((), dtype),
                y.reshape(d, n).T,
                full(b),
                **set_fields(domain, full(jnp.asarray(xi, dtype)), dtype),
                curv=jax.tree_util.Partial(functools.partial(_curv_lanes, g_of), split, full(c)),
            )
            state = stop(self._solve_binding(stop(data), full(need)))
            x = _attach(state.x, state, data).T.reshape(y.shape)

        def ulp_g(z):  # g's round-off scale at z: its value and first-order terms
            value, grad = ops.value_and_grad(g_fixed, z)
            return 8.0 * eps * d * (jnp.abs(value) + _max_abs(grad) * (1.0 + _max_abs(z)))

        return jnp.where(
            need,
            self._guard(constraint, phi, y, alpha, beta, x, x_s, g_s, ulp_g, project, need),
            x_proj,
        )


def _hessian_terms(g_of, x, data, scale):
    """(g, grad g, Hessian of g) / scale at one point x (d,)."""
    value, grad = jax.value_and_grad(g_of)(x, data)
    hess = jax.hessian(g_of)(x, data)
    return value / scale, grad / scale, hess / scale


def _curv_one(g_of, data_scale, X):
    """One run's lane, X (1, d): ``_hessian_terms`` with a lane axis."""
    data, scale = data_scale
    value, grad, hess = _hessian_terms(g_of, X[0], data, scale)
    return value[None], grad[None], hess[None]


def _curv_lanes(g_of, split, scale, X):
    """K lanes of a block, X (K, d): ``_hessian_terms`` per lane, each with its own data
    (``split``: ``blocks.Lanes``) and scale (K,)."""
    return split.map(lambda data, x, c: _hessian_terms(g_of, x, data, c), X.shape[0], X, scale)


def _scale(g, x):
    """g's scale at x, |g| + |grad g| (1 + |x|) in max norms; inf where not finite or 0 (the
    other point's is taken; 1 where neither is usable)."""
    value, grad = ops.value_and_grad(g, x)
    c = jnp.abs(value) + _max_abs(grad) * (1.0 + _max_abs(x))
    return jnp.where(jnp.isfinite(c) & (c > 0), c, jnp.inf)


def _max_abs(v):
    return jnp.max(jnp.abs(v), axis=0)
