"""Guo, Liu, Wei, Ying (2022), "Online convex optimization with hard constraints: towards the
best of two worlds and beyond" (NeurIPS 2022): RECOO, rectified constrained online
optimisation, the full-information method that Algorithm 1 of Hikima makes bandit.

Guarantee: regret O(sqrt T) and hard violation sum_t [g_t(x_t)]_+ = O(T^(3/4)) (convex);
O(log T) and O(sqrt(T log T)) when f_t is strongly convex (Table 1 of Hikima).

.. code-block:: text

    Require: alpha_t, gamma_t, eta_t > 0.
    1  x_1 in X, lambda_1 = 0
    2  for t = 1..T:
    3      observe grad f_t(x_t)                                      # full information (jax.grad)
    4      x_{t+1} = argmin_{x in X} ⟨grad f_t(x_t), x - x_t⟩ + lambda_t gamma_t [g_t(x)]_+
                                   + alpha_t/2 ||x - x_t||^2                           (Eq. 5)
    5      lambda_{t+1} = max{lambda_t + gamma_{t+1} [g_{t+1}(x_t)]_+, eta_{t+1}}     (Alg. 1 line 9)
    schedules (as Hikima's Thms. 1-4, c = 1/2 in Guo et al.):
       convex: alpha_t = a t^c, strongly convex: alpha_t = a sigma t;
       gamma_t = g t^(c + eps), eta_t = e t^c.

Readings: this is Algorithm 1 line by line (``rectified_bco.py``) with the true gradient in
place of the two-point estimate and the proximal step over X itself (no shrinkage: nothing is
queried off x_t).  The multiplier update follows Hikima's printed line 9 (the new
constraint g_{t+1} at x_t); the order of evaluation in Guo et al.'s
own queue update was not checked against their paper.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco._src import checks, ops
from jaxbco.algorithms import toolkit
from jaxbco.algorithms._base import AbstractAlgorithm, RoundInput
from jaxbco.algorithms.registry import register
from jaxbco.hyper import problem_modulus, schedule
from jaxbco.solvers import AbstractProxSolver, Dual


class RecooHyper(eqx.Module):
    """The hyperparameters of ``RECOO``: ``jaxbco.Hyper`` without the bandit parameters δ, ξ.

    Args:
        c: the schedules' exponent, in [1/2, 1) (default 1/2).
        eps: ε, positive: γₜ grows as t^(c+ε) (default 0.1).
        sigma: the modulus σ of the strongly convex schedule, positive (default 1).
        alpha_scale: the scale of αₜ, positive (default 1).
        gamma_scale: the scale of γₜ, positive (default 1).
        eta_scale: the scale of ηₜ, positive (default 1).

    Raises:
        ValueError: for a value outside its range.

    Example:
        >>> from jaxbco.algorithms import RecooHyper
        >>> hyper = RecooHyper(c=0.75)
        >>> [round(float(v), 6) for v in (hyper.c, hyper.eps, hyper.alpha_scale)]
        [0.75, 0.1, 1.0]
    """

    c: jax.Array = eqx.field(converter=toolkit.real, default=0.5)
    eps: jax.Array = eqx.field(converter=toolkit.real, default=0.1)
    sigma: jax.Array = eqx.field(converter=toolkit.real, default=1.0)
    alpha_scale: jax.Array = eqx.field(converter=toolkit.real, default=1.0)
    gamma_scale: jax.Array = eqx.field(converter=toolkit.real, default=1.0)
    eta_scale: jax.Array = eqx.field(converter=toolkit.real, default=1.0)

    def __check_init__(self):
        checks.check_range("c", self.c, low=0.5, high=1.0, high_open=True)
        for name in ("eps", "sigma", "alpha_scale", "gamma_scale", "eta_scale"):
            toolkit.positive(name, getattr(self, name))


class RecooState(NamedTuple):
    x: jax.Array
    lam: jax.Array


class RECOO(AbstractAlgorithm):
    """RECOO (Guo, Liu, Wei, Ying 2022): Algorithm 1 with the true gradient, over X itself.

    Registered as "recoo"; hyperparameters ``RecooHyper``.

    Args:
        solver: the prox solver of Eq. (5) (default ``solvers.Dual()``).
        strongly_convex: the strongly convex schedule αₜ = σt (static).

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import RECOO
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> res = jaxbco.sweep(problem, 20, algorithm=RECOO(), seeds=2, checkpoints=[20])
        >>> res.regret.shape, res.prox_method
        ((1, 2, 1), 'BallHalfspace (closed form: ball n halfspace)')
    """

    blocks = True
    kernel = True

    hyper_class: ClassVar[type] = RecooHyper

    solver: AbstractProxSolver = Dual()
    strongly_convex: bool = eqx.field(static=True, default=False)

    def default_hyper(self, problem, horizon):
        """c = 1/2, ε = 0.1, unit scales, σ = the loss's modulus on a strongly convex problem
        (``hyper.problem_modulus``), else 1 (as Algorithm 1's defaults)."""
        checks.check_positive_int("horizon T", horizon)
        return RecooHyper(sigma=problem_modulus(problem))

    def check_hyper(self, hyper, problem):
        toolkit.check_type("RECOO", hyper, RecooHyper)

    def init(self, problem, hyper, x1):
        return RecooState(x=x1, lam=jnp.zeros((), x1.dtype))  # line 1

    def step(self, state, problem, hyper, inp: RoundInput):
        x, lam = state
        alpha, gamma, _ = schedule(hyper, inp.t, self.strongly_convex)
        _, gamma_next, eta_next = schedule(hyper, inp.t + 1, self.strongly_convex)
        grad = ops.value_and_grad(lambda z: problem.loss.value(z, inp.theta), x)[1]  # line 3
        # line 4 (Eq. 5) with y = x_t - grad / alpha_t, beta = lambda_t gamma_t, over X (xi = 0)
        xi = jnp.zeros((), x.dtype)
        x_next = self.solver.solve(
            problem.domain, xi, problem.constraint, inp.phi, x, x - grad / alpha, alpha, lam * gamma
        )
        violation = jnp.maximum(problem.constraint.value(x, inp.phi_next), 0.0)
        lam_next = jnp.maximum(lam + gamma_next * violation, eta_next)  # line 5
        return RecooState(x=x_next, lam=lam_next)

    def decision(self, state):
        return state.x

    def multiplier(self, state):
        return state.lam


register(
    "recoo",
    RECOO,
    regret_order="T^(1/2) (log T) [full information]",
    violation_order="hard T^(3/4) (sqrt(T log T))",
    exponents={"regret": 0.5, "hard_violation": 0.75},
    colour="#332288",
    order=4,
)
