"""Mahdavi, Jin, Yang (2012), "Trading regret for efficiency: online convex optimization with
long term constraints" (JMLR 13): the gradient-based primal-dual algorithm on the augmented
Lagrangian, here with the two-point bandit estimate in place of ∇fₜ (their bandit
extension; ``bandit=False`` is the full-information original).

Guarantee: regret O(√T) and soft (long-term) violation ∑ₜ g(xₜ) = O(T^(3/4)); nothing on the
hard violation.

.. code-block:: text

    Require: η > 0, δ_M > 0; (bandit) δ > 0, ξ = δ/r ∈ (0, 1).
    1  x₁ = the problem's start, λ₁,ₖ = 0 for every constraint k = 1..m
    2  for t = 1..T:
    3      ĝₜ = d/(2δ) [fₜ(xₜ + δuₜ) − fₜ(xₜ − δuₜ)] uₜ    (Eq. 4; or ∇fₜ(xₜ))
    4      Lₜ(x, λ) = fₜ(x) + ∑ₖ λₖgₖ(x) − (δ_M η/2)‖λ‖²   # aug. Lagrangian
    5      xₜ₊₁ = Π_B(xₜ − η[ĝₜ + ∑ₖ λₜ,ₖ∇gₖ(xₜ)])         # primal descent
    6      λₜ₊₁,ₖ = [λₜ,ₖ + η(gₖ(xₜ) − δ_M η λₜ,ₖ)]₊       # dual ascent

Readings and choices:

* B: the paper projects onto a simple ball containing the (complicated) feasible set.
  Here X itself is simple, so B = X, shrunk to (1 − ξ)X in the bandit variant so that the
  queries xₜ ± δuₜ stay in X where fₜ is defined (as Hikima do for their Eq. 5, after
  Mahdavi et al.'s own bandit version).  Iterates never leave X, so the metrics compare like
  with like; the functional constraint g is handled by the multiplier only.
* One multiplier per constraint, as published: for a linear or polyhedral family each row
  ⟨aₖ, x⟩ − bₖ is one gₖ with its own λₖ (``toolkit.constraint_rows``); any other family is
  one g (∇g by autodiff) with one λ.  δ_M = (m + 1)G² by default.  ``per_constraint=False``
  keeps the earlier reading, one λ on the family's scalar g = maxₖ gₖ with a subgradient of
  the max.  ``multiplier`` reports ∑ₖ λₖ.
* Round t's update uses gₜ = g(·, φₜ) (``inp.phi``), the constraint of the round being
  played; both updates are simultaneous, from (xₜ, λₜ).
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks
from jaxbco.algorithms import toolkit
from jaxbco.algorithms._base import AbstractAlgorithm, RoundInput
from jaxbco.algorithms.registry import register


class MahdaviHyper(eqx.Module):
    """The hyperparameters of ``MahdaviPrimalDual``: scalar arrays (or one per setting).

    Args:
        eta: the primal and dual step η, positive.
        delta_m: the dual regulariser δ of the paper, positive.
        delta: the bandit perturbation δ, positive (unused when ``bandit=False``).
        xi: the shrinkage ξ ∈ (0, 1) (unused when ``bandit=False``).

    Raises:
        ValueError: for a value outside its range.

    Example:
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import MahdaviPrimalDual
        >>> hyper = MahdaviPrimalDual().default_hyper(problems.make("quadratic-ball", dim=2), 100)
        >>> round(float(hyper.delta), 6), bool(hyper.delta_m > 0)   # δ = 1/T, δ_M = (m + 1)G²
        (0.01, True)
    """

    eta: jax.Array = eqx.field(converter=toolkit.real)
    delta_m: jax.Array = eqx.field(converter=toolkit.real)
    delta: jax.Array = eqx.field(converter=toolkit.real)
    xi: jax.Array = eqx.field(converter=toolkit.real)

    def __check_init__(self):
        toolkit.positive("eta", self.eta)
        toolkit.positive("delta_m", self.delta_m)
        toolkit.positive("delta", self.delta)
        toolkit.unit_open("xi", self.xi)


class MahdaviState(NamedTuple):
    x: jax.Array
    lam: jax.Array  # (m,): one multiplier per constraint (m = 1: per_constraint=False or one g)


class MahdaviPrimalDual(AbstractAlgorithm):
    """Primal-dual gradient steps on the augmented Lagrangian (Mahdavi, Jin, Yang 2012).

    Soft (long-term) constraints; see the module docstring.  Registered as "mahdavi-pd";
    hyperparameters ``MahdaviHyper``.

    Args:
        bandit: the two-point estimate in place of ∇fₜ (static; default True).
        per_constraint: one multiplier per row of a linear family (static; default True).

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import MahdaviPrimalDual
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> algorithm = MahdaviPrimalDual()
        >>> res = jaxbco.sweep(problem, 20, algorithm=algorithm, seeds=2, checkpoints=[20])
        >>> res.regret.shape, res.soft_violation.shape   # (settings, seeds, checkpoints)
        ((1, 2, 1), (1, 2, 1))
    """

    blocks = True
    kernel = True

    hyper_class: ClassVar[type] = MahdaviHyper

    bandit: bool = eqx.field(static=True, default=True)
    per_constraint: bool = eqx.field(static=True, default=True)

    def default_hyper(self, problem, horizon, *, lipschitz=None):
        """Orders of the paper's theorem: η = D/(G′√T) with G′ = dG for the bandit estimate (G
        for full information), δ_M = (m + 1)G² with m the constraints (rows,
        ``per_constraint``); G = ``lipschitz`` bounds the gradients of f and g (default:
        max(F, G) of the problem, ``jaxbco.offline.problem_constants``); δ = 1/T, ξ = δ/r."""
        horizon = checks.check_positive_int("horizon T", horizon)
        if lipschitz is None:
            k = toolkit.constants(problem, horizon)
            lipschitz = max(k["F"], k["G"])
        g = toolkit.given_or(lipschitz, "lipschitz", 1.0)
        g_est = problem.domain.hull_dim * g if self.bandit else g
        eta = float(problem.domain.diameter()) / (g_est * np.sqrt(horizon))
        delta = 1.0 / horizon
        m = self._count(problem, problem.initial_point())
        return MahdaviHyper(
            eta=eta,
            delta_m=(m + 1.0) * g * g,
            delta=delta,
            xi=toolkit.shrinkage(problem.domain, delta),
        )

    def check_hyper(self, hyper, problem):
        toolkit.check_type("MahdaviPrimalDual", hyper, MahdaviHyper)
        toolkit.check_perturbation(hyper, problem.domain, self.bandit)

    def _rows(self, problem, x, phi):
        """(g_k(x))_k and their gradients, (m,) and (m, d): each row its own constraint, or
        the family's one g (``per_constraint=False``: g = max_k g_k)."""
        if self.per_constraint:
            return toolkit.constraint_rows(problem, x, phi)
        g, grad = toolkit.constraint_value_and_grad(problem, x, phi)
        return g[None], grad[None]

    def _count(self, problem, x1) -> int:
        phi = problem.constraint_data.sample(checks.threefry_key(0), jnp.ones((), jnp.int32))
        return jax.eval_shape(lambda: self._rows(problem, x1, phi)[0]).shape[0]

    def init(self, problem, hyper, x1):
        return MahdaviState(x=x1, lam=jnp.zeros((self._count(problem, x1),), x1.dtype))  # line 1

    def step(self, state, problem, hyper, inp: RoundInput):
        x, lam = state
        grad_f = toolkit.loss_gradient(problem, inp.theta, x, inp.u, hyper.delta, self.bandit)  # 3
        g, grad_g = self._rows(problem, x, inp.phi)
        pull = jnp.sum(
            lam[:, None] * grad_g, axis=0
        )  # sum_k lambda_k grad g_k (one run or a block)
        x_next = toolkit.project(
            problem.domain, x - hyper.eta * (grad_f + pull), hyper.xi, self.bandit
        )  # line 5
        lam_next = jnp.maximum(lam + hyper.eta * (g - hyper.delta_m * hyper.eta * lam), 0.0)  # 6
        return MahdaviState(x=x_next, lam=lam_next)

    def decision(self, state):
        return state.x

    def multiplier(self, state):
        return jnp.sum(state.lam, axis=0)


register(
    "mahdavi-pd",
    MahdaviPrimalDual,
    regret_order="T^(1/2)",
    violation_order="soft T^(3/4)",
    exponents={"regret": 0.5, "soft_violation": 0.75},
    colour="#009E73",
    order=3,
)
