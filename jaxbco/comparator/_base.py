"""What an offline method of the comparator declares: its reported name, whether it runs inside
the compiled call or before it, whether x* follows from running sums, and how it solves Eq. (1)
for one seed (lineax's pattern: components declare, one selector chooses, ``selector.select``).
"""

import abc

import equinox as eqx
import jax
import jax.numpy as jnp
from equinox import AbstractClassVar, AbstractVar  # not stringified: no __future__ annotations

from jaxbco.offline import region
from jaxbco.offline.round_sums import mean_over_rounds


class AbstractOfflineMethod(eqx.Module):
    """A way to solve x* = argmin over x ∈ X of (1/T) ∑ₜ fₜ(x) s.t. gₜ(x) ≤ 0 for all t (Eq. 1).

    A method holds no arrays (it is a static argument of the compiled programs); its ``name``
    is what ``Result.comparator_method``, the CLI and the results dataset report, so what is
    reported is what ran.

    Attributes:
        name: the method in words, as reported.
        outside: True where x* is solved on the host before the compiled call, once for every
            seed (``fixed``); False where it is solved per seed inside it (``solve``).

    Example:
        >>> from jaxbco import comparator, problems
        >>> method = comparator.select(problems.make("quadratic-ball", dim=3), 100)
        >>> method.name, method.streams
        ('projection of the mean theta (quadratic)', True)
    """

    name: AbstractVar[str]
    outside: AbstractClassVar[bool]

    @property
    def streams(self) -> bool:
        """Whether x* follows from the run's running sums of the loss's statistics
        (``from_sums``), so the data are generated once (False unless a method says so)."""
        return False

    @property
    def cost(self) -> str:
        """What x* costs, in passes over the T rounds' data per seed (said before a run by
        ``jaxbco.plan.before``): a method's work grows with these passes."""
        return "one pass over the rounds per seed"

    @abc.abstractmethod
    def solve(self, problem, seed_key, horizon: int) -> jax.Array:
        """x* of one seed (d,), or of a ``KeyBlock`` of seeds (d, seeds), regenerating the
        rounds' data from the seed's key."""

    def solve_batch(self, problem, seed_keys, horizon: int) -> jax.Array:
        """x* of every seed of a batch, (S, d) from keys (S,): ``solve`` per seed."""
        return jax.vmap(self.solve, (None, 0, None))(problem, seed_keys, horizon)

    def from_sums(self, problem, sums, horizon: int) -> jax.Array:
        """x* of every seed from its sums over all T rounds ((S, d), (S,)); only where
        ``streams``."""
        raise NotImplementedError(f"{self.name}: x* does not follow from running sums")

    def fixed(self, problem, horizon: int):
        """x* (d,) solved outside the compiled call, the same for every seed; only where
        ``outside``."""
        raise NotImplementedError(f"{self.name}: x* is solved inside the compiled call")


class AbstractMeanThetaMethod(AbstractOfflineMethod):
    """A loss whose mean over the rounds depends on the data only through mean θₜ (quadratic
    ‖x − θₜ‖², linear ⟨θₜ, x⟩): x* from θ̄ alone (``from_mean``), so a fixed constraint's x*
    streams from the run's sums.

    Attributes:
        constant_data: the constraint's data are the same every round (``Fixed``): x* follows
            from the run's sums of θₜ (``streams``).
    """

    constant_data: bool = eqx.field(default=False, static=True)
    outside = False

    @abc.abstractmethod
    def from_mean(self, problem, fam, phi, theta_bar) -> jax.Array:
        """x* from θ̄ (d,) or (d, runs) over the region C = (fam, phi)."""

    def solve(self, problem, seed_key, horizon: int) -> jax.Array:
        c = problem.domain.inscribed_ball()[0]
        shape = c.shape[:1] + region.runs(seed_key)
        theta_bar = mean_over_rounds(
            problem, seed_key, horizon, lambda th: jnp.broadcast_to(th, shape)
        )
        fam, phi = region.reduced_constraint(problem, seed_key, horizon)
        return self.from_mean(problem, fam, phi, theta_bar)

    @property
    def streams(self) -> bool:
        return self.constant_data

    @property
    def cost(self) -> str:
        if self.streams:
            return "no pass of its own (from the run's running sums)"
        return "one pass over the rounds per seed (their mean θ)"

    def from_sums(self, problem, sums, horizon: int) -> jax.Array:
        phi = problem.constraint_data.every_round()
        mean = lambda s: self.from_mean(problem, problem.constraint, phi, s / horizon)
        return jax.vmap(mean)(sums[0])


def region_projector(problem, seed_key, horizon: int):
    """(fam, phi, project, c) for a method that minimises over X ∩ C by projections: C's
    family and data (None, None where every round is its own slack), z ↦ Π_{X∩C}(z) and X's
    centre laid out like the seed key's runs (``jaxbco.offline.region``)."""
    domain = problem.domain
    c, _ = domain.inscribed_ball()
    c = jnp.broadcast_to(c, c.shape[:1] + region.runs(seed_key))
    curved = region.every_round_slacks(problem, horizon)
    if curved is None:
        fam, phi = region.reduced_constraint(problem, seed_key, horizon)
        return fam, phi, region.projector(domain, fam, phi, c), c
    by_barrier = region.every_round_barrier(domain, curved, c.dtype, c.shape[0])
    return None, None, lambda z: by_barrier(1.0, z), c
