"""Algorithm 1 of Hikima (2023), "Multi-point Feedback of Bandit Convex Optimization with
Hard Constraints" (arXiv:2310.10946), with two-point feedback: rectified penalty, proximal
step on the shrunk set.

Require: T, αₜ, γₜ, ηₜ > 0, ξ > 0, δ > 0.

1. x₁ ∈ X, λ₁ = 0, ĝ⁺₁(x) = γ₁[g₁(x)]₊.
2. For t = 1..T:
3. draw uₜ uniformly from the unit sphere;
4. query fₜ at xₜ + δuₜ and xₜ − δuₜ;
5. g̃ₜ = d/(2δ) [fₜ(xₜ + δuₜ) − fₜ(xₜ − δuₜ)] uₜ (Eq. (4));
6. xₜ₊₁ = argmin over x ∈ (1 − ξ)X of ⟨g̃ₜ, x − xₜ⟩ + λₜ ĝ⁺ₜ(x) + (αₜ/2)‖x − xₜ‖₂² (Eq. (5));
7. submit xₜ₊₁, incur fₜ₊₁(xₜ₊₁), observe gₜ₊₁;
8. ĝ⁺ₜ₊₁(x) = γₜ₊₁[gₜ₊₁(x)]₊;
9. λₜ₊₁ = max{λₜ + γₜ₊₁[gₜ₊₁(xₜ)]₊, ηₜ₊₁}.

Readings of the print, followed literally:

* line 9 evaluates the new constraint gₜ₊₁ at the *previous* decision xₜ (not xₜ₊₁);
* λ₁ = 0, so round 1's step has no penalty; λₜ ≥ ηₜ from round 2 on;
* on the simplex, d in Eq. (4) is the dimension of its affine hull (d − 1) and uₜ is uniform
  on the unit sphere of {∑ u = 0} (Flaxman et al. 2004's estimator in the hull);
* x₁ defaults to the centre c of X's inscribed ball, which lies in (1 − ξ)X.

``smoothing = tau`` (default None: the exact algorithm above) replaces line 9's two kinks by
softplus-type smooth versions, for gradient-based hyperparameter tuning only (``jaxbco.tune``):
[g]₊ becomes τ softplus(g/τ) (at least [g]₊, at most τ log 2 above it) and max{a, η} becomes
η + τη softplus((a − η)/(τη)) (temperature relative to η).  Both are upper bounds that tend to
the exact kinks as τ → 0; the smoothed [g]₊ adds up to γₜ₊₁ τ log 2 to λ per round where
g ≈ 0, so keep τ small (e.g. 1e-3).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco.algorithms._base import AbstractAlgorithm, RoundInput
from jaxbco.algorithms.registry import register
from jaxbco.algorithms.toolkit import two_point_gradient as two_point_gradient
from jaxbco.hyper import Hyper, check_against_domain, problem_modulus, schedule, theorem_defaults
from jaxbco.solvers import AbstractProxSolver, Dual
from jaxbco.solvers.gap import certificate


class RectifiedState(NamedTuple):
    x: jax.Array  # x_t
    lam: jax.Array  # lambda_t
    warm: object = ()  # the prox solver's warm start (e.g. last round's dual multiplier)
    worst: jax.Array | float = 0.0  # the worst prox certificate so far (``solvers.gap``)


class RectifiedBCO(AbstractAlgorithm):
    """Algorithm 1 of Hikima (2023), the paper's method (see the module docstring).

    Schedules (``hyper.schedule``): αₜ = a tᶜ (convex, Theorems 1-2) or a σt (strongly
    convex, Theorems 3-4), γₜ = g t^(c+ε), ηₜ = e tᶜ, with c, ε, δ, ξ, σ and the scales a, g,
    e the arrays of ``jaxbco.Hyper``.  Convex losses: regret O(d² T^max{c, 1−c}) (√T at
    c = 1/2) and hard violation O(d²) for a fixed g (Thm. 1), O(d² T^(1−c/2)) for a
    time-varying one (Thm. 2); strongly convex: regret O(d² log T), hard violation O(d²)
    (Thm. 3).  Registered as
    "rectified-bco", the default of every command.

    Args:
        solver: the prox solver of Eq. (5) (default ``solvers.Dual()``: exact, its method
            chosen from the set and the constraint family).
        strongly_convex: use the strongly convex schedule αₜ = σt of Theorems 3-4 (static).
        smoothing: None (the exact algorithm), or a temperature τ > 0 smoothing line 9 for
            gradient-based tuning only (see the module docstring).
        certify_every: the prox step's certificate (``solvers.gap``) is measured on rounds
            t = 0 mod this (1: every round).
        refine_certificate: refine a step's certificate by Newton where its first bound fails
            (static); False keeps the first bound, an upper bound of the refined one (``light``).

    Raises:
        ValueError: for ``certify_every`` below 1 or a non-positive ``smoothing``.

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import RectifiedBCO
        >>> problem = problems.make("quadratic-ball", dim=3)
        >>> algorithm = RectifiedBCO()
        >>> float(algorithm.default_hyper(problem, 10).c)
        0.5
        >>> res = jaxbco.sweep(problem, 10, algorithm=algorithm, seeds=2, checkpoints=[5, 10])
        >>> res.regret.shape   # (settings, seeds, checkpoints)
        (1, 2, 2)
    """

    hyper_class: ClassVar[type] = Hyper
    blocks = True
    kernel = True

    solver: AbstractProxSolver = Dual()
    strongly_convex: bool = eqx.field(static=True, default=False)
    smoothing: float | None = eqx.field(static=True, default=None)
    #: the prox step's certificate (``solvers.gap``) is measured on rounds t = 0 mod this
    #: (1: every round)
    certify_every: int = eqx.field(static=True, default=16)
    #: refine a step's certificate where its first bound fails (``light``: False)
    refine_certificate: bool = eqx.field(static=True, default=True)

    def __check_init__(self):
        if isinstance(self.certify_every, bool) or not (
            isinstance(self.certify_every, int) and self.certify_every >= 1
        ):
            raise ValueError(
                f"certify_every must be an integer >= 1 (1: every round); got "
                f"{self.certify_every!r}"
            )
        if self.smoothing is not None and not (float(self.smoothing) > 0.0):
            raise ValueError(f"smoothing must be None or a temperature > 0; got {self.smoothing!r}")

    def default_hyper(self, problem, horizon):
        """The defaults of Theorems 1-4: c = 1/2, ε = 0.1, δ = 1/T, ξ = δ/r, unit scales.

        σ is the loss's modulus on a strongly convex problem (``hyper.problem_modulus``), else 1.

        Returns:
            A ``jaxbco.Hyper``.
        """
        return theorem_defaults(problem.domain, horizon, sigma=problem_modulus(problem))

    def check_hyper(self, hyper, problem):
        if not isinstance(hyper, Hyper):
            raise ValueError(
                f"RectifiedBCO needs jaxbco.Hyper hyperparameters; got {type(hyper).__name__}"
            )
        check_against_domain(hyper, problem.domain)

    def init(self, problem, hyper, x1):
        return RectifiedState(
            x=x1,
            lam=jnp.zeros((), x1.dtype),  # Alg. 1 line 1
            warm=self.solver.init_warm(problem, x1.dtype),
            worst=jnp.zeros((), x1.dtype),
        )

    def step(self, state, problem, hyper, inp: RoundInput):
        x, lam, warm, worst = state
        alpha, gamma, _ = schedule(hyper, inp.t, self.strongly_convex)
        _, gamma_next, eta_next = schedule(hyper, inp.t + 1, self.strongly_convex)
        d_hull = jnp.asarray(problem.domain.hull_dim, x.dtype)
        # Alg. 1 lines 3-5 (u_t is drawn by the engine, or replayed).
        grad = two_point_gradient(problem.loss, inp.theta, x, inp.u, hyper.delta, d_hull)
        # Alg. 1 line 6, Eq. (5) with y = x_t - g~_t / alpha_t and beta = lambda_t gamma_t.
        y = x - grad / alpha
        x_next, warm = self.solver.solve_warm(
            problem.domain, hyper.xi, problem.constraint, inp.phi, x, y, alpha, lam * gamma, warm
        )

        # the step's certificate (relative duality gap, distance from the set), worst so far
        def measured():
            cut = self.solver.cut(problem.domain, problem.constraint, inp.phi, x_next, warm)
            c = certificate(
                problem.domain,
                hyper.xi,
                problem.constraint,
                inp.phi,
                y,
                alpha,
                lam * gamma,
                x_next,
                cut,
                self.refine_certificate,
            )
            # unmeasurable (overflow): reported as failed, never a non-finite state that
            # would flag and freeze the run
            return jnp.where(jnp.isfinite(c), c, jnp.finfo(x.dtype).max)

        if self.certify_every == 1:
            worst = jnp.maximum(worst, measured())
        else:  # t is every run's (never batched): a real branch, skipped on other rounds
            worst = jax.lax.cond(
                inp.t % self.certify_every == 0,
                lambda: jnp.maximum(worst, measured()),
                lambda: worst,
            )
        # Alg. 1 line 9 (g_{t+1} at x_t, as printed).
        g_next = problem.constraint.value(x, inp.phi_next)
        if self.smoothing is None:
            violation = jnp.maximum(g_next, 0.0)
            lam_next = jnp.maximum(lam + gamma_next * violation, eta_next)
        else:  # smooth versions, for tuning only (see the module docstring)
            tau = jnp.asarray(self.smoothing, x.dtype)
            violation = tau * jax.nn.softplus(g_next / tau)
            scale = tau * eta_next
            excess = lam + gamma_next * violation - eta_next
            lam_next = eta_next + scale * jax.nn.softplus(excess / scale)
        return RectifiedState(x=x_next, lam=lam_next, warm=warm, worst=worst)

    def light(self):
        """Without the certificate's Newton refinement (``refine_certificate`` False): the
        same steps, a smaller program; its worst certificate is the refined one's (to
        round-off) unless it fails the tolerance (``solvers.gap.needs_refinement``)."""
        if not self.refine_certificate:
            return self
        return dataclasses.replace(self, refine_certificate=False)

    def decision(self, state):
        return state.x

    def multiplier(self, state):
        return state.lam

    def prox_certificate(self, state):
        return state.worst


register(
    "rectified-bco",
    RectifiedBCO,
    regret_order="Thms. 1-4 (this paper)",
    violation_order="",
    exponents={"regret": 0.5, "hard_violation": 0.0},
    colour="#0072B2",
    theorems=True,
    order=0,
)
