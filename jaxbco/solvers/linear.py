"""One halfspace g(x) = ⟨a, x⟩ − b on any set: the 1-D dual, solved by safeguarded Newton.

With x(μ) = Π_S(y − μa/α), h(μ) = ⟨a, x(μ)⟩ − b is non-increasing and piecewise smooth
(piecewise linear on a box, simplex or L1 ball), h′(μ) = −⟨a, Ja⟩/α (J the Jacobian of Π_S,
by ``jax.jvp``).  The answer (see ``jaxbco.solvers.dual``) is x(0) if h(0) ≤ 0, x(β) if
h(β) > 0, else x(μ*) with h(μ*) = 0 by a safeguarded Newton root (fixed length,
``root_steps``), started at the Newton guess αh(0)/‖a‖² and bracketed by
[0, min(β, 2μ_max)], μ_max = α(‖y − c‖ + D)D/(b − ⟨a, x_s⟩) the Slater bound (x_s ∈ S with
⟨a, x_s⟩ < b, c the inscribed ball's centre, D the shrunk set's diameter); of the bracket's
two ends the one with the lower P is returned.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco._src import ops
from jaxbco.solvers._base import AbstractProxSolver, prox_objective, shrunk_projector
from jaxbco.solvers._roots import newton_root


class LinearDual(AbstractProxSolver):
    """Eq. (5) for one halfspace (``constraints.Linear``, or ``Shifted`` of it) on any set.

    The 1-D dual by safeguarded Newton (see the module docstring).

    Args:
        root_steps: Newton steps on the multiplier μ (fixed length; default 40, static).

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints, sets, solvers
        >>> X, g = sets.Box(-jnp.ones(2), jnp.ones(2)), constraints.Linear()
        >>> phi = (jnp.array([1.0, 1.0]), jnp.asarray(0.5))   # x₁ + x₂ ≤ 0.5
        >>> solvers.Dual.method(X, g).__name__
        'LinearDual'
        >>> x = solvers.LinearDual().solve(X, 0.0, g, phi, jnp.zeros(2), jnp.array([1.0, 1.0]),
        ...                                1.0, 100.0)
        >>> round(float(x.sum()), 4)   # active: on the hyperplane
        0.5
    """

    name = "1-D dual: safeguarded Newton"
    blocks = True
    kernel = True
    root_steps: int = eqx.field(static=True, default=40)

    def solve(self, domain, xi, constraint, phi, x0, y, alpha, beta):
        project = shrunk_projector(domain, xi)
        A, b = constraint.rows(phi)
        a, b = A[0], b[0]
        norm2 = ops.inner(a, a)

        def h_and_x(mu):
            x = project(y - (mu / alpha) * a)
            return ops.inner(a, x) - b, x

        def h_x_dh(mu):
            (h, x), (dh, _) = jax.jvp(h_and_x, (mu,), (jnp.ones_like(mu),))
            return h, x, dh

        h0, x0 = h_and_x(jnp.zeros_like(beta))
        hb, xb = h_and_x(beta)
        guess = alpha * h0 / jnp.where(norm2 > 0, norm2, 1.0)
        # Bracket bound: with x_s in S, s = b - a.x_s > 0 and p = Pi_S(y - mu a/alpha), the
        # projection inequality gives a.p <= a.x_s + alpha ||y - p|| D / mu, so the root is
        # below mu_max = alpha (||y - c|| + D) D / s.  x_s: the projection of a far point c - L a.
        c, _ = domain.inscribed_ball()
        diam = (1.0 - xi) * domain.diameter()
        x_s = project(c - (1e3 * diam / jnp.sqrt(jnp.where(norm2 > 0, norm2, 1.0))) * a)
        slack = b - ops.inner(a, x_s)
        mu_max = (
            alpha
            * (jnp.sqrt(ops.inner(y - c, y - c)) + diam)
            * diam
            / jnp.where(slack > 0, slack, 1.0)
        )
        hi = jnp.where(slack > 0, jnp.minimum(beta, 2.0 * mu_max), beta)
        h_hi, x_hi0 = h_and_x(hi)
        # h's round-off level on the shrunk set: |a.x| <= |a| (|c| + D) there
        tol_h = (
            8
            * jnp.finfo(y.dtype).eps
            * (jnp.sqrt(norm2) * (jnp.sqrt(ops.inner(c, c)) + diam) + jnp.abs(b))
        )
        x_lo, x_hi = newton_root(
            h_x_dh,
            jnp.zeros_like(beta),
            hi,
            h0,
            h_hi,
            x0,
            x_hi0,
            guess,
            self.root_steps,
            tol_h,
            (h0 > 0) & (hb <= 0),
        )
        objective = lambda x: prox_objective(constraint, phi, y, alpha, beta, x)
        x_root = jnp.where(objective(x_lo) < objective(x_hi), x_lo, x_hi)
        return jnp.where(h0 <= 0, x0, jnp.where(hb > 0, xb, x_root))
