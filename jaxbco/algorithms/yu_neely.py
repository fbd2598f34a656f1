"""Yu, Neely (2020), "A low complexity algorithm with O(sqrt T) regret and O(1) constraint
violations for online convex optimization with long term constraints" (JMLR 21; arXiv
1604.02218): drift-plus-penalty with one virtual queue per constraint.  ``bandit=True``
(default) uses the two-point estimate (Eq. 4 of Hikima) where the paper has grad f_t,
a variant the paper does not analyse; ``bandit=False`` is the full-information method with
grad f_t by jax.grad.

Guarantee (full information, fixed g, Slater): regret O(sqrt T) and soft violation
sum_t g_k(x_t) = O(1) with gamma = T^(1/4), alpha = (beta^2 + 1) sqrt(T) / 2.

.. code-block:: text

    Require: gamma > 0, alpha > 0 (V > 0, 1 in the paper); (bandit) delta > 0, xi = delta / r.
    1  x_1 = the problem's start, Q_k(1) = 0 for every constraint k = 1..m
    2  for t = 1..T:
    3      g^_t = d/(2 delta) [f_t(x_t + delta u_t) - f_t(x_t - delta u_t)] u_t   (Eq. 4; or grad f_t(x_t))
    4      w_k = [Q_k(t) + gamma g_k(x_t)] gamma                                  (≥ 0, see below)
    5      x_{t+1} = argmin_{x in X} V ⟨g^_t, x - x_t⟩ + sum_k w_k ⟨grad g_k(x_t), x - x_t⟩
                                     + alpha ||x - x_t||^2
               = Pi_X(x_t - (V g^_t + sum_k w_k grad g_k(x_t)) / (2 alpha))       # primal step
    6      Q_k(t+1) = max{-gamma g_k(x_{t+1}), Q_k(t) + gamma g_k(x_{t+1})}        # virtual queues
    defaults: gamma = T^(1/4), alpha = (beta^2 + 1) sqrt(T) / 2, V = 1, beta a Lipschitz
    constant of the constraint vector (g_1, ..., g_m) on X (computed from the problem, see
    ``beta``).

Sources (details in the Yu-Neely notes of the documentation):

  * The paper's own text (its Algorithm 1, the drift lemma and the theorem with its constants)
    was not available; section, algorithm and theorem numbers are therefore not cited.
  * A public MATLAB reproduction of the paper's 2-D example (GitHub
    SapanaChaudhary/OCO-Long-Term-Constraints, files Hao_and_Neely.m and main.m) sets
    gamma = T^(1/4), beta = sqrt(d), alpha = (beta^2 + 1) sqrt(T) / 2, weighs grad f by 1
    (no V), and updates the queues as line 6 (the queue of gamma g_k); its primal step weighs
    the constraint gradients by a matrix that is never filled (all zeros), so its queues never
    enter its update.
  * Line 4 is reconstructed, not read: the queue of line 6 is the queue of the scaled
    constraint gamma g_k, so in the linearised drift-plus-penalty bound its weight on the
    constraint's gradient is gamma grad g_k; and the form max{-gamma g, .} of line 6 exists to
    keep Q_k(t) + gamma g_k(x_t) ≥ 0, which is needed exactly when that sum (not Q_k(t)) weighs
    the (convex) constraint term of the primal subproblem.  Expanding
    1/2 Q(t+1)^2 - 1/2 Q(t)^2 ≤ Q(t) gamma g(x_{t+1}) + gamma^2 g(x_{t+1})^2 with
    gamma^2 g(x_{t+1})^2 = gamma^2 g(x_t) g(x_{t+1}) + 1/2 gamma^2 (g(x_{t+1})^2 - g(x_t)^2)
    + 1/2 gamma^2 (g(x_{t+1}) - g(x_t))^2 gives the weight [Q(t) + gamma g(x_t)] gamma and a
    remainder 1/2 gamma^2 beta^2 ||x_{t+1} - x_t||^2 that alpha ≥ gamma^2 beta^2 / 2 absorbs:
    with gamma = T^(1/4) that is beta^2 sqrt(T) / 2, and the remaining sqrt(T) / 2 of alpha is
    the usual O(sqrt T) proximal weight for f; so the reproduction's alpha and gamma fit this
    line (and not a weight Q_t alone).  Whether the paper's subproblem
    keeps g_k(x) itself instead of its linearisation at x_t could not be checked: the two
    coincide (up to a constant) for linear g_k, the paper's example; for a curved g the step
    here is the linearised one (a projection).
  * beta: the reproduction's sqrt(d) is its own guess for the example; here beta is computed:
    for linear rows g(x) = A x - b, beta = ||A||_2 (spectral norm); otherwise the
    constraint's ``lipschitz`` bound on a ball about 0 containing X, or, where it has none,
    the largest ||grad g|| sampled on X.  For a time-varying constraint, the largest over the
    data of the first rounds (64 rounds, key 0).

Readings and choices:
  * One queue per row: for linear and polyhedral constraint families (g = max_i of rows
    A x - b, ``constraint.rows``) each row is one of the paper's g_k with its own queue Q_k
    (the state holds the vector Q); a smooth family is one g with one queue.
    ``multiplier`` reports sum_k Q_k(t).
  * Time-varying constraints: round t uses g_t = g(., phi_t) in lines 4 to 6 (the paper's g is
    fixed).  Q_k(t) + gamma g_{k,t}(x_t) can then be negative (Q_k(t) was updated with
    g_{t-1}); the weight of line 4 is clipped at 0 so the subproblem stays convex.  With a
    fixed g the clip is inactive (it only absorbs rounding).
  * X: the primal step projects onto (1-xi)X in the bandit variant (queries stay in X), onto
    X with full information.
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
from jaxbco.offline.problem_constants import outer_radius


class YuNeelyHyper(eqx.Module):
    """The hyperparameters of ``YuNeely``: scalar arrays (or one per setting).

    Args:
        V: the weight of the loss gradient, positive (1 in the paper).
        alpha: the proximal weight α, positive.
        gamma: the constraint scale γ of the queues, positive.
        delta: the bandit perturbation δ, positive (unused when ``bandit=False``).
        xi: the shrinkage ξ ∈ (0, 1) (unused when ``bandit=False``).

    Raises:
        ValueError: for a value outside its range.

    Example:
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import YuNeely
        >>> hyper = YuNeely().default_hyper(problems.make("quadratic-ball", dim=2), 10_000)
        >>> float(hyper.gamma), float(hyper.V)   # γ = T^(1/4), V = 1
        (10.0, 1.0)
    """

    V: jax.Array = eqx.field(converter=toolkit.real)
    alpha: jax.Array = eqx.field(converter=toolkit.real)
    gamma: jax.Array = eqx.field(converter=toolkit.real)
    delta: jax.Array = eqx.field(converter=toolkit.real)
    xi: jax.Array = eqx.field(converter=toolkit.real)

    def __check_init__(self):
        toolkit.positive("V", self.V)
        toolkit.positive("alpha", self.alpha)
        toolkit.positive("gamma", self.gamma)
        toolkit.positive("delta", self.delta)
        toolkit.unit_open("xi", self.xi)


class YuNeelyState(NamedTuple):
    x: jax.Array
    Q: jax.Array  # (m,): one queue per constraint row


def _first_phis(problem, rounds: int = 64):
    """Constraint data of the fixed constraint (leading axis 1), or of rounds 1..64 (key 0)."""
    if _common.is_fixed(problem):
        return jax.tree_util.tree_map(lambda v: jnp.asarray(v)[None], _common.fixed_phi(problem))
    ts = jnp.arange(1, rounds + 1, dtype=jnp.int32)
    keys = jax.random.split(checks.threefry_key(0), rounds)
    return jax.vmap(problem.constraint_data.sample)(keys, ts)


def beta(problem) -> float:
    """A Lipschitz constant of (g_1, ..., g_m) on X (see the module docstring)."""
    phis = _first_phis(problem)
    con = problem.constraint
    if toolkit.rowwise(con):
        norms = jax.vmap(lambda p: jnp.linalg.norm(jnp.asarray(con.rows(p)[0]), ord=2))(phis)
        return float(jnp.max(norms))
    radius = outer_radius(problem.domain)
    try:
        return float(jnp.max(jax.vmap(lambda p: con.lipschitz(p, radius))(phis)))
    except NotImplementedError:
        c, _ = problem.domain.inscribed_ball()
        z = jax.random.normal(checks.threefry_key(1), (64, c.shape[0]), c.dtype)
        pts = jax.vmap(problem.domain.project)(c + float(problem.domain.diameter()) * z)
        grad = jax.grad(con.value)
        norms = jax.vmap(lambda p: jax.vmap(lambda x: jnp.linalg.norm(grad(x, p)))(pts))(phis)
        return float(jnp.max(norms))


class YuNeely(AbstractAlgorithm):
    """Drift-plus-penalty with one virtual queue per constraint row (Yu, Neely 2020).

    Registered as "yu-neely"; hyperparameters ``YuNeelyHyper``.

    Args:
        bandit: the two-point estimate in place of ∇fₜ (static; default True).

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import YuNeely
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> res = jaxbco.sweep(problem, 20, algorithm=YuNeely(), seeds=2, checkpoints=[20])
        >>> res.regret.shape, bool(res.failed.any())
        ((1, 2, 1), False)
    """

    blocks = True
    kernel = True

    hyper_class: ClassVar[type] = YuNeelyHyper

    bandit: bool = eqx.field(static=True, default=True)

    def default_hyper(self, problem, horizon):
        """γ = T^(1/4), α = (β² + 1)√T/2, V = 1; δ = 1/T, ξ = δ/r."""
        horizon = checks.check_positive_int("horizon T", horizon)
        delta = 1.0 / horizon
        b = beta(problem)
        return YuNeelyHyper(
            V=1.0,
            alpha=0.5 * (b * b + 1.0) * np.sqrt(horizon),
            gamma=horizon**0.25,
            delta=delta,
            xi=toolkit.shrinkage(problem.domain, delta),
        )

    def check_hyper(self, hyper, problem):
        toolkit.check_type("YuNeely", hyper, YuNeelyHyper)
        toolkit.check_perturbation(hyper, problem.domain, self.bandit)

    def init(self, problem, hyper, x1):
        phi = problem.constraint_data.sample(checks.threefry_key(0), jnp.asarray(1, jnp.int32))
        m = jax.eval_shape(lambda: toolkit.constraint_rows(problem, x1, phi)[0]).shape[0]
        return YuNeelyState(x=x1, Q=jnp.zeros((m,), x1.dtype))  # line 1

    def step(self, state, problem, hyper, inp: RoundInput):
        x, Q = state
        grad_f = toolkit.loss_gradient(problem, inp.theta, x, inp.u, hyper.delta, self.bandit)  # 3
        g, J = toolkit.constraint_rows(problem, x, inp.phi)
        w = jnp.maximum(Q + hyper.gamma * g, 0.0) * hyper.gamma  # line 4
        direction = (hyper.V * grad_f + jnp.sum(J * w[:, None], axis=0)) / (2.0 * hyper.alpha)
        x_next = toolkit.project(problem.domain, x - direction, hyper.xi, self.bandit)  # line 5
        g_next, _ = toolkit.constraint_rows(problem, x_next, inp.phi)
        Q_next = jnp.maximum(-hyper.gamma * g_next, Q + hyper.gamma * g_next)  # line 6
        return YuNeelyState(x=x_next, Q=Q_next)

    def decision(self, state):
        return state.x

    def multiplier(self, state):
        return jnp.sum(state.Q, axis=0)


register(
    "yu-neely",
    YuNeely,
    regret_order="T^(1/2) [full information]",
    violation_order="soft O(1), fixed g",
    exponents={"regret": 0.5, "soft_violation": 0.0},
    colour="#000000",
    order=6,
)
