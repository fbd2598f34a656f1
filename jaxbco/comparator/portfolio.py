"""Portfolio selection's x*: the best constant-rebalanced portfolio under the risk constraints,
by a float64 interior point on the host (``jaxbco.data.crp``), solved once before the compiled
call and the same for every seed (the relatives and risk matrices are replayed data).

Example:
    >>> from jaxbco import comparator, problems
    >>> comparator.select(problems.make("nyse-portfolio"), 100).outside
    True
"""

from __future__ import annotations

from jaxbco.comparator._base import AbstractOfflineMethod
from jaxbco.data import portfolio


def applies(problem, horizon: int) -> bool:
    """Whether the loss is log-wealth on replayed relatives (``portfolio.problem_arrays``)."""
    if not problem.loss.wealth:
        return False
    try:
        portfolio.problem_arrays(problem, horizon)
    except NotImplementedError:
        return False
    return True


class CRPInteriorPoint(AbstractOfflineMethod):
    """x* = the best constrained CRP: argmax over the simplex of ∑ₜ log ⟨rₜ, x⟩ s.t.
    xᵀQₜx ≤ 1, float64 interior point, cached per data and horizon.

    Example:
        >>> from jaxbco import comparator
        >>> method = comparator.CRPInteriorPoint()
        >>> method.name, method.outside   # solved on the host, before the compiled call
        ('offline float64 interior point (best constrained CRP, same for every seed)', True)
    """

    name = "offline float64 interior point (best constrained CRP, same for every seed)"
    outside = True
    cost = "one solve on the host before the run, shared by every seed"

    def solve(self, problem, seed_key, horizon: int):
        raise NotImplementedError(f"{self.name}: solved before the compiled call (fixed)")

    def fixed(self, problem, horizon: int):
        R, Q = portfolio.problem_arrays(problem, horizon)
        return portfolio.cached_best_crp(R, Q)
