"""Flaxman, Kalai, McMahan (2004), "Online convex optimization in the bandit setting: gradient
descent without a gradient" (SODA 2005): one-point bandit gradient descent (BGD).

Guarantee (as the sources state it): E[regret] = O(T^(3/4)) for Lipschitz losses and
O(T^(5/6)) for bounded ones (FKM 2004); the Hikima Table 1 row reads O(d^(2/3) T^(2/3)).
No constraint-violation guarantee: it only knows a set to project onto.  ORACLE: on a fixed
constraint ``FlaxmanBGD`` is given g in advance (``knows_constraint = True``) and projects onto
(1 − ξ)X ∩ {g ≤ 0}, so its violation is ~0 by construction; ``FlaxmanBGDXOnly`` (registered as
"flaxman-bgd-xonly") is the fair variant that projects onto (1 − ξ)X only and never uses g.

.. code-block:: text

    Require: ν > 0, δ > 0, ξ = δ/r ∈ (0, 1).
    1  y₁ = Π(x₁)                                    (x₁: the problem's start)
    2  for t = 1..T:
    3      draw uₜ uniformly from the unit sphere
    4      play xₜ = yₜ + δuₜ, observe fₜ(xₜ) only   # BGD step 1
    5      ĝₜ = (d/δ) fₜ(xₜ) uₜ                      # one-point estimate
    6      yₜ₊₁ = Π(yₜ − νĝₜ)                        # BGD step 2

Π is the projection onto

* (1 − ξ)X ∩ {g ≤ 0} when the constraint is fixed (``constraint_data`` is
  ``sequences.Fixed``): the learner must know g in advance to project onto it; the played
  xₜ = yₜ + δuₜ may still violate g by up to δ Lip(g);
* (1 − ξ)X otherwise (a time-varying gₜ is not known when yₜ₊₁ is chosen); the violation
  is only recorded.

Readings:

* d is the dimension of X's affine hull (``domain.hull_dim``; d − 1 on the simplex);
* the paper's step size multiplies fₜ(xₜ)uₜ directly: its ν is our νd/δ;
* y₁ is the projection of the problem's x₁ (the inscribed-ball centre by default), so
  every iterate yₜ lies in the projection set.
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


class FlaxmanHyper(eqx.Module):
    """The hyperparameters of ``FlaxmanBGD``: scalar arrays (or one per setting of a grid).

    Args:
        nu: the step ν on the estimate, positive.
        delta: the perturbation δ, positive (δ ≤ ξr is checked against X in ``check_hyper``).
        xi: the shrinkage ξ ∈ (0, 1).

    Raises:
        ValueError: for a value outside its range.

    Example:
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import FlaxmanBGD, FlaxmanHyper
        >>> hyper = FlaxmanBGD().default_hyper(problems.make("quadratic-ball", dim=2), 10_000)
        >>> round(float(hyper.delta), 4)   # r T^(−1/4), r = 1
        0.1
        >>> FlaxmanHyper(nu=0.1, delta=0.1, xi=1.5)
        Traceback (most recent call last):
        ValueError: ...
    """

    nu: jax.Array = eqx.field(converter=toolkit.real)
    delta: jax.Array = eqx.field(converter=toolkit.real)
    xi: jax.Array = eqx.field(converter=toolkit.real)

    def __check_init__(self):
        toolkit.positive("nu", self.nu)
        toolkit.positive("delta", self.delta)
        toolkit.unit_open("xi", self.xi)


class FlaxmanState(NamedTuple):
    y: jax.Array  # y_t, the unperturbed iterate
    warm: object = ()  # the oracle projection's multiplier (``_common.warm_projector``)


class AbstractFlaxmanBGD(AbstractAlgorithm):
    """One-point bandit gradient descent (Flaxman, Kalai, McMahan 2004): ``play`` is
    xₜ = yₜ + δuₜ, ``decision`` the unperturbed yₜ, projected onto (1 − ξ)X and, for a final
    class that declares ``knows_constraint``, onto a fixed g's set.  Hyperparameters
    ``FlaxmanHyper``."""

    hyper_class: ClassVar[type] = FlaxmanHyper

    def default_hyper(self, problem, horizon, *, value_bound=None):
        """δ = r T^(−1/4) (at most r/2), ξ = δ/r and the paper's step R/(C√T) on fu, i.e.
        ν = Rδ/(dC√T) on (d/δ)fu, with R = D/2 (radius about the centre) and
        C = ``value_bound`` ≥ |fₜ| on X (default: the problem's,
        ``jaxbco.offline.problem_constants``)."""
        horizon = checks.check_positive_int("horizon T", horizon)
        if value_bound is None:
            value_bound = toolkit.constants(problem, horizon)["C"]
        value_bound = toolkit.given_or(value_bound, "value_bound", 1.0)
        _, r = problem.domain.inscribed_ball()
        r = float(r)
        delta = r * min(horizon**-0.25, 0.5)
        radius = 0.5 * float(problem.domain.diameter())
        nu = radius * delta / (problem.domain.hull_dim * float(value_bound) * np.sqrt(horizon))
        return FlaxmanHyper(nu=nu, delta=delta, xi=toolkit.shrinkage(problem.domain, delta))

    def check_hyper(self, hyper, problem):
        toolkit.check_type("FlaxmanBGD", hyper, FlaxmanHyper)
        toolkit.check_perturbation(hyper, problem.domain)

    def init(self, problem, hyper, x1):
        project = _common.warm_projector(
            problem, hyper.xi, _common.fixed_phi(problem), self.knows_constraint
        )
        warm = _common.projection_warm(problem, x1.dtype, self.knows_constraint)
        return FlaxmanState(*project(x1, warm))  # line 1

    def play(self, state, problem, hyper, inp: RoundInput):
        return state.y + hyper.delta * inp.u  # line 4

    def step(self, state, problem, hyper, inp: RoundInput):
        y = state.y
        x = self.play(state, problem, hyper, inp)
        d_hull = toolkit.estimator_dim(problem.domain, y.dtype)
        grad = toolkit.one_point_gradient(
            problem.loss, inp.theta, x, inp.u, hyper.delta, d_hull
        )  # line 5
        project = _common.warm_projector(problem, hyper.xi, inp.phi, self.knows_constraint)
        return FlaxmanState(*project(y - hyper.nu * grad, state.warm))  # line 6

    def decision(self, state):
        return state.y

    def multiplier(self, state):
        return jnp.zeros_like(state.y[0])  # one zero per run

    def prox_methods(self, problem):
        return _common.oracle_methods(problem, self.knows_constraint)


class FlaxmanBGD(AbstractFlaxmanBGD):
    """One-point bandit gradient descent (Flaxman, Kalai, McMahan 2004), given g in advance.

    ``play`` is xₜ = yₜ + δuₜ, ``decision`` the unperturbed yₜ; a fixed g is projected onto
    (an oracle row in comparisons; see the module docstring).  Registered as "flaxman-bgd".
    No constructor arguments; hyperparameters ``FlaxmanHyper``.

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import FlaxmanBGD
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> res = jaxbco.sweep(problem, 20, algorithm=FlaxmanBGD(), seeds=2, checkpoints=[10, 20])
        >>> res.regret.shape, res.engine
        ((1, 2, 2), 'seeds-minor')
    """

    blocks = True
    kernel = True

    knows_constraint: ClassVar[bool] = True


class FlaxmanBGDXOnly(AbstractFlaxmanBGD):
    """One-point BGD that does not know g: Π is the projection onto (1 − ξ)X whatever the
    constraint (the violation is only recorded); otherwise as ``FlaxmanBGD``.  Registered as
    "flaxman-bgd-xonly".

    Example:
        >>> from jaxbco.algorithms import FlaxmanBGD, FlaxmanBGDXOnly, registry
        >>> registry.get("flaxman-bgd-xonly").factory is FlaxmanBGDXOnly
        True
        >>> FlaxmanBGD.knows_constraint, FlaxmanBGDXOnly.knows_constraint
        (True, False)
    """

    blocks = True
    kernel = True

    knows_constraint: ClassVar[bool] = False


register(
    "flaxman-bgd",
    FlaxmanBGD,
    regret_order="T^(3/4)",
    violation_order="none (projects onto a known set)",
    exponents={"regret": 0.75},
    colour="#E69F00",
    order=1,
)
register(
    "flaxman-bgd-xonly",
    FlaxmanBGDXOnly,
    regret_order="T^(3/4) (theorem for a known feasible set; here g unused)",
    violation_order="no bound (g unused)",
    exponents={"regret": 0.75},
    xonly=True,
    colour="#661100",
    order=7,
)
