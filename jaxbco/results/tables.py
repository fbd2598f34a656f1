"""Tables of a results Dataset: the tidy per-round frame and the final-round summary with 95%
confidence intervals of the mean over seeds (``jaxbco.summary.interval``)."""

from __future__ import annotations

import numpy as np

from jaxbco.results.dataset import CURVES, grid_dims
from jaxbco.summary import interval


def to_frame(ds):
    """The results as a tidy table: one row per (algorithm, grid point, seed, round).

    Args:
        ds: a results ``xarray.Dataset`` (``to_dataset``, ``load``).

    Returns:
        A ``pandas.DataFrame`` with the curves (regret, hard_violation, soft_violation, lam,
        loss), ``failed``, ``failed_round`` and the dimensions (hyperparameters, seed, round)
        as columns.

    Example:
        >>> import jaxbco
        >>> from jaxbco import results
        >>> problem = jaxbco.problems.make("quadratic-ball", horizon=50)
        >>> ds = results.to_dataset(jaxbco.sweep(problem, 50, seeds=3, checkpoints=[10, 50]))
        >>> frame = results.to_frame(ds)
        >>> len(frame), sorted(set(frame["round"]))
        (6, [10, 50])
    """
    keep = [v for v in CURVES + ("failed", "failed_round") if v in ds]
    sub = ds[keep]
    order = [d for d in sub["regret"].dims]
    frame = sub.to_dataframe(dim_order=order).reset_index()
    return frame


def _interval(values) -> tuple:
    iv = interval(values)
    return iv["mean"], iv["ci95"][0], iv["ci95"][1]


def summary_table(ds):
    """The final round's summary: R_T/T, hard V_T and soft V_T per (algorithm, grid point),
    each as the mean over seeds with its 95% confidence interval (``jaxbco.summary.interval``),
    failed seeds left out and counted.

    Args:
        ds: a results ``xarray.Dataset`` (``to_dataset``, ``load``).

    Returns:
        A ``pandas.DataFrame``, one row per (algorithm, grid point): the hyperparameter values,
        ``seeds``, ``failed`` and, for each of regret_over_T, hard_violation and
        soft_violation, the columns ``*_mean``, ``*_ci_lo`` and ``*_ci_hi``.

    Example:
        >>> import jaxbco
        >>> from jaxbco import results
        >>> problem = jaxbco.problems.make("quadratic-ball", horizon=50)
        >>> hyper = jaxbco.grid(c=[0.5, 0.75], eps=[0.1], delta=[0.02], xi=[0.02])
        >>> res = jaxbco.sweep(problem, 50, hyper, seeds=4)
        >>> table = results.summary_table(results.to_dataset(res))
        >>> table[["c", "seeds", "failed"]].values.tolist()
        [[0.5, 4.0, 0.0], [0.75, 4.0, 0.0]]
    """
    import pandas as pd

    T = float(ds["round"].values[-1])  # the last checkpoint (T with log_checkpoints): R_t/t there
    dims = grid_dims(ds)
    shape = tuple(ds.sizes[d] for d in dims)
    last = ds.isel(round=-1)
    rows = []
    for idx in np.ndindex(*shape):
        sel = dict(zip(dims, idx))
        point = last.isel(sel)
        ok = ~np.asarray(point["failed"].values, bool)
        row = {d: point[d].values.item() for d in dims}
        for name, coord in point.coords.items():
            if name not in row and name not in ("seed", "round") and coord.ndim == 0:
                row[name] = coord.values.item()
        row.update(seeds=int(ok.size), failed=int((~ok).sum()))
        for key, vals in (
            ("regret_over_T", point["regret"].values / T),
            ("hard_violation", point["hard_violation"].values),
            ("soft_violation", point["soft_violation"].values),
        ):
            m, lo, hi = _interval(np.asarray(vals, np.float64)[ok])
            row.update({f"{key}_mean": m, f"{key}_ci_lo": lo, f"{key}_ci_hi": hi})
        rows.append(row)
    return pd.DataFrame(rows)
