"""Summaries of a Result: means with 95% intervals over seeds (failed seeds excluded)."""

from __future__ import annotations

import numpy as np


def interval(values: np.ndarray) -> dict:
    """Mean, 95% confidence interval of the mean (normal approximation), 2.5/97.5% quantiles."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    n = v.size
    if n == 0:
        return {"mean": float("nan"), "ci95": [float("nan")] * 2, "q025": float("nan"),
                "q975": float("nan"), "n": 0}
    mean = float(v.mean())
    half = 1.96 * float(v.std(ddof=1)) / np.sqrt(n) if n > 1 else float("nan")
    return {"mean": mean, "ci95": [mean - half, mean + half], "q025": float(np.quantile(v, 0.025)),
            "q975": float(np.quantile(v, 0.975)), "n": int(n)}


def summarize(result, setting: int = 0) -> dict:
    """R_T/T, hard V_T and soft V_T at the last checkpoint for one hyperparameter setting."""
    T = int(result.rounds[-1])
    ok = ~np.asarray(result.failed)[setting]
    return {
        "horizon": T,
        "seeds": int(ok.size),
        "failed_seeds": int((~ok).sum()),
        "regret_over_T": interval(result.regret[setting, ok, -1] / T),
        "hard_violation": interval(result.hard_violation[setting, ok, -1]),
        "soft_violation": interval(result.soft_violation[setting, ok, -1]),
        "wall_s": result.wall_s,
    }
