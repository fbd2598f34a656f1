"""Yuan, Lamperski (2018), "Online convex optimization for cumulative constraints" (NeurIPS
2018): primal-dual steps on a Lagrangian of the clipped constraint [g]_+, with the dual
maximised in closed form.  Here the two-point bandit estimate (Eq. 4 of Hikima)
replaces grad f_t, a bandit variant the paper does not analyse; ``bandit=False`` is the
full-information original.

Guarantee (full information): regret O(T^max(c, 1-c)), hard (clipped) violation
sum_t [g(x_t)]_+ = O(T^(1 - c/2)) for a user-chosen c in (0, 1); improved bounds when f_t is
strongly convex.

.. code-block:: text

    Require: eta > 0, sigma_Y > 0; (bandit) delta > 0, xi = delta / r in (0, 1).
    1  x_1 = the problem's start
    2  for t = 1..T:
    3      L_t(x, lambda) = f_t(x) + lambda [g_t(x)]_+ - (sigma_Y eta / 2) lambda^2
    4      lambda_t = argmax_lambda≥0 L_t(x_t, lambda) = [g_t(x_t)]_+ / (sigma_Y eta)  # closed-form dual
    5      g^_t = d/(2 delta) [f_t(x_t + delta u_t) - f_t(x_t - delta u_t)] u_t   (Eq. 4; or grad f_t(x_t))
    6      x_{t+1} = Pi_B(x_t - eta [g^_t + lambda_t grad [g_t]_+(x_t)])          # primal step

Readings and choices:
  * The paper writes lambda_{t+1} = [g(x_{t+1})]_+ / (sigma eta) after the primal step; with a
    fixed g this is line 4 of the next round.  With time-varying constraints round t's step
    uses g_t = g(., phi_t) (``inp.phi``) both in lambda_t and in its gradient.  The state
    keeps lambda_{t+1} = [g_{t+1}(x_{t+1})]_+ / (sigma_Y eta) (``inp.phi_next``) only for the
    recorded multiplier; the reported lambda_1 is 0 (exact whenever g_1(x_1) ≤ 0, e.g. the
    default centre start), while the update always uses the closed form of line 4.
  * grad [g]_+ is jax.grad of max(g, 0); it is multiplied by lambda_t, which is 0 whenever
    g_t(x_t) ≤ 0, so the kink at g = 0 never matters.
  * B: the paper projects onto a simple ball containing its constraint set; here X itself is
    simple, so B = X, shrunk to (1-xi)X in the bandit variant (queries stay in X).
  * Order of eta: T^(-max(c, 1-c)) (``default_hyper(..., c=...)``).
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


class YuanLamperskiHyper(eqx.Module):
    """The hyperparameters of ``YuanLamperski``: scalar arrays (or one per setting).

    Args:
        eta: the step η, positive.
        sigma: the dual regulariser σ_Y, positive.
        delta: the bandit perturbation δ, positive (unused when ``bandit=False``).
        xi: the shrinkage ξ ∈ (0, 1) (unused when ``bandit=False``).

    Raises:
        ValueError: for a value outside its range.

    Example:
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import YuanLamperski
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> hyper = YuanLamperski().default_hyper(problem, 100, c=0.75)
        >>> round(float(hyper.delta), 6), bool(hyper.eta > 0) and bool(hyper.sigma > 0)
        (0.01, True)
    """

    eta: jax.Array = eqx.field(converter=toolkit.real)
    sigma: jax.Array = eqx.field(converter=toolkit.real)
    delta: jax.Array = eqx.field(converter=toolkit.real)
    xi: jax.Array = eqx.field(converter=toolkit.real)

    def __check_init__(self):
        toolkit.positive("eta", self.eta)
        toolkit.positive("sigma", self.sigma)
        toolkit.positive("delta", self.delta)
        toolkit.unit_open("xi", self.xi)


class YuanLamperskiState(NamedTuple):
    x: jax.Array
    lam: jax.Array  # lambda_t, recorded only (the update recomputes it from g_t)


def _clipped(problem, phi):
    return lambda x: jnp.maximum(problem.constraint.value(x, phi), 0.0)


class YuanLamperski(AbstractAlgorithm):
    """The clipped-constraint primal-dual method of Yuan, Lamperski (2018), closed-form dual.

    Registered as "yuan-lamperski"; hyperparameters ``YuanLamperskiHyper``.

    Args:
        bandit: the two-point estimate in place of ∇fₜ (static; default True).

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import YuanLamperski
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> res = jaxbco.sweep(problem, 20, algorithm=YuanLamperski(), seeds=2, checkpoints=[20])
        >>> res.regret.shape, res.lam.shape   # λₜ at the checkpoints
        ((1, 2, 1), (1, 2, 1))
    """

    blocks = True
    kernel = True

    hyper_class: ClassVar[type] = YuanLamperskiHyper

    bandit: bool = eqx.field(static=True, default=True)

    def default_hyper(self, problem, horizon, *, c=0.5, lipschitz=None):
        """η = (D/G′) T^(−max(c, 1−c)) with G′ = dG (bandit) or G, σ_Y = (m + 1)G² with m = 1;
        G = ``lipschitz`` ≥ the gradients of f and g (default: max(F, G) of the problem,
        ``jaxbco.offline.problem_constants``); δ = 1/T, ξ = δ/r."""
        horizon = checks.check_positive_int("horizon T", horizon)
        checks.check_range("c", c, low=0.0, high=1.0, low_open=True, high_open=True)
        if lipschitz is None:
            k = toolkit.constants(problem, horizon)
            lipschitz = max(k["F"], k["G"])
        g = toolkit.given_or(lipschitz, "lipschitz", 1.0)
        g_est = problem.domain.hull_dim * g if self.bandit else g
        eta = float(problem.domain.diameter()) / g_est * horizon ** (-max(c, 1.0 - c))
        delta = 1.0 / horizon
        return YuanLamperskiHyper(
            eta=eta, sigma=2.0 * g * g, delta=delta, xi=toolkit.shrinkage(problem.domain, delta)
        )

    def check_hyper(self, hyper, problem):
        toolkit.check_type("YuanLamperski", hyper, YuanLamperskiHyper)
        toolkit.check_perturbation(hyper, problem.domain, self.bandit)

    def init(self, problem, hyper, x1):
        return YuanLamperskiState(x=x1, lam=jnp.zeros((), x1.dtype))

    def step(self, state, problem, hyper, inp: RoundInput):
        x = state.x
        scale = hyper.sigma * hyper.eta
        clipped, grad_clipped = ops.value_and_grad(_clipped(problem, inp.phi), x)
        lam = clipped / scale  # line 4
        grad_f = toolkit.loss_gradient(problem, inp.theta, x, inp.u, hyper.delta, self.bandit)  # 5
        x_next = toolkit.project(
            problem.domain, x - hyper.eta * (grad_f + lam * grad_clipped), hyper.xi, self.bandit
        )  # line 6
        lam_next = _clipped(problem, inp.phi_next)(x_next) / scale  # recorded lambda_{t+1}
        return YuanLamperskiState(x=x_next, lam=lam_next)

    def decision(self, state):
        return state.x

    def multiplier(self, state):
        return state.lam


register(
    "yuan-lamperski",
    YuanLamperski,
    regret_order="T^max(c,1-c) [full information]",
    violation_order="hard T^(1-c/2)",
    exponents={"regret": 0.5, "hard_violation": 0.75},
    colour="#CC79A7",
    order=5,
)
