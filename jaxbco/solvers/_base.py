"""The proximal subproblem of Eq. (5) and the abstract solver.

Eq. (5): x_{t+1} = argmin_{x in (1-xi)X} <g~_t, x - x_t> + lam_t gamma_t [g_t(x)]_+ + (alpha_t/2)||x - x_t||^2.
Completing the square with y = x_t - g~_t / alpha_t, this is
    argmin_{x in S} P(x),   P(x) = (alpha/2) ||x - y||^2 + beta [g(x)]_+,   beta = lam_t gamma_t,
the form every solver here receives.
"""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco import _ops
from jaxbco.constraints import AbstractConstraint
from jaxbco.sets import AbstractSet, project_shrunk


class AbstractProxSolver(eqx.Module):
    """``solve(domain, xi, constraint, phi, x0, y, alpha, beta)`` -> argmin_{x in (1-xi)X} P(x).

    ``blocks`` (declared by each class itself, not inherited): ``solve_warm`` also takes
    seeds-minor blocks (``jaxbco._blocks``) with a lane-uniform step count."""

    blocks: ClassVar[bool] = False
    #: declared by each class itself: its block code also runs inside the fused GPU kernel
    #: (``jaxbco._blocks``, ``jaxbco.fused``)
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
        """Minimiser of P over the shrunk set; ``x0`` (= x_t) is a warm start."""

    def init_warm(self, problem, dtype):
        """State the solver carries from round to round (a pytree; () = none)."""
        return ()

    def solve_warm(self, domain, xi, constraint, phi, x0, y, alpha, beta, warm):
        """``(solve(...), warm')``: the minimiser and the state for the next round."""
        return self.solve(domain, xi, constraint, phi, x0, y, alpha, beta), warm

    def cut(self, domain, constraint, phi, x, warm):
        """(c, s) with c + s.(z - x) <= g(z) for every z: the cut of g at the answer x that the
        step's certificate (``solvers.gap``) linearises g by; g(x) and its gradient unless a
        method knows a tighter one from its dual (``warm``: the state ``solve_warm`` returned)."""
        return constraint.value_and_gradient(x, phi)


def prox_objective(constraint, phi, y, alpha, beta, x):
    """P(x) = (alpha/2) ||x - y||^2 + beta [g(x, phi)]_+."""
    r = x - y
    return 0.5 * alpha * _ops.inner(r, r) + beta * jnp.maximum(constraint.value(x, phi), 0.0)


def shrunk_projector(domain, xi):
    """x -> Pi_{(1-xi)X}(x)."""
    return lambda x: project_shrunk(domain, x, xi)
