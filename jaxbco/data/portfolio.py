"""Online portfolio selection on real asset prices, with a time-varying risk constraint.

Data (``prices``): six classic benchmark sets (NYSE 1962-84 of Cover 1991, NYSE 1985-2010,
DJIA, S&P 500, TSX, MSCI) shipped as float32 daily price relatives r_t = p_t / p_{t-1} (see
``portfolio_data/PROVENANCE.md``); ``load_relatives(name)`` returns one as (days, assets).

Problem (``portfolio_problem``): X the probability simplex, f_t(x) = -log <r_t, x> (so
sum_t f_t(x_t) = -log of the final wealth), and the risk constraint

    g_t(x) = x^T Sigma_t x / rho - 1 <= 0,

Sigma_t the sample covariance (ddof 1) of the relatives of the ``window`` trading days strictly
before round t's day: round t (1-based) is data day ``window + t`` (1-based), so the first
``window`` days are a burn-in that only feeds Sigma_1, and no Sigma_t looks at day t or later.
The budget rho = ``risk`` * max_t u^T Sigma_t u, u = (1/n, ..., 1/n): with ``risk`` = 1 the
uniform CRP (and x_1 = u) satisfies every g_t, so the offline problem is feasible, and any
less risky portfolio (the min-max-variance one, found by the comparator's phase I) is a
Slater point.  Dividing by rho makes g_t unitless (a fraction of the budget), so penalties
and multipliers compare with the loss on the same scale.

Comparator (``crp.best_crp``): x* = argmin_{x in simplex} sum_t -log <r_t, x> subject to
x^T Q_t x <= 1 for every t (Q_t = Sigma_t / rho), by a float64 log-barrier interior-point
method.  The in-run comparator cannot solve this (a constraint that is an intersection of T
ellipsoids), so ``sweep``/``make_run`` take x* from here, computed once outside the call
(``jaxbco.comparator.CRPInteriorPoint`` -> ``crp.cached_best_crp``); curves run with
``comparator=False`` (regret against x_1, the uniform CRP) are shifted to regret against x* by
``wealth.regret_offset``.

This module holds the problem; the data, the comparator and the wealth metrics live in
``prices``, ``crp`` and ``wealth``, whose public names are re-exported here.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbco import constraints as C
from jaxbco import losses as L
from jaxbco import sequences as Seq
from jaxbco import sets
from jaxbco.data.crp import best_crp as best_crp
from jaxbco.data.crp import cached_best_crp as cached_best_crp
from jaxbco.data.prices import DATA_DIR as DATA_DIR
from jaxbco.data.prices import DATASETS as DATASETS
from jaxbco.data.prices import array_sha256 as array_sha256
from jaxbco.data.prices import asset_names as asset_names
from jaxbco.data.prices import load_relatives as load_relatives
from jaxbco.data.wealth import comparator as comparator
from jaxbco.data.wealth import problem_arrays as problem_arrays
from jaxbco.data.wealth import regret_offset as regret_offset
from jaxbco.data.wealth import wealth_baselines as wealth_baselines
from jaxbco.problem import Problem

WINDOW = 250  # one trading year of history for Sigma_t


def risk_matrices(relatives: np.ndarray, window: int = WINDOW) -> np.ndarray:
    """Sigma_t for rounds t = 1..days - window: the sample covariance (ddof 1) of rows
    [t - 1, t - 1 + window) (0-based), i.e. of the ``window`` days strictly before data row
    window + t - 1, round t's day.  Shape (days - window, n, n), float64.

    Rolling sums of the net returns z = r - 1 (a fixed shift, so no future row enters any
    Sigma_t, not even through rounding)."""
    r = np.asarray(relatives, np.float64)
    days, n = r.shape
    if not (isinstance(window, (int, np.integer)) and 2 <= window < days):
        raise ValueError(f"window must be an integer in [2, {days - 1}] (days - 1); got {window!r}")
    z = r - 1.0
    c1 = np.concatenate([np.zeros((1, n)), np.cumsum(z, axis=0)])
    c2 = np.concatenate([np.zeros((1, n, n)), np.cumsum(z[:, :, None] * z[:, None, :], axis=0)])
    j = np.arange(window, days)  # 0-based data row of round t = j - window + 1
    s1 = c1[j] - c1[j - window]
    s2 = c2[j] - c2[j - window]
    cov = (s2 - s1[:, :, None] * s1[:, None, :] / window) / (window - 1)
    return 0.5 * (cov + np.swapaxes(cov, 1, 2))


def risk_budget(sigmas: np.ndarray, risk: float = 1.0) -> float:
    """rho = risk * max_t u^T Sigma_t u with u the uniform portfolio."""
    if not np.isfinite(risk) or risk <= 0:
        raise ValueError(f"risk must lie in (0, inf); got {risk!r}")
    n = sigmas.shape[-1]
    return float(risk * np.max(np.sum(sigmas, axis=(1, 2))) / (n * n))


def portfolio_problem(
    relatives: np.ndarray,
    *,
    window: int = WINDOW,
    risk: float = 1.0,
    horizon: int | None = None,
    assets: int | None = None,
):
    """(Problem, info): the risk-constrained portfolio problem on a relatives array.

    Rounds are data rows window .. days - 1 (0-based); ``horizon`` keeps the first T rounds
    (default: all), ``assets`` the first n columns.  ``info`` holds rho, the window, the
    unscaled Sigma_t and the round-t relatives as float64 (for the comparator and wealth).
    """
    r = np.asarray(relatives, np.float64)
    if r.ndim != 2 or r.shape[1] < 2:
        raise ValueError(f"relatives must have shape (days, assets >= 2); got {r.shape}")
    if not np.all(np.isfinite(r)) or np.any(r <= 0):
        raise ValueError("relatives must be finite and positive")
    if assets is not None:
        if not (isinstance(assets, (int, np.integer)) and 2 <= assets <= r.shape[1]):
            raise ValueError(
                f"assets (the dimension d) must be an integer in [2, {r.shape[1]}]; got {assets!r}"
            )
        r = r[:, :assets]
    sig = risk_matrices(r, window)
    rounds = sig.shape[0]
    if horizon is not None:
        if not (isinstance(horizon, (int, np.integer)) and 1 <= horizon <= rounds):
            raise ValueError(
                f"horizon T must be an integer in [1, {rounds}] (days - window); got {horizon!r}"
            )
        sig = sig[:horizon]
    rho = risk_budget(sig, risk)
    rel_t = r[window : window + sig.shape[0]]
    n, T = r.shape[1], sig.shape[0]
    problem = Problem(
        domain=sets.Simplex(n),
        loss=L.LogWealth(),
        loss_data=Seq.Replay(jnp.asarray(rel_t)),
        constraint=C.Ellipsoid(),
        constraint_data=Seq.Replay((jnp.asarray(sig / rho), jnp.zeros((T, n)), jnp.ones(T))),
    )
    info = dict(rho=rho, window=window, risk=risk, sigmas=sig, relatives=rel_t)
    return problem, info


def build(name: str = "nyse_o", dim: int | None = None, horizon: int | None = None):
    """Registry builder: the Problem on data set ``name`` (not strongly convex)."""
    problem, _ = portfolio_problem(load_relatives(name), horizon=horizon, assets=dim)
    return problem
