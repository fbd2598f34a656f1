"""x* of a quadratic loss ‖x − θₜ‖² or a linear one ⟨θₜ, x⟩ from the mean θ̄ = (1/T) ∑ₜ θₜ
(a sufficient statistic of Eq. (1)'s objective):

* ``MeanProjection``: quadratic, x* = Π(θ̄), Π the projection onto X ∩ C;
* ``ProximalPoint``: linear, min ⟨θ̄, x⟩ over X ∩ C by xₖ₊₁ = Π(xₖ − τθ̄),
  τ‖θ̄‖ = D, until x stops moving (at most 100 steps; exact after finitely many on a polytope,
  the error at least halving a step on a curved boundary); for a user's smooth g on a box,
  then a Newton finish on the KKT system (``jaxbco.offline.newton_finish``);
* ``BarrierRows``: either loss where C has more linear rows than the dual Newton takes;
* ``BarrierLP``: a float64 linear loss on a ball or ellipsoid C (proximal point steps reach a
  curved boundary only to ~√ε in position: a first-order certificate of 1e-7 in float64);
* ``BarrierEveryRound``: either loss where every round's smooth gₜ is its own constraint.

The last three are the log-barrier method (``jaxbco.offline.barrier``), exact.

Example:
    >>> from jaxbco import comparator, problems
    >>> comparator.select(problems.make("quadratic-ball", dim=3), 100).name
    'projection of the mean theta (quadratic)'
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco import constraints as C
from jaxbco._src import ops
from jaxbco.comparator._base import AbstractMeanThetaMethod
from jaxbco.offline import barrier, newton_finish, region
from jaxbco.offline.round_sums import mean_over_rounds

_PROX_REACH = 1.0  # the proximal point step moves D along -theta before projecting
_PROX_STEPS = 100
_FAR_GAIN = 1e-4  # a proximal point step gaining more than this (relative) doubles the next
_MAX_REACH = 64.0  # the proximal point steps' longest reach, in D
_WARM_REACH = 1e3  # 1e8 D lost x* to round-off (yu-neely seed 0: F -0.628 against -0.672)


def _kind(weight) -> str:
    return "quadratic" if weight else "linear"


class MeanProjection(AbstractMeanThetaMethod):
    """Quadratic loss: x* = the projection of θ̄ onto X ∩ C, one exact projection
    (``region.projector``).

    Attributes:
        constant_data: the constraint's data are fixed, so x* streams from the run's sums.

    Example:
        >>> from jaxbco import comparator, problems
        >>> method = comparator.select(problems.make("quadratic-ball", dim=2), 100)
        >>> type(method).__name__, method.constant_data
        ('MeanProjection', True)
    """

    name = "projection of the mean theta (quadratic)"

    def from_mean(self, problem, fam, phi, theta_bar):
        c, _ = problem.domain.inscribed_ball()
        return region.projector(problem.domain, fam, phi, c)(theta_bar)


class ProximalPoint(AbstractMeanThetaMethod):
    """Linear loss: min ⟨θ̄, x⟩ over X ∩ C by proximal point steps (module docstring); each
    projection starts within reach of X, never from a far point (the smooth interior point
    loses a user's g's set from a point 4D away).

    Attributes:
        constant_data: the constraint's data are fixed, so x* streams from the run's sums.

    Example:
        >>> from jaxbco import comparator, problems
        >>> method = comparator.select(problems.make("switching-box", dim=2), 100)   # a linear loss
        >>> type(method).__name__, method.name
        ('ProximalPoint', 'proximal point on the mean theta (linear)')
    """

    name = "proximal point on the mean theta (linear)"

    def from_mean(self, problem, fam, phi, theta_bar):
        domain = problem.domain
        c, _ = domain.inscribed_ball()
        dtype = c.dtype
        project = region.projector(domain, fam, phi, c)
        norm = jnp.sqrt(ops.inner(theta_bar, theta_bar))
        step = _PROX_REACH * domain.diameter() / jnp.where(norm > 0, norm, 1.0)
        eps = jnp.finfo(dtype).eps
        far = _WARM_REACH if C.structured(fam) and not region.many_rows(fam, phi) else 0.0

        def body(carry):
            x, k, done, reach_k = carry
            # a proximal point step on <theta_bar, x>; first (k = -1) the start's projection:
            # one copy of the projector in the program
            first = k < 0
            x_new = project(jnp.where(first, x, x - reach_k * step * theta_bar))
            moved = jnp.max(jnp.abs(x_new - x), axis=0)
            # stop where x stops moving, or F stops decreasing beyond its round-off (a curved
            # set is approached linearly in x but quadratically in F)
            decrease = ops.inner(theta_bar, x - x_new)
            reach = jnp.sqrt(ops.inner(x, x)) + domain.diameter()
            still = (moved <= 8 * eps * (1.0 + jnp.max(jnp.abs(x), axis=0))) | (
                decrease <= 8 * eps * norm * reach
            )
            still = still & (reach_k <= 1.0)  # the last step one of reach D
            # a step that still gains much doubles the next one's reach (a start far from x*:
            # on a curved boundary each step shrinks the error only by rho / (rho + reach D),
            # rho its radius of curvature); a small gain goes back to reach D, whose steps end
            # it.  Only where far points are projected well (``far`` > 0: not a user's g, nor
            # many rows)
            big = (decrease > _FAR_GAIN * norm * domain.diameter()) & (far > 0)
            reach_k = jnp.where(big, jnp.minimum(2.0 * reach_k, _MAX_REACH), 1.0).astype(dtype)
            return (
                jnp.where(done & ~first, x, x_new),
                k + 1,
                done | (still & ~first),
                jnp.where(first, carry[3], reach_k),
            )

        # start (round k = -1): the projection of a point _WARM_REACH D beyond c along
        # -theta_bar (near x*: the steps after it confirm and refine it); from c for a user's
        # g, whose smooth interior point loses its set from ~4 D away (a g without declared
        # structure), and for more rows than the dual Newton takes (their accelerated ascent
        # is exact from ~D away but not from 1e3 D: 24 Replay rows, x* 0.15 off in float64,
        # F 0.56% high; from c, 1e-13)
        x0 = c - (far / _PROX_REACH) * step * theta_bar
        runs = x0.shape[1:]
        start = (x0, -jnp.ones((), jnp.int32), jnp.zeros(runs, bool) | (norm <= 0))
        x, _, _, _ = jax.lax.while_loop(
            lambda s: (s[1] < 0) | ((s[1] < _PROX_STEPS) & ~jnp.all(s[2])),
            body,
            start + (jnp.ones(runs, dtype),),
        )
        if not C.structured(fam) and fam.kind == "smooth" and domain.form == "box":
            # a user's smooth g: the steps end ~sqrt(eps) from x* in position, at the
            # certificate's float32 tolerance; Newton's method on the KKT system finishes
            x = newton_finish.finish(domain, fam, phi, theta_bar, jax.lax.stop_gradient(x))
        return x


class _WeightedBarrier(AbstractMeanThetaMethod):
    """The log-barrier method over ``over``, for a quadratic loss (``weight`` 1: the projection
    of θ̄) or a linear one (0: the LP min ⟨θ̄, x⟩).

    Attributes:
        constant_data: the constraint's data are fixed, so x* streams from the run's sums.
        weight: 1.0 for a quadratic loss, 0.0 for a linear one.
    """

    weight: float = eqx.field(default=1.0, static=True)
    over = ""  # what the barrier runs over, as the name says it

    @property
    def name(self) -> str:
        return f"log-barrier method over {self.over} ({_kind(self.weight)})"


class BarrierRows(_WeightedBarrier):
    """More linear rows than the dual Newton takes, on a set with a barrier: x* by the
    log-barrier method on the rows, exact.

    Attributes:
        constant_data: the constraint's data are fixed, so x* streams from the run's sums.
        weight: 1.0 for a quadratic loss, 0.0 for a linear one.

    Example:
        >>> import jax.numpy as jnp, jaxbco
        >>> from jaxbco import comparator, constraints, losses, sequences, sets
        >>> theta = sequences.IIDNormal(jnp.zeros(2), jnp.ones(2))
        >>> rows = (jnp.eye(8, 2), jnp.ones(8))   # 8 halfspaces: more than the dual Newton's 5
        >>> problem = jaxbco.Problem(sets.Box(-jnp.ones(2), jnp.ones(2)), losses.Quadratic(), theta,
        ...                          constraints.MultiLinear(), sequences.Fixed(rows))
        >>> type(comparator.select(problem, 100)).__name__
        'BarrierRows'
    """

    over = "the constraint's rows"

    def from_mean(self, problem, fam, phi, theta_bar):
        rows = region.barrier_rows(problem.domain, fam, phi, theta_bar)
        w = self.weight
        solve = lambda v: barrier.solve(problem.domain, *rows, w, -v if w else v)
        return region.per_run(solve, theta_bar)


class BarrierLP(AbstractMeanThetaMethod):
    """A float64 linear loss on a ball or ellipsoid C (fixed, or shifted by its least slack)
    on a set with a barrier: min ⟨θ̄, x⟩ by the log-barrier method with −g as a smooth slack.

    Attributes:
        constant_data: the constraint's data are fixed, so x* streams from the run's sums.

    Example:
        >>> import jax.numpy as jnp, jaxbco
        >>> from jaxbco import comparator, constraints, losses, sequences, sets
        >>> theta = sequences.IIDNormal(jnp.zeros(2), jnp.ones(2))
        >>> ball = sequences.Fixed((jnp.zeros(2), jnp.asarray(0.5)))   # ‖x‖₂² ≤ 0.5
        >>> problem = jaxbco.Problem(sets.Box(-jnp.ones(2), jnp.ones(2)), losses.Linear(), theta,
        ...                          constraints.Ball(), ball)
        >>> type(comparator.select(problem, 100, dtype="float64")).__name__   # float64 only
        'BarrierLP'
    """

    name = "log-barrier method on the curved constraint (linear, float64)"

    def from_mean(self, problem, fam, phi, theta_bar):
        dtype, d = theta_bar.dtype, theta_bar.shape[0]
        none = jnp.zeros((0, d), dtype), jnp.zeros((0,), dtype)
        curved = lambda z: -fam.value(z, phi)[None]
        solve = lambda v: barrier.solve(problem.domain, *none, 0.0, v, curved)
        return region.per_run(solve, theta_bar)


class BarrierEveryRound(_WeightedBarrier):
    """A smooth g with replayed or alternating data: x* over X ∩ every recorded round's
    {gₜ ≤ 0} by the log-barrier method, one slack −gₜ per round.

    Attributes:
        constant_data: the constraint's data are fixed, so x* streams from the run's sums.
        weight: 1.0 for a quadratic loss, 0.0 for a linear one.

    Example:
        >>> import jax.numpy as jnp, jaxbco
        >>> from jaxbco import comparator, constraints, losses, sequences, sets
        >>> theta = sequences.IIDNormal(jnp.zeros(2), jnp.ones(2))
        >>> rounds = (jnp.zeros((3, 2)), jnp.array([0.5, 0.6, 0.7]))   # a ball per round, replayed
        >>> problem = jaxbco.Problem(sets.Box(-jnp.ones(2), jnp.ones(2)), losses.Quadratic(), theta,
        ...                          constraints.Ball(), sequences.Alternating(rounds))
        >>> type(comparator.select(problem, 100)).__name__
        'BarrierEveryRound'
    """

    over = "every round's g"

    def from_mean(self, problem, fam, phi, theta_bar):
        raise NotImplementedError("every round's g is not one region (C, phi): see solve")

    def solve(self, problem, seed_key, horizon: int):
        c, _ = problem.domain.inscribed_ball()
        c = jnp.broadcast_to(c, c.shape[:1] + region.runs(seed_key))
        curved = region.every_round_slacks(problem, horizon)
        by_barrier = region.every_round_barrier(problem.domain, curved, c.dtype, c.shape[0])
        theta_bar = mean_over_rounds(
            problem, seed_key, horizon, lambda th: jnp.broadcast_to(th, c.shape)
        )
        return by_barrier(self.weight, theta_bar)
