"""Yu, Neely (2020), "A low complexity algorithm with O(sqrt T) regret and O(1) constraint
violations for online convex optimization with long term constraints" (JMLR 21):
drift-plus-penalty with a virtual queue.  ``bandit=True`` (default) uses the two-point
estimate (Eq. 4 of Hikima et al.) in place of grad f_t, a variant the paper does not analyse;
``bandit=False`` is the full-information original with grad f_t by jax.grad.

Guarantee (full information, fixed g): regret O(sqrt T) and soft violation O(1).

    Require: V > 0, alpha > 0, gamma > 0; (bandit) delta > 0, xi = delta / r in (0, 1).
    1  x_1 = the problem's start, Q_1 = 0
    2  for t = 1..T:
    3      g^_t = d/(2 delta) [f_t(x_t + delta u_t) - f_t(x_t - delta u_t)] u_t   (Eq. 4; or grad f_t(x_t))
    4      x_{t+1} = argmin_{x in X} V <g^_t, x> + Q_t <grad g_t(x_t), x> + alpha ||x - x_t||^2
               = Pi_X(x_t - (V g^_t + Q_t grad g_t(x_t)) / (2 alpha))            # primal step
    5      Q_{t+1} = max{-gamma g_t(x_{t+1}), Q_t + gamma g_t(x_{t+1})}           # virtual queue
  defaults: gamma = T^(1/4), alpha = (d + 1) sqrt(T) / 2, V = 1 (the constants of a public
  reproduction of the paper's example, where they equal (beta^2 + 1) sqrt(T) / 2 with
  beta = sqrt(d) a bound on ||grad g||).

Readings and choices:
  * One queue: the constraint family's g is one scalar (already the max of a polyhedral
    family's rows), so the paper's per-constraint queues Q_k become one Q on g; grad g is
    jax.grad of ``constraint.value`` (a subgradient of the max).
  * Line 4 is the linearised update of BASELINES.md: the queue weight is Q_t on the
    linearisation of g at x_t.  Whether the paper's argmin weighs gamma g_k(x) by
    Q_k(t) + gamma g_k(x_t) (which the max{-gamma g, .} form of line 5 keeps >= 0) instead
    could not be checked against the paper itself.  Q_t >= 0 always holds here.
  * Time-varying constraints: round t's update uses g_t = g(., phi_t) (``inp.phi``) in both
    lines 4 and 5 (the paper's g is fixed).
  * X: the primal step projects onto (1-xi)X in the bandit variant (queries stay in X), onto
    X with full information.
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import _checks
from jaxbco.algorithms import _common
from jaxbco.algorithms._base import AbstractAlgorithm, RoundInput


class YuNeelyHyper(eqx.Module):
    """V > 0 (penalty weight), alpha > 0 (proximal weight), gamma > 0 (queue scale),
    delta > 0 and xi in (0, 1) (bandit perturbation and shrinkage; unused when bandit=False)."""

    V: jax.Array = eqx.field(converter=jnp.asarray)
    alpha: jax.Array = eqx.field(converter=jnp.asarray)
    gamma: jax.Array = eqx.field(converter=jnp.asarray)
    delta: jax.Array = eqx.field(converter=jnp.asarray)
    xi: jax.Array = eqx.field(converter=jnp.asarray)

    def __check_init__(self):
        _common.positive("V", self.V)
        _common.positive("alpha", self.alpha)
        _common.positive("gamma", self.gamma)
        _common.positive("delta", self.delta)
        _common.unit_open("xi", self.xi)


class YuNeelyState(NamedTuple):
    x: jax.Array
    Q: jax.Array


class YuNeely(AbstractAlgorithm):
    """Drift-plus-penalty with one virtual queue."""

    bandit: bool = eqx.field(static=True, default=True)

    def default_hyper(self, problem, horizon):
        """gamma = T^(1/4), alpha = (d + 1) sqrt(T) / 2, V = 1; delta = 1 / T, xi = delta / r."""
        horizon = _checks.check_positive_int("horizon T", horizon)
        delta = 1.0 / horizon
        return YuNeelyHyper(V=1.0, alpha=0.5 * (problem.dim + 1) * np.sqrt(horizon),
                            gamma=horizon ** 0.25, delta=delta,
                            xi=_common.shrinkage(problem.domain, delta))

    def check_hyper(self, hyper, problem):
        _common.check_type("YuNeely", hyper, YuNeelyHyper)
        _common.check_perturbation(hyper, problem.domain, self.bandit)

    def init(self, problem, hyper, x1):
        return YuNeelyState(x=x1, Q=jnp.zeros((), x1.dtype))  # line 1

    def step(self, state, problem, hyper, inp: RoundInput):
        x, Q = state
        grad_f = _common.loss_gradient(problem, inp.theta, x, inp.u, hyper.delta, self.bandit)  # 3
        _, grad_g = _common.constraint_value_and_grad(problem, x, inp.phi)
        direction = (hyper.V * grad_f + Q * grad_g) / (2.0 * hyper.alpha)
        x_next = _common.project(problem.domain, x - direction, hyper.xi, self.bandit)  # line 4
        g_next = problem.constraint.value(x_next, inp.phi)
        Q_next = jnp.maximum(-hyper.gamma * g_next, Q + hyper.gamma * g_next)  # line 5
        return YuNeelyState(x=x_next, Q=Q_next)

    def decision(self, state):
        return state.x

    def multiplier(self, state):
        return state.Q
