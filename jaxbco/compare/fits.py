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
