"""The proximal subproblem of Eq. (5) and the abstract solver.

Eq. (5): xₜ₊₁ = argmin over x ∈ (1 − ξ)X of ⟨g̃ₜ, x − xₜ⟩ + λₜγₜ[gₜ(x)]₊ + (αₜ/2)‖x − xₜ‖₂².
Completing the square with y = xₜ − g̃ₜ/αₜ, this is argmin over x ∈ S = (1 − ξ)X of
P(x) = (α/2)‖x − y‖₂² + β[g(x)]₊ with β = λₜγₜ, the form every solver here receives.
"""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco._src import ops
from jaxbco.constraints import AbstractConstraint
from jaxbco.sets import AbstractSet, project_shrunk


class AbstractProxSolver(eqx.Module):
    """A solver of the prox step: ``solve(...)`` returns argmin over x ∈ (1 − ξ)X of P(x).

    P(x) = (α/2)‖x − y‖₂² + β[g(x)]₊ (Eq. (5), see ``jaxbco.solvers``).  A solver of your
    own subclasses this and implements ``solve``; a constraint class can name it as its
    ``prox_method`` so that ``Dual`` uses it.  ``blocks`` (declared by each class itself, not inherited): ``solve_warm`` also takes
    seeds-minor blocks with a lane-uniform step count.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints, sets, solvers
        >>> class ProjectOnly(solvers.AbstractProxSolver):   # a solver of your own: ignores g
        ...     def solve(self, domain, xi, constraint, phi, x0, y, alpha, beta):
        ...         return sets.project_shrunk(domain, y, xi)
        >>> X, g = sets.L2Ball(jnp.zeros(2), 1.0), constraints.Linear()
        >>> ProjectOnly().solve(X, 0.0, g, None, jnp.zeros(2), jnp.array([2.0, 0.0]), 1.0, 0.0)
        Array([1., 0.], dtype=float32)
    """

    blocks: ClassVar[bool] = False
    #: declared by each class itself: its block code also runs inside the fused GPU kernel
    #: (``jaxbco.fused``)
    kernel: ClassVar[bool] = False

    @abc.abstractmethod
    def solve(
        self,
        domain: AbstractSet,
        xi: jax.Array,
        constraint: AbstractConstraint,
        phi,
        x0: jax.Array,
        y: jax.Array,
        alpha: jax.Array,
        beta: jax.Array,
    ) -> jax.Array:
        """The minimiser of P over the shrunk set (1 − ξ)X.

        Args:
            domain: the set X.
            xi: the shrinkage ξ ∈ [0, 1), a scalar.
            constraint: the constraint family g.
            phi: the round's constraint data φₜ.
            x0: (d,) xₜ, a warm start.
            y: (d,) the centre y = xₜ − g̃ₜ/αₜ.
            alpha: α = αₜ, a positive scalar.
            beta: β = λₜγₜ, a non-negative scalar.

        Returns:
            (d,) xₜ₊₁, of y's dtype.
        """

    def init_warm(self, problem, dtype):
        """State the solver carries from round to round (a pytree; () = none)."""
        return ()

    def solve_warm(self, domain, xi, constraint, phi, x0, y, alpha, beta, warm):
        """``(solve(...), warm')``: the minimiser and the state for the next round."""
        return self.solve(domain, xi, constraint, phi, x0, y, alpha, beta), warm

    def cut(self, domain, constraint, phi, x, warm):
        """(c, s) with c + ⟨s, z − x⟩ ≤ g(z) for every z: the cut of g at the answer x that the
        step's certificate (``solvers.gap``) linearises g by; g(x) and its gradient unless a
        method knows a tighter one from its dual (``warm``: the state ``solve_warm`` returned)."""
        return constraint.value_and_gradient(x, phi)


def prox_objective(constraint, phi, y, alpha, beta, x):
    """The prox objective P(x) = (α/2)‖x − y‖₂² + β[g(x, φ)]₊ of Eq. (5).

    Args:
        constraint: the constraint family g.
        phi: its data φ.
        y: (d,) the centre.
        alpha: α, a positive scalar.
        beta: β, a non-negative scalar.
        x: (d,) the point.

    Returns:
        P(x), a scalar.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints, sets, solvers
        >>> phi = (jnp.array([1.0, 0.0]), jnp.asarray(0.5))   # g(x) = x₁ − 0.5
        >>> y, x = jnp.zeros(2), jnp.array([1.0, 0.0])
        >>> g = constraints.Linear()
        >>> float(solvers.prox_objective(g, phi, y, 2.0, 10.0, x))   # (2/2)·1 + 10·0.5
        6.0
    """
    r = x - y
    return 0.5 * alpha * ops.inner(r, r) + beta * jnp.maximum(constraint.value(x, phi), 0.0)


def shrunk_projector(domain, xi):
    """x ↦ Π_{(1−ξ)X}(x)."""
    return lambda x: project_shrunk(domain, x, xi)
