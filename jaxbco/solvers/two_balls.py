"""Closed-form prox on a ball domain with a ball constraint (no loop).

P(x) = (α/2)‖x − y‖² + β[‖x − q‖² − s]₊ over B = B(c, R′), R′ = (1 − ξ)R.  With
x(μ) = argmin over B of (α/2)‖x − y‖² + μ‖x − q‖² = Π_B((αy + 2μq)/(α + 2μ)) (an isotropic
quadratic: its minimiser over B is the projection of its centre), the dual of
``jaxbco.solvers.dual`` gives

* x(0) = Π_B(y) if ‖x(0) − q‖² ≤ s (slack),
* x(β) if ‖x(β) − q‖² > s (the penalty saturates),
* the projection of y onto B ∩ B(q, √s) otherwise (active: μ* ∈ (0, β) is the multiplier
  of the projection onto the intersection).

Projection onto two balls B₁ ∩ B₂ (nonempty): Π_B₁(y) if it lies in B₂, Π_B₂(y) if it lies
in B₁, else the closest point of the sphere S₁ ∩ S₂: it lies in the radical hyperplane
{2⟨c₂ − c₁, x⟩ = R₁² − R₂² + ‖c₂‖² − ‖c₁‖²} about c_h with radius ρ; project y onto the
hyperplane (p), then c_h + ρ(p − c_h)/‖p − c_h‖.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbco._src import ops
from jaxbco.solvers._base import AbstractProxSolver


def ball_data(constraint, phi):
    """(q, s) with g(x) = ||x - q||^2 - s, for ``Ball`` or ``Shifted`` of it (at any depth)."""
    if not constraint.shift:
        return phi
    inner, shift = phi
    q, s = ball_data(constraint.base, inner)
    return q, s + shift


def _into_ball(center, radius, x):
    r = x - center
    n2 = ops.inner(r, r)
    scale = jnp.where(n2 > radius * radius, radius / jnp.sqrt(jnp.where(n2 > 0, n2, 1.0)), 1.0)
    return center + scale * r


def project_two_balls(c1, r1, c2, r2, y):
    """Pi_{B(c1, r1) n B(c2, r2)}(y) (see the module docstring); the intersection is assumed
    nonempty (else the point of the radical hyperplane's disc nearest y, the least-violating
    choice)."""
    p1 = _into_ball(c1, r1, y)
    p2 = _into_ball(c2, r2, y)
    tol = 4 * jnp.finfo(y.dtype).eps
    in2 = ops.inner(p1 - c2, p1 - c2) <= r2 * r2 * (1 + tol)
    in1 = ops.inner(p2 - c1, p2 - c1) <= r1 * r1 * (1 + tol)
    a = c2 - c1
    na2 = ops.inner(a, a)
    inv = 1.0 / jnp.where(na2 > 0, na2, 1.0)
    # Radical hyperplane a.x = b; its centre c_h on the line c1 + t a.
    b = 0.5 * (r1 * r1 - r2 * r2 + ops.inner(c2, c2) - ops.inner(c1, c1))
    ch = c1 + ((b - ops.inner(a, c1)) * inv) * a
    rho2 = jnp.maximum(r1 * r1 - ops.inner(ch - c1, ch - c1), 0.0)
    p = y - ((ops.inner(a, y) - b) * inv) * a
    v = p - ch
    nv2 = ops.inner(v, v)
    circle = ch + jnp.where(nv2 > 0, jnp.sqrt(rho2 / jnp.where(nv2 > 0, nv2, 1.0)), 0.0) * v
    return jnp.where(in2, p1, jnp.where(in1, p2, circle))


def prox_ball_ball(center, radius, q, s, y, alpha, beta):
    """argmin over B(center, radius) of (alpha/2)||x - y||^2 + beta [||x - q||^2 - s]_+."""
    eps = jnp.finfo(y.dtype).eps
    x0 = _into_ball(center, radius, y)
    g = lambda x: ops.inner(x - q, x - q) - s
    xb = _into_ball(center, radius, (alpha * y + 2.0 * beta * q) / (alpha + 2.0 * beta))
    r2 = jnp.sqrt(jnp.maximum(s, 0.0))
    # Active: the projection onto both balls, pulled a few ulps inside B(q, sqrt s) so that a
    # huge beta never multiplies a round-off violation.
    x_act = project_two_balls(center, radius, q, r2 * (1 - 4 * eps), y)
    slack = g(x0) <= 0
    saturated = g(xb) > 0
    return jnp.where(slack, x0, jnp.where(saturated, xb, x_act))


class BallBall(AbstractProxSolver):
    """Eq. (5) in closed form for ``constraints.Ball`` (or ``Shifted`` of it) on an ``L2Ball``.

    The projection onto two balls (``prox_ball_ball``, see the module docstring).  No
    constructor arguments; ``Dual`` picks it for this pair.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints, sets, solvers
        >>> X, g = sets.L2Ball(jnp.zeros(2), 1.0), constraints.Ball()
        >>> phi = (jnp.array([1.0, 0.0]), jnp.asarray(1.0))   # ‖x − (1, 0)‖₂² ≤ 1
        >>> solvers.Dual.method(X, g).__name__
        'BallBall'
        >>> x = solvers.BallBall().solve(X, 0.0, g, phi, jnp.zeros(2), jnp.array([-1.0, 0.0]),
        ...                              1.0, 100.0)
        >>> bool(jnp.allclose(x, jnp.zeros(2), atol=1e-5))   # the closest point of both balls
        True
    """

    name = "closed form: ball n ball"
    blocks = True
    kernel = True

    def solve(self, domain, xi, constraint, phi, x0, y, alpha, beta):
        return prox_ball_ball(
            domain.center, (1.0 - xi) * domain.radius, *ball_data(constraint, phi), y, alpha, beta
        )
