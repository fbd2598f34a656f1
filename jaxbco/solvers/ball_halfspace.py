"""One halfspace on a ball domain: the prox in closed form (no loop).

On B = B(c, R′), R′ = (1 − ξ)R, with g(x) = ⟨a, x⟩ − b the dual of ``jaxbco.solvers.dual``
gives x(0) = Π_B(y) if slack, x(β) = Π_B(y − βa/α) if saturated, else the projection of y
onto B ∩ {⟨a, x⟩ = b}: the hyperplane meets B in a disk of centre
c_h = c − ((⟨a, c⟩ − b)/‖a‖²)a and radius ρ = √(R′² − ‖c − c_h‖²), so project y onto the
hyperplane (p) and p onto the disk.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbco._src import ops
from jaxbco.solvers._base import AbstractProxSolver, shrunk_projector


class BallHalfspace(AbstractProxSolver):
    """Eq. (5) in closed form for ``constraints.Linear`` (or ``Shifted`` of it) on an ``L2Ball``.

    No constructor arguments; ``Dual`` picks it for this pair (see the module docstring).

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints, sets, solvers
        >>> X, g = sets.L2Ball(jnp.zeros(2), 1.0), constraints.Linear()
        >>> phi = (jnp.array([1.0, 0.0]), jnp.asarray(0.5))   # x₁ ≤ 0.5
        >>> solvers.Dual.method(X, g).__name__
        'BallHalfspace'
        >>> x = solvers.BallHalfspace().solve(X, 0.0, g, phi, jnp.zeros(2), jnp.array([2.0, 1.0]),
        ...                                   1.0, 100.0)
        >>> [round(float(v), 4) for v in x]   # active: on the hyperplane, inside the ball
        [0.5, 0.866]
    """

    name = "closed form: ball n halfspace"
    blocks = True
    kernel = True

    def solve(self, domain, xi, constraint, phi, x0, y, alpha, beta):
        """Closed form on a ball B(c, R′) with one halfspace {⟨a, x⟩ ≤ b}.

        * slack: Π_B(y) if it is feasible;
        * saturated: Π_B(y − βa/α) if that is still infeasible;
        * else the projection of y onto B ∩ {⟨a, x⟩ = b} (the constraint is active): project y
          onto the hyperplane (p), then p onto the disk of centre c_h = c − ((⟨a, c⟩ − b)/‖a‖²)a
          and radius ρ = √(R′² − ‖c − c_h‖²).

        Args:
            domain: the ``L2Ball`` X.
            xi: the shrinkage ξ ∈ [0, 1), a scalar.
            constraint: the ``constraints.Linear`` family (or ``Shifted`` of it).
            phi: the round's constraint data φₜ.
            x0: (d,) xₜ (unused: the answer is closed-form).
            y: (d,) the centre y.
            alpha: α, a positive scalar.
            beta: β, a non-negative scalar.

        Returns:
            (d,) the minimiser of P over (1 − ξ)X.
        """
        project = shrunk_projector(domain, xi)
        A, b = constraint.rows(phi)
        a, b = A[0], b[0]
        c, radius = domain.center, (1.0 - xi) * domain.radius
        norm2 = ops.inner(a, a)
        inv = 1.0 / jnp.where(norm2 > 0, norm2, 1.0)
        x0 = project(y)
        xb = project(y - (beta / alpha) * a)
        p = y - ((ops.inner(a, y) - b) * inv) * a
        ch = c - ((ops.inner(a, c) - b) * inv) * a
        rho2 = jnp.maximum(radius * radius - ops.inner(c - ch, c - ch), 0.0)
        v = p - ch
        nv2 = ops.inner(v, v)
        shrink = jnp.where(nv2 > rho2, jnp.sqrt(rho2 / jnp.where(nv2 > rho2, nv2, 1.0)), 1.0)
        x_active = ch + shrink * v
        # Round-off guard: beta can be ~1e10 late in a run, so a point infeasible by one ulp
        # costs beta * ulp.  Keep a margin of a few ulps of |a.x| + |b| on the feasible side.
        margin = (
            2 * jnp.finfo(y.dtype).eps * (ops.inner(jnp.abs(a), jnp.abs(x_active)) + jnp.abs(b))
        )
        resid = ops.inner(a, x_active) - b
        x_active = x_active - ((jnp.maximum(resid, 0.0) + margin) * inv) * a
        margin0 = 2 * jnp.finfo(y.dtype).eps * (ops.inner(jnp.abs(a), jnp.abs(x0)) + jnp.abs(b))
        slack = ops.inner(a, x0) - b <= -margin0
        saturated = ops.inner(a, xb) - b > 0
        return jnp.where(slack, x0, jnp.where(saturated, xb, x_active))
