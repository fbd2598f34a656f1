"""Accurate default solver: the dual of the rectified penalty, one method per structure of g.

β[g(x)]₊ = max over μ ∈ [0, β] of μg(x), so P's dual is

    φ(μ) = min over x ∈ S of (α/2)‖x − y‖₂² + μg(x),   μ ∈ [0, β],

concave with φ′(μ) = g(x(μ)) non-increasing (Danskin).  The solution is

* x(0) if g(x(0)) ≤ 0 (the constraint is slack),
* x(β) if g(x(β)) > 0 (the penalty saturates),
* x(μ*) with g(x(μ*)) = 0 otherwise (the constraint is active).

``Dual.method`` picks the method from what the set and g declare (``AbstractSet.form``;
``AbstractConstraint.kind`` and ``quadratic_form``; a ``shift`` of g has its base's
structure; a constraint class that declares its own ``prox_method`` gets that one) and hands
it the step counts it takes ("four": the forms box, simplex, l2-ball and l1-ball):

  ============  ================  =========================================================
  set form      g declares        method
  ============  ================  =========================================================
  l2-ball       kind linear       ``BallHalfspace``: closed form
  l2-ball       form ball         ``BallBall``: closed form
  any           kind linear       ``LinearDual``: 1-D dual, safeguarded Newton, fixed length
  any           kind polyhedral   ``PolyhedralDual``: m-dimensional dual, Newton ascent until
                                  each lane converges (m ≤ 5) or fixed-length accelerated
                                  ascent
  four          form ellipsoid    ``QuadraticIPM``: Π_S(y) where g holds there, else a
                or ball           primal-dual interior point on the binding lanes, gathered
                                  into chunks (an L1 ball lifted)
  four          kind smooth       ``SmoothIPM``: the same interior point with g's Hessian
                                  (``jax.hessian``) at each step, one run at a time
  none          kind smooth       ``SmoothDual``: bracketed root on μ, x(μ) by APG, both
                                  stopping per lane, then a fixed-length differentiable polish
  any           kind nonsmooth    ``CuttingPlane``: proximal bundle over the exact polyhedral
                                  dual, one run at a time
  ============  ================  =========================================================

Each method guards its answer against round-off on the active constraint (β reaches ~1e10
late in a run and multiplies any violation).
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax.numpy as jnp

from jaxbco.constraints import unshifted
from jaxbco.solvers._base import AbstractProxSolver
from jaxbco.solvers.ball_halfspace import BallHalfspace
from jaxbco.solvers.cutting_plane import CuttingPlane
from jaxbco.solvers.linear import LinearDual
from jaxbco.solvers.polyhedral import PolyhedralDual
from jaxbco.solvers.quadratic import QuadraticIPM
from jaxbco.solvers.smooth import SmoothDual
from jaxbco.solvers.smooth_ipm import SmoothIPM
from jaxbco.solvers.two_balls import BallBall

#: the set forms the quadratic interior point takes (``quadratic.set_fields``)
IPM_FORMS = ("box", "simplex", "l2-ball", "l1-ball")


class Dual(AbstractProxSolver):
    """The accurate default solver of Eq. (5), via its dual (see the module docstring).

    It hands the method it picks (``method``) those of its step counts that it takes.

    Args:
        root_steps: steps on μ (the linear method's fixed count; the smooth method's cap).
        inner_steps: APG steps per x(μ) for smooth g (at most).
        polish_steps: the fixed-length APG steps that carry derivatives of the smooth case.
        dual_steps: ascent steps for polyhedral g with more than ``exact_rows`` rows.
        newton_steps: dual Newton steps (at most) for polyhedral g with m ≤ ``exact_rows``.
        exact_rows: the largest m that takes the dual Newton method.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints, sets, solvers
        >>> X, g = sets.L2Ball(jnp.zeros(2), 1.0), constraints.Linear()
        >>> phi = (jnp.array([1.0, 0.0]), jnp.asarray(0.5))          # x₁ ≤ 0.5
        >>> solvers.Dual.method(X, g).__name__
        'BallHalfspace'
        >>> x = solvers.Dual().solve(X, jnp.asarray(0.0), g, phi, jnp.zeros(2),
        ...                          jnp.array([2.0, 0.0]), jnp.asarray(1.0), jnp.asarray(100.0))
        >>> x.shape, bool(abs(x[0] - 0.5) < 1e-5)
        ((2,), True)
    """

    blocks = True  # as far as the method it picks does (``jaxbco.backends``)
    kernel = True  # likewise
    root_steps: int = eqx.field(static=True, default=40)
    inner_steps: int = eqx.field(static=True, default=60)
    polish_steps: int = eqx.field(static=True, default=30)
    dual_steps: int = eqx.field(static=True, default=1500)
    newton_steps: int = eqx.field(static=True, default=60)
    exact_rows: int = eqx.field(static=True, default=5)

    @staticmethod
    def method(domain, constraint) -> type[AbstractProxSolver]:
        """The method class ``solve`` uses for this set and constraint family: the family's own
        ``prox_method`` where it declares one, else chosen from the declarations (the module
        docstring's table); its ``name`` says which in
        reports."""
        base = unshifted(constraint)
        own = type(base).__dict__.get("prox_method")
        if own is not None:
            if not (isinstance(own, type) and issubclass(own, AbstractProxSolver)):
                raise TypeError(
                    f"{type(base).__name__}.prox_method must be an AbstractProxSolver "
                    f"class; got {own!r}"
                )
            return own
        ball, ipm = domain.form == "l2-ball", domain.form in IPM_FORMS
        if base.kind == "nonsmooth":  # a declared kink: no Hessian for the interior point
            return CuttingPlane
        if base.kind == "linear":
            return BallHalfspace if ball else LinearDual
        if base.kind == "polyhedral":
            return PolyhedralDual
        if base.quadratic_form == "ball" and ball:
            return BallBall
        if base.quadratic_form is not None and ipm:
            return QuadraticIPM
        return SmoothIPM if ipm else SmoothDual

    def _solver(self, domain, constraint) -> AbstractProxSolver:
        """The method for (domain, constraint), built with those of this Dual's step counts that
        it takes (its own fields)."""
        method = self.method(domain, constraint)
        return method(
            **{
                f.name: getattr(self, f.name)
                for f in dataclasses.fields(method)
                if hasattr(self, f.name)
            }
        )

    def init_warm(self, problem, dtype):
        """The method's state carried between rounds: the polyhedral multiplier ν, else ()."""
        return self._solver(problem.domain, problem.constraint).init_warm(problem, dtype)

    def solve_warm(self, domain, xi, constraint, phi, x0, y, alpha, beta, warm):
        return self._solver(domain, constraint).solve_warm(
            domain, xi, constraint, phi, x0, y, alpha, beta, warm
        )

    def solve(self, domain, xi, constraint, phi, x0, y, alpha, beta):
        return self._solver(domain, constraint).solve(
            domain, xi, constraint, phi, x0, y, alpha, beta
        )

    def cut(self, domain, constraint, phi, x, warm):
        return self._solver(domain, constraint).cut(domain, constraint, phi, x, warm)


def project_feasible(domain, xi, constraint, phi, z, warm=None, *, scale_at=None):
    """The projection of z onto the feasible part of the shrunk set, (1 − ξ)X ∩ {g ≤ 0}.

    ``Dual(root_steps=80)`` with α = 1 and a huge β (1e18, float64: 1e30), on g's data
    normalised (``normalised``), so the penalty is exact whatever g's scale.  Exact for one
    halfspace (closed form on a ball, else safeguarded Newton on the multiplier) and for a
    ball g on a ball; dual Newton (m ≤ 5) or accelerated ascent for several halfspaces;
    bracketed search for smooth g.  Near the least-violating point when the intersection is
    empty.

    Args:
        domain: the set X.
        xi: the shrinkage ξ ∈ [0, 1).
        constraint: the constraint family g.
        phi: its data φ.
        z: (d,) the point to project.
        warm: None, or ``Dual.init_warm``'s state (last call's): the dual Newton starts from
            last call's multiplier.
        scale_at: the point where g's scale sets β (None: z); a fixed point (X's centre, as
            the comparator's projections take) gives every projection of a run one β.

    Returns:
        (d,) the projection; with ``warm``, ``(x, warm')``.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints, sets, solvers
        >>> X, g = sets.L2Ball(jnp.zeros(2), 1.0), constraints.Linear()
        >>> phi = (jnp.array([1.0, 0.0]), jnp.asarray(0.5))   # x₁ ≤ 0.5
        >>> x = solvers.project_feasible(X, 0.0, g, phi, jnp.array([2.0, 0.0]))
        >>> bool(jnp.allclose(x, jnp.array([0.5, 0.0]), atol=1e-5))
        True
    """
    dtype = z.dtype
    big = jnp.asarray(1e30 if dtype == jnp.float64 else 1e18, dtype)
    unit = constraint.normalised(phi)
    big = big / constraint.scale_at(z if scale_at is None else scale_at, unit)
    args = (domain, jnp.asarray(xi, dtype), constraint, unit, z, z, jnp.ones((), dtype), big)
    if warm is None:
        return Dual(root_steps=80).solve(*args)
    return Dual(root_steps=80).solve_warm(*args, warm)
