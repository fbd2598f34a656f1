"""x* of any other loss by first-order steps over X ∩ C (``jaxbco.offline.fista``):

* ``FISTA``: accelerated projected gradient with adaptive restart on the mean loss (Huber, a
  user's loss), or on the absolute loss's Huber smoothing (continued from D/10 to 1e-6 D);
* ``SmoothedAbsolute``: the absolute loss ‖x − θₜ‖₁ where C is rows or a ball or ellipsoid on
  a set with a barrier: FISTA on its smoothing, then exact local linear programmes around the
  breakpoints θₜ,ᵢ (``jaxbco.offline.absolute``).

Example:
    >>> import jax.numpy as jnp
    >>> from jaxbco import Problem, comparator, constraints, losses, sequences, sets
    >>> p = Problem(sets.L2Ball(jnp.zeros(2), 1.0), losses.Huber(0.1),
    ...             sequences.IIDNormal(jnp.zeros(2), 1.0), constraints.Linear(),
    ...             sequences.Fixed((jnp.ones(2), jnp.asarray(0.5))))
    >>> comparator.select(p, 100).name
    'FISTA on the mean loss'
"""

from __future__ import annotations

import equinox as eqx

from jaxbco.comparator._base import AbstractOfflineMethod, region_projector
from jaxbco.offline import absolute, fista


class FISTA(AbstractOfflineMethod):
    """FISTA with adaptive restart on the mean loss F (``smoothed``: on the absolute loss's
    Huber smoothing); the step from the loss's curvature bound, doubled by backtracking where
    a step shows it too small, so a missing or wrong bound still gives x*.

    Attributes:
        smoothed: the loss declares ``offline = "smoothed"`` (absolute): FISTA runs on its
            Huber smoothing, continued from D/10 to 1e-6 D.

    Example:
        >>> import jax.numpy as jnp, jaxbco
        >>> from jaxbco import comparator, constraints, losses, sequences, sets
        >>> theta = sequences.IIDNormal(jnp.zeros(2), jnp.ones(2))
        >>> halfspace = sequences.Fixed((jnp.ones(2), jnp.asarray(0.5)))
        >>> problem = jaxbco.Problem(sets.L2Ball(jnp.zeros(2), 1.0), losses.Huber(), theta,
        ...                          constraints.Linear(), halfspace)
        >>> method = comparator.select(problem, 100)
        >>> type(method).__name__, method.smoothed
        ('FISTA', False)
    """

    smoothed: bool = eqx.field(default=False, static=True)
    outside = False

    @property
    def name(self) -> str:
        if self.smoothed:
            return "FISTA on the absolute loss's Huber smoothing"
        return "FISTA on the mean loss"

    @property
    def cost(self) -> str:
        steps = fista.STEPS_NONSMOOTH if self.smoothed else fista.STEPS
        more = "" if self.smoothed else ", more where it backtracks"
        return f"up to {steps} passes over the rounds per seed (one per FISTA step{more})"

    def solve(self, problem, seed_key, horizon: int):
        _, _, project, c = region_projector(problem, seed_key, horizon)
        return fista.solve(problem, seed_key, horizon, project, c)


class SmoothedAbsolute(AbstractOfflineMethod):
    """The absolute loss: ``FISTA`` on its smoothing, then the local linear programmes that
    make x* exact (``absolute.polish``).

    Example:
        >>> import jax.numpy as jnp, jaxbco
        >>> from jaxbco import comparator, constraints, losses, sequences, sets
        >>> theta = sequences.IIDNormal(jnp.zeros(2), jnp.ones(2))
        >>> halfspace = sequences.Fixed((jnp.ones(2), jnp.asarray(0.5)))
        >>> problem = jaxbco.Problem(sets.Box(-jnp.ones(2), jnp.ones(2)), losses.Absolute(), theta,
        ...                          constraints.Linear(), halfspace)
        >>> type(comparator.select(problem, 100)).__name__
        'SmoothedAbsolute'
    """

    name = "FISTA on the absolute loss's Huber smoothing, then local LPs at its breakpoints"
    outside = False
    cost = (
        f"up to {fista.STEPS_NONSMOOTH} passes over the rounds per seed (FISTA steps), then "
        f"the local LPs' passes"
    )

    def solve(self, problem, seed_key, horizon: int):
        fam, phi, project, c = region_projector(problem, seed_key, horizon)
        x = fista.solve(problem, seed_key, horizon, project, c)
        return absolute.polish(problem, fam, phi, seed_key, horizon, x)
