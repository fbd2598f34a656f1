"""The one place x*'s method is chosen: an ordered table of conditions on the problem's
declarations, the dtype and the layout, the first row that holds deciding (lineax's
``AutoLinearSolver``).  What a run reports (``Result.comparator_method``, the CLI's path, the
results dataset) is the selected method's ``name``, so it cannot drift from what ran.

| row | the problem declares | method |
| --- | --- | --- |
| 1 | a log-wealth loss on replayed relatives (portfolio) | ``CRPInteriorPoint`` (host, once) |
| 2 | constraints that reduce to no one set (``region.unsupported``) | none |
| 3 | quadratic or linear loss; a smooth g with replayed data on a set with a barrier | ``BarrierEveryRound`` |
| 4 | quadratic or linear loss; more linear rows than the dual Newton's, on a set with a barrier | ``BarrierRows`` |
| 5 | linear loss, float64, one seed; a ball or ellipsoid g on a set with a barrier | ``BarrierLP`` |
| 6 | quadratic loss | ``MeanProjection`` |
| 7 | linear loss | ``ProximalPoint`` |
| 8 | a loss with ``offline = "newton"`` (logistic) | ``ProjectedNewton`` |
| 9 | absolute loss, one seed; rows or a ball/ellipsoid g on a set with a barrier | ``SmoothedAbsolute`` |
| 10 | any other loss | ``FISTA`` |

Then a user's fixed g (``CustomConstraint``, whose ``flipped`` exists) wraps the row's method
in ``TwoPaths``, the flipped problem's own selection as its second path.

Example:
    >>> from jaxbco import comparator, problems
    >>> comparator.select(problems.make("logistic-ball", dim=3), 100).name
    'projected Newton (at most 8 passes)'
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco import constraints as C
from jaxbco._src import checks
from jaxbco.comparator import portfolio
from jaxbco.comparator._base import AbstractOfflineMethod
from jaxbco.comparator.mean_theta import (
    BarrierEveryRound,
    BarrierLP,
    BarrierRows,
    MeanProjection,
    ProximalPoint,
)
from jaxbco.comparator.newton import ProjectedNewton
from jaxbco.comparator.smooth import FISTA, SmoothedAbsolute
from jaxbco.comparator.streaming import streams
from jaxbco.comparator.two_paths import TwoPaths, flipped
from jaxbco.offline import barrier, region


def select(problem, horizon: int, *, dtype=None, blocks: bool = False):
    """x*'s method for ``problem`` over ``horizon`` rounds (the module's table).

    Args:
        problem: the ``Problem`` (as cast for the run: its dtype decides row 5).
        horizon: T (replayed data's rounds decide rows 3-4).
        dtype: the run's dtype (None: the problem's own).
        blocks: x* solved on a seeds-minor ``KeyBlock`` (rows 5 and 9 need one seed).

    Returns:
        The ``AbstractOfflineMethod``, or None where the problem has no comparator
        (``region.unsupported`` says why).

    Example:
        >>> from jaxbco import comparator, problems
        >>> type(comparator.select(problems.make("quadratic-ball", dim=3), 100)).__name__
        'MeanProjection'
    """
    method = _row(problem, horizon, dtype, blocks)
    other = flipped(problem)
    if method is None or method.outside or other is None:
        return method
    return TwoPaths(method, _row(other, horizon, dtype, blocks))


def _row(problem, horizon, dtype, blocks) -> AbstractOfflineMethod | None:
    if portfolio.applies(problem, horizon):
        return portfolio.CRPInteriorPoint()
    if region.unsupported(problem) is not None:
        return None
    offline = problem.loss.offline
    c = jax.eval_shape(lambda: problem.domain.inscribed_ball()[0])  # shapes only
    dtype = c.dtype if dtype is None else jnp.dtype(dtype)
    with_barrier = barrier.form(problem.domain, c) is not None
    every_round = region.every_round_slacks(problem, horizon) is not None
    fam, many = (None, False) if every_round else _reduced(problem, horizon)
    if offline in ("quadratic", "linear"):
        weight = 1.0 if offline == "quadratic" else 0.0
        constant = streams(problem)
        if every_round:
            return BarrierEveryRound(weight=weight)
        if many:
            return BarrierRows(constant, weight)
        curved = C.unshifted(fam).quadratic_form is not None
        if offline == "linear" and dtype == jnp.float64 and not blocks and with_barrier and curved:
            return BarrierLP(constant)
        return MeanProjection(constant) if offline == "quadratic" else ProximalPoint(constant)
    if offline == "newton":
        return ProjectedNewton()
    rows_or_curved = fam is not None and (
        fam.kind in ("linear", "polyhedral") or C.unshifted(fam).quadratic_form is not None
    )
    if problem.loss.l1_breakpoints and not blocks and with_barrier and rows_or_curved:
        return SmoothedAbsolute()
    return FISTA(smoothed=offline == "smoothed")


def _reduced(problem, horizon):
    """(the reduced constraint's family, whether its rows go to the log-barrier method),
    from a trace of ``region.reduced_constraint`` (shapes only, nothing computed) where the
    family may have rows: the problem's own polyhedral g, or recorded rows; else g itself."""
    fam, data = problem.constraint, problem.constraint_data
    recorded = not data.constant and not (data.slack and fam.shift)
    if fam.kind != "polyhedral" and not recorded:
        return fam, False  # the reduced family is g itself, with no rows to count
    found = {}

    def trace(key):
        fam, phi = region.reduced_constraint(problem, key, horizon)
        c = problem.domain.inscribed_ball()[0]
        found["fam"] = fam
        found["many"] = region.barrier_rows(problem.domain, fam, phi, c) is not None

    jax.eval_shape(trace, checks.threefry_key(0))
    return found["fam"], found["many"]
