"""x*, regret against x* and final wealths for a portfolio ``Problem`` (float64 NumPy, outside
the compiled run).

The in-run comparator cannot compute this x* (the constraint is an intersection of T
ellipsoids); ``sweep``/``make_run`` get it from here instead, once per data and horizon
(``jaxbco.comparator.CRPInteriorPoint`` -> ``crp.cached_best_crp``).  ``comparator`` gives x* with
the solver's info (``crp.best_crp``); a run with ``comparator=False`` measures regret against
x_1 (the uniform CRP), and ``regret_offset`` shifts such curves to regret against x*
(``jaxbco.compare`` does this).
"""

from __future__ import annotations

import jax
import numpy as np

from jaxbco.data.crp import best_crp


def problem_arrays(problem, horizon: int | None = None):
    """(R (T, n), Q (T, n, n)) float64 from a portfolio Problem: relatives and the scaled risk
    matrices of g_t(x) = x^T Q_t x - 1 (quadratic data (P, 0, s) gives Q = P / s; fixed data
    one Q)."""
    relatives = problem.loss_data.recorded(horizon)
    if not problem.loss.wealth or relatives is None or problem.loss_data.constant:
        raise NotImplementedError(
            "the portfolio comparator needs a wealth loss (LogWealth) with recorded relatives"
        )
    R = np.asarray(jax.tree_util.tree_leaves(relatives)[0], np.float64)
    T = R.shape[0] if horizon is None else horizon
    table = problem.constraint_data.recorded(T)
    if R.shape[0] < T or problem.constraint.quadratic_form is None or table is None:
        raise NotImplementedError(
            "the portfolio comparator needs a relative for each round and a "
            "quadratic risk constraint (Ellipsoid) with recorded or fixed "
            "data (P_t, 0, s_t)"
        )
    P, q, s = (np.asarray(v, np.float64) for v in jax.vmap(problem.constraint.quadratic)(table))
    if np.any(q != 0) or np.any(s <= 0):
        raise NotImplementedError("the portfolio comparator needs centres q = 0 and budgets s > 0")
    return R, P / np.reshape(s, (-1, 1, 1))


def comparator(problem, horizon: int | None = None):
    """x* and its info for a portfolio Problem over its first ``horizon`` rounds."""
    R, Q = problem_arrays(problem, horizon)
    return best_crp(R, Q)


def regret_offset(problem, rounds, x_ref, x_star) -> np.ndarray:
    """sum_{s<=t} f_s(x_ref) - f_s(x*) at the checkpoint ``rounds``: adding it to the engine's
    regret against x_ref (``comparator=False`` measures against x_1) gives regret against x*."""
    R, _ = problem_arrays(problem, int(np.max(rounds)))
    d = np.log(R @ np.asarray(x_star, np.float64)) - np.log(R @ np.asarray(x_ref, np.float64))
    return np.cumsum(d)[np.asarray(rounds) - 1]


def wealth_baselines(problem, horizon: int, x_star=None) -> dict:
    """Final wealth prod_t <r_t, x> of reference strategies over the first T rounds:
    uniform CRP, uniform buy-and-hold, the best single asset, Cover's best CRP (unconstrained)
    and, when given, the constrained best CRP x*."""
    R, _ = problem_arrays(problem, horizon)
    n = R.shape[1]
    u = np.full(n, 1.0 / n)
    out = {
        "uniform CRP": float(np.exp(np.sum(np.log(R @ u)))),
        "uniform buy-and-hold": float(np.mean(np.prod(R, axis=0))),
        "best single asset": float(np.max(np.prod(R, axis=0))),
    }
    x_free, _ = best_crp(R)
    out["best CRP (no risk constraint)"] = float(np.exp(np.sum(np.log(R @ x_free))))
    if x_star is not None:
        out["best constraint-satisfying CRP (x*)"] = float(np.exp(np.sum(np.log(R @ x_star))))
    return out
