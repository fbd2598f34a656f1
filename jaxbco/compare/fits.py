"""Log-log slopes of measured curves, to set next to the theorems' exponents."""

from __future__ import annotations

import numpy as np


def fit_exponent(t, y, lo: float, hi: float) -> float:
    """The least-squares slope of log y on log t over the rounds in [lo, hi] where y > 0.

    Args:
        t: the rounds.
        y: the curve's values at t.
        lo: the first round of the fit.
        hi: the last round of the fit.

    Returns:
        The slope, or NaN with fewer than three such rounds.

    Example:
        >>> import numpy as np
        >>> from jaxbco.compare import fit_exponent
        >>> t = np.array([10.0, 100.0, 1000.0])
        >>> round(fit_exponent(t, 3 * t**0.5, 1, 1000), 6)
        0.5
    """
    t, y = np.asarray(t, np.float64), np.asarray(y, np.float64)
    keep = (t >= lo) & (t <= hi) & np.isfinite(y) & (y > 0)
    if keep.sum() < 3:
        return float("nan")
    return float(np.polyfit(np.log(t[keep]), np.log(y[keep]), 1)[0])


def exponent_across_horizons(horizons, finals, *, resamples: int = 1000, seed: int = 0) -> dict:
    """The exponent a of mean_s yₛ(T) ≈ C·Tᵃ across a ladder of horizons, with a 95% bootstrap
    interval over seeds.

    Each horizon is its own run (the step sizes depend on T), so R_T = O(Tᵃ) is a statement
    across runs, not within one.  The slope is the least-squares fit of log mean on log T; the
    interval resamples the seeds with replacement at every horizon independently (percentiles
    2.5 and 97.5).

    Args:
        horizons: (H,) the horizons T.
        finals: (H, S) the per-seed value at T (R_T or V_T; NaN for a failed seed).
        resamples: the bootstrap resamples.
        seed: the seed of the resampling generator.

    Returns:
        {"exponent", "ci95": [lo, hi], "means": the mean at each T}; NaN where a mean is ≤ 0.

    Raises:
        ValueError: ``finals`` not of shape (H, S) with H ≥ 2.

    Example:
        >>> import numpy as np
        >>> from jaxbco.compare import exponent_across_horizons
        >>> T = np.array([100.0, 400.0, 1600.0])
        >>> fit = exponent_across_horizons(T, np.stack([T**0.5] * 4, axis=1), resamples=10)
        >>> round(fit["exponent"], 6)
        0.5
    """
    T = np.log(np.asarray(horizons, np.float64))
    y = np.asarray(finals, np.float64)
    if y.ndim != 2 or y.shape[0] != T.size or T.size < 2:
        raise ValueError(
            f"finals must have shape (horizons, seeds) with >= 2 horizons; got {y.shape}"
        )

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
    lo, hi = (
        np.percentile(boot, [2.5, 97.5])
        if boot.size >= 0.9 * resamples
        else (float("nan"), float("nan"))
    )
    return {
        "exponent": point,
        "ci95": [float(lo), float(hi)],
        "means": np.nanmean(y, axis=1).tolist(),
    }


def order_slope(order: str, exponent: float, horizons) -> float:
    """The log-log slope an order of growth has across the given horizons: its exponent for a
    power T^p or O(1), and for an order with a logarithm the slope of log(order) against
    log T over the horizons (log T's local slope is 1/ln T: 0.13-0.18 over T = 250-2000, not 0).

    Args:
        order: the order as the theory states it ("log T", "sqrt(T log T)", "T^0.5", "O(1)").
        exponent: its power-law exponent (0 for log T, 0.5 for sqrt(T log T)).
        horizons: the ladder's horizons T.

    Returns:
        The slope to set a fitted exponent against.

    Example:
        >>> round(order_slope("log T", 0.0, [250, 500, 1000, 2000]), 3)
        0.154
        >>> order_slope("T^0.5", 0.5, [250, 2000])
        0.5
    """
    t = np.asarray(horizons, np.float64)
    text = order.replace(" ", "")
    if "log" not in text or len(t) < 2:
        return float(exponent)
    shape = np.log(t) if text.startswith("logT") else t**exponent * np.sqrt(np.log(t))
    if not text.startswith(("logT", "sqrt(TlogT)")):
        return float(exponent)
    return float(np.polyfit(np.log(t), np.log(shape), 1)[0])
