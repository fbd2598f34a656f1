"""Log-log slopes of measured curves, to set next to the theorems' exponents."""

from __future__ import annotations

import numpy as np


def fit_exponent(t, y, lo: float, hi: float) -> float:
    """Least-squares slope of log y on log t over the rounds in [lo, hi] where y > 0 (NaN if
    fewer than three such rounds)."""
    t, y = np.asarray(t, np.float64), np.asarray(y, np.float64)
    keep = (t >= lo) & (t <= hi) & np.isfinite(y) & (y > 0)
    if keep.sum() < 3:
        return float("nan")
    return float(np.polyfit(np.log(t[keep]), np.log(y[keep]), 1)[0])


def exponent_across_horizons(horizons, finals, *, resamples: int = 1000, seed: int = 0) -> dict:
    """The exponent a of mean_s y_s(T) ~ C T^a across a ladder of horizons, with a 95%
    bootstrap interval over seeds.

    horizons: (H,) horizons T (each its own run: the step sizes depend on T, so
    R_T = O(T^a) is a statement across runs, not within one); finals: (H, S) the per-seed
    value at T (R_T or V_T; seeds may differ between horizons, NaN = failed).  The slope is
    the least-squares fit of log mean on log T; the interval resamples seeds with replacement
    at every horizon independently (percentiles 2.5, 97.5).  NaN where a mean is <= 0."""
    T = np.log(np.asarray(horizons, np.float64))
    y = np.asarray(finals, np.float64)
    if y.ndim != 2 or y.shape[0] != T.size or T.size < 2:
        raise ValueError(f"finals must have shape (horizons, seeds) with >= 2 horizons; got {y.shape}")

    def slope(means):
        if not np.all(np.isfinite(means)) or np.any(means <= 0):
            return float("nan")
        return float(np.polyfit(T, np.log(means), 1)[0])

    point = slope(np.nanmean(y, axis=1))
    rng = np.random.default_rng(seed)
    boot = []
    for _ in range(resamples):
        means = [np.nanmean(row[rng.integers(0, row.size, row.size)]) for row in y]
        boot.append(slope(np.asarray(means)))
    boot = np.asarray(boot)
    boot = boot[np.isfinite(boot)]
    lo, hi = (np.percentile(boot, [2.5, 97.5]) if boot.size >= 0.9 * resamples
              else (float("nan"), float("nan")))
    return {"exponent": point, "ci95": [float(lo), float(hi)],
            "means": np.nanmean(y, axis=1).tolist()}
