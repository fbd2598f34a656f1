"""Summaries of a Result: means over seeds with 95% intervals (failed seeds excluded).

The interval of a mean is the percentile bootstrap (Efron & Tibshirani 1993, Sec. 13.3):
the 2.5% and 97.5% quantiles of the means of ``RESAMPLES`` resamples of the seeds drawn with
replacement, by a fixed generator (the same numbers for the same values).  It lies within the
values' range, so the interval of a non-negative quantity (hard violation) is non-negative,
and it needs no normality of the mean.  Above ``EXACT_UP_TO`` seeds, where the bootstrap
distribution of a mean is normal to well within its own Monte-Carlo error, the normal interval
mean ± 1.96 s/√n is taken instead, clipped to the values' range in the same way.
"""

from __future__ import annotations

import numpy as np

RESAMPLES = 1000
EXACT_UP_TO = 1 << 11  # a sweep of 60 settings x 3 metrics summarised in seconds
_CELLS = 1 << 22  # resampled values drawn at once (memory: 32 MB of indices)


def bootstrap_ci(values: np.ndarray, level: float = 0.95) -> list:
    """The percentile-bootstrap interval of the mean of ``values``.

    The quantiles (1 − level)/2 and (1 + level)/2 of the means of ``RESAMPLES`` resamples drawn
    with replacement by a fixed generator (Efron & Tibshirani 1993, Sec. 13.3); above
    ``EXACT_UP_TO`` values the normal interval mean ± 1.96 s/√n.  Either is clipped to the
    values' range.

    Args:
        values: finite values, 1-D.
        level: the coverage (default 0.95).

    Returns:
        [lo, hi]; [NaN, NaN] for fewer than 2 values.

    Example:
        >>> from jaxbco import summary
        >>> summary.bootstrap_ci([1.0, 1.0, 1.0])
        [1.0, 1.0]
    """
    v = np.asarray(values, dtype=np.float64)
    n = v.size
    if n < 2:
        return [float("nan")] * 2
    if np.all(v == v[0]):
        return [float(v[0])] * 2
    if n > EXACT_UP_TO:
        half = 1.96 * float(v.std(ddof=1)) / np.sqrt(n)
        lo, hi = v.mean() - half, v.mean() + half
        return [float(max(lo, v.min())), float(min(hi, v.max()))]
    rng = np.random.default_rng(0)
    means = np.empty(RESAMPLES)
    step = max(1, _CELLS // n)
    for i in range(0, RESAMPLES, step):
        rows = min(step, RESAMPLES - i)
        means[i : i + rows] = v[rng.integers(0, n, (rows, n))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return [float(max(lo, v.min())), float(min(hi, v.max()))]


def interval(values: np.ndarray) -> dict:
    """The mean of the finite ``values`` with its 95% percentile-bootstrap interval, and the spread
    over seeds.

    Args:
        values: the values (non-finite ones are left out).

    Returns:
        {"mean", "ci95": [lo, hi] (``bootstrap_ci``), "q025", "q975" (the 2.5% and 97.5%
        quantiles of the values themselves), "n" (how many were finite)}; NaNs when none is.

    Example:
        >>> from jaxbco import summary
        >>> out = summary.interval([1.0, 2.0, 3.0, float("nan")])
        >>> out["mean"], out["n"]
        (2.0, 3)
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    n = v.size
    if n == 0:
        return {
            "mean": float("nan"),
            "ci95": [float("nan")] * 2,
            "q025": float("nan"),
            "q975": float("nan"),
            "n": 0,
        }
    return {
        "mean": float(v.mean()),
        "ci95": bootstrap_ci(v),
        "q025": float(np.quantile(v, 0.025)),
        "q975": float(np.quantile(v, 0.975)),
        "n": int(n),
    }


def uncertified(result) -> int:
    """How many seeds' x* failed its certificate (``Result.x_star_ok``; 0 where not recorded)."""
    ok = getattr(result, "x_star_ok", None)
    return 0 if ok is None else int(np.size(ok) - np.count_nonzero(ok))


def prox_uncertified(result, setting: int = 0) -> int:
    """How many runs of a setting had a prox step fail its certificate (``Result.prox_ok``;
    0 where not recorded)."""
    ok = getattr(result, "prox_ok", None)
    if ok is None:
        return 0
    ok = np.asarray(ok)
    row = ok[setting] if ok.ndim == 2 else ok
    return int(np.size(row) - np.count_nonzero(row))


def checked(result, field: str) -> bool:
    """Whether a run recorded a certificate in ``field`` (``x_star_certificate``,
    ``prox_certificate``): False where every entry is NaN (no comparator, a given x*, or a
    method with no prox solve to certify)."""
    cert = getattr(result, field, None)
    return cert is not None and bool(np.isfinite(np.asarray(cert, np.float64)).any())


def summarize(result, setting: int = 0) -> dict:
    """R_T/T, hard V_T and soft V_T at the last checkpoint for one hyperparameter setting, each as
    an ``interval`` over the seeds that did not fail.

    Args:
        result: a ``Result`` of ``sweep`` (curves (G, S, K)).
        setting: the index of the setting along the grid axis.

    Returns:
        {"horizon", "seeds", "failed_seeds", "x_star_uncertified_seeds",
        "prox_uncertified_seeds", "regret_over_T", "hard_violation", "soft_violation",
        "wall_s"}.

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems, summary
        >>> res = jaxbco.sweep(problems.make("quadratic-ball", 3), 100, seeds=4, checkpoints=[100])
        >>> out = summary.summarize(res)
        >>> out["seeds"], out["failed_seeds"], sorted(out["regret_over_T"])
        (4, 0, ['ci95', 'mean', 'n', 'q025', 'q975'])
    """
    T = int(result.rounds[-1])
    ok = ~np.asarray(result.failed)[setting]
    return {
        "horizon": T,
        "seeds": int(ok.size),
        "failed_seeds": int((~ok).sum()),
        "x_star_uncertified_seeds": uncertified(result),
        "prox_uncertified_seeds": prox_uncertified(result, setting),
        "regret_over_T": interval(result.regret[setting, ok, -1] / T),
        "hard_violation": interval(result.hard_violation[setting, ok, -1]),
        "soft_violation": interval(result.soft_violation[setting, ok, -1]),
        "wall_s": result.wall_s,
    }
