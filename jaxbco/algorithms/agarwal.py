"""Agarwal, Dekel, Xiao (2010), "Optimal algorithms for online convex optimization with
multi-point bandit feedback" (COLT 2010): two-point bandit gradient descent.

Guarantee: E[regret] = O(d²√T) for convex Lipschitz losses, O(d² log T) for strongly convex
ones (Table 1 of Hikima); no constraint-violation guarantee.

.. code-block:: text

    Require: η > 0 (or σ > 0), δ > 0, ξ = δ/r ∈ (0, 1).
    1  x₁ = Π(x₁)                                         (x₁: the problem's start)
    2  for t = 1..T:
    3      draw uₜ uniformly from the unit sphere
    4      query fₜ at xₜ + δuₜ and xₜ − δuₜ
    5      g̃ₜ = d/(2δ) [fₜ(xₜ + δuₜ) − fₜ(xₜ − δuₜ)] uₜ   (Eq. 4)
    6      xₜ₊₁ = Π(xₜ − ηₜg̃ₜ)                            # projected step
       with ηₜ = η          (convex, η = D/(dG√T)),
            ηₜ = η/√t       (anytime=True, η = D/(dG)),
            ηₜ = 1/(σt)     (strongly_convex=True).

Π is the projection onto (1 − ξ)X ∩ {g ≤ 0} when the constraint is fixed
(``constraint_data`` is ``sequences.Fixed``: the learner must know g in advance), else onto
(1 − ξ)X, with the violation only recorded.  The played point is the centre xₜ (the two
queries are observations, as in the paper's Algorithm 1), so with a fixed g every played
point is feasible.  ORACLE: ``AgarwalTwoPoint`` is given a fixed g in advance
(``knows_constraint = True``), so its violation is 0 by construction;
``AgarwalTwoPointXOnly`` (registered as "agarwal-2pt-xonly") is the fair variant that
projects onto (1 − ξ)X only and never uses g.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks
from jaxbco.algorithms import _common, toolkit
from jaxbco.algorithms._base import AbstractAlgorithm, RoundInput
from jaxbco.algorithms.registry import register


class AgarwalHyper(eqx.Module):
    """The hyperparameters of ``AgarwalTwoPoint``: scalar arrays (or one per setting of a grid).

    Args:
        eta: the step η, positive.
        delta: the perturbation δ, positive.
        xi: the shrinkage ξ ∈ (0, 1).
        sigma: the strong-convexity modulus σ, positive (used only with
            ``strongly_convex=True``; default 1).

    Raises:
        ValueError: for a value outside its range.

    Example:
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import AgarwalHyper, AgarwalTwoPoint
        >>> hyper = AgarwalTwoPoint().default_hyper(problems.make("quadratic-ball", dim=2), 100)
        >>> round(float(hyper.delta), 6), float(hyper.sigma)   # δ = 1/T; σ: the loss's modulus
        (0.01, 2.0)
        >>> AgarwalHyper(eta=0.1, delta=0.01, xi=0.01, sigma=-1.0)
        Traceback (most recent call last):
        ValueError: ...
    """

    eta: jax.Array = eqx.field(converter=toolkit.real)
    delta: jax.Array = eqx.field(converter=toolkit.real)
    xi: jax.Array = eqx.field(converter=toolkit.real)
    sigma: jax.Array = eqx.field(converter=toolkit.real, default=1.0)

    def __check_init__(self):
        toolkit.positive("eta", self.eta)
        toolkit.positive("delta", self.delta)
        toolkit.unit_open("xi", self.xi)
        toolkit.positive("sigma", self.sigma)


class AgarwalState(NamedTuple):
    x: jax.Array
    warm: object = ()  # the oracle projection's multiplier (``_common.warm_projector``)


class AbstractAgarwalTwoPoint(AbstractAlgorithm):
    """Two-point bandit gradient descent (Agarwal, Dekel, Xiao 2010), projected onto
    (1 − ξ)X and, for a final class that declares ``knows_constraint``, onto a fixed g's set;
    fields ``strongly_convex`` and ``anytime`` (the final classes' Args)."""

    hyper_class: ClassVar[type] = AgarwalHyper

    strongly_convex: bool = eqx.field(static=True, default=False)
    anytime: bool = eqx.field(static=True, default=False)

    def default_hyper(self, problem, horizon, *, lipschitz=None, sigma=None):
        """η = D/(dG√T) (D/(dG) when ``anytime``), G = ``lipschitz`` ≥ Lip(fₜ) (default: the
        problem's F, ``jaxbco.offline.problem_constants``); δ = 1/T, ξ = δ/r; σ = the loss's
        strong convexity if it has one, else 1."""
        horizon = checks.check_positive_int("horizon T", horizon)
        if lipschitz is None:
            lipschitz = toolkit.constants(problem, horizon)["F"]
        lipschitz = toolkit.given_or(lipschitz, "lipschitz", 1.0)
        scale = float(problem.domain.diameter()) / (problem.domain.hull_dim * float(lipschitz))
        eta = scale if self.anytime else scale / np.sqrt(horizon)
        if sigma is None:
            sigma = float(problem.loss.strong_convexity())
            sigma = sigma if sigma > 0 else 1.0
        delta = 1.0 / horizon
        return AgarwalHyper(
            eta=eta, delta=delta, xi=toolkit.shrinkage(problem.domain, delta), sigma=sigma
        )

    def check_hyper(self, hyper, problem):
        toolkit.check_type("AgarwalTwoPoint", hyper, AgarwalHyper)
        toolkit.check_perturbation(hyper, problem.domain)

    def init(self, problem, hyper, x1):
        project = _common.warm_projector(
            problem, hyper.xi, _common.fixed_phi(problem), self.knows_constraint
        )
        warm = _common.projection_warm(problem, x1.dtype, self.knows_constraint)
        return AgarwalState(*project(x1, warm))  # line 1

    def step_size(self, hyper, t):
        tf = t.astype(hyper.eta.dtype)
        if self.strongly_convex:
            return 1.0 / (hyper.sigma * tf)
        if self.anytime:
            return hyper.eta / jnp.sqrt(tf)
        return hyper.eta

    def step(self, state, problem, hyper, inp: RoundInput):
        x = state.x
        grad = toolkit.loss_gradient(problem, inp.theta, x, inp.u, hyper.delta, True)  # 4-5
        eta = self.step_size(hyper, inp.t)
        project = _common.warm_projector(problem, hyper.xi, inp.phi, self.knows_constraint)
        return AgarwalState(*project(x - eta * grad, state.warm))  # line 6

    def decision(self, state):
        return state.x

    def multiplier(self, state):
        return jnp.zeros_like(state.x[0])  # one zero per run

    def prox_methods(self, problem):
        return _common.oracle_methods(problem, self.knows_constraint)


class AgarwalTwoPoint(AbstractAgarwalTwoPoint):
    """Two-point bandit gradient descent (Agarwal, Dekel, Xiao 2010), given g in advance.

    A fixed g is projected onto (an oracle row in comparisons; see the module docstring).
    Registered as "agarwal-2pt"; hyperparameters ``AgarwalHyper``.

    Args:
        strongly_convex: the step ηₜ = 1/(σt) (static).
        anytime: the step ηₜ = η/√t (static); neither: the constant step η.

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import AgarwalTwoPoint
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> algorithm = AgarwalTwoPoint(anytime=True)   # ηₜ = η/√t
        >>> res = jaxbco.sweep(problem, 20, algorithm=algorithm, seeds=2, checkpoints=[10, 20])
        >>> res.regret.shape, float(res.hard_violation.max())   # g known: never violated
        ((1, 2, 2), 0.0)
    """

    blocks = True
    kernel = True

    knows_constraint: ClassVar[bool] = True


class AgarwalTwoPointXOnly(AbstractAgarwalTwoPoint):
    """Two-point bandit gradient descent that never uses g (Agarwal, Dekel, Xiao 2010).

    Π is the projection onto (1 − ξ)X whatever the constraint, so the violation is only
    recorded: the fair variant of the oracle ``AgarwalTwoPoint``, otherwise the same.
    Registered as "agarwal-2pt-xonly"; hyperparameters ``AgarwalHyper``.

    Args:
        strongly_convex: as ``AgarwalTwoPoint``'s (static).
        anytime: as ``AgarwalTwoPoint``'s (static).

    Example:
        >>> from jaxbco.algorithms import AgarwalTwoPoint, AgarwalTwoPointXOnly, registry
        >>> registry.get("agarwal-2pt-xonly").factory is AgarwalTwoPointXOnly
        True
        >>> AgarwalTwoPoint.knows_constraint, AgarwalTwoPointXOnly.knows_constraint
        (True, False)
    """

    blocks = True
    kernel = True

    knows_constraint: ClassVar[bool] = False


register(
    "agarwal-2pt",
    AgarwalTwoPoint,
    regret_order="T^(1/2) (log T if strongly convex)",
    violation_order="none (projects onto a known set)",
    exponents={"regret": 0.5},
    colour="#999933",
    order=2,
)
register(
    "agarwal-2pt-xonly",
    AgarwalTwoPointXOnly,
    regret_order="T^(1/2) (theorem for a known feasible set; here g unused)",
    violation_order="no bound (g unused)",
    exponents={"regret": 0.5},
    xonly=True,
    colour="#CC3311",
    order=8,
)
