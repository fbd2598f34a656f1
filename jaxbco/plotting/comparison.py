"""The comparison figure (``jaxbco.compare``): several algorithms' regret, hard violation and,
for portfolios, wealth against t."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from jaxbco.algorithms import display_name
from jaxbco.plotting.style import REFERENCE_COLOR, algorithm_color, band


def _symlog_floor(curves) -> float:
    finite = [np.abs(np.nanmean(np.asarray(c, np.float64), axis=0)) for c in curves]
    top = max((float(np.nanmax(f)) for f in finite if np.isfinite(f).any()), default=1.0)
    return max(top * 1e-3, 1e-12)


def plot_comparison(rounds, curves: dict, path, *, bounds: dict | None = None,
                    wealth: dict | None = None, title: str | None = None):
    """Regret and hard violation vs t for several algorithms: mean over seeds with a 2.5-97.5%
    quantile band, log t axis, symmetric-log values (regret may be negative), one colour per
    algorithm (``algorithm_color``).

    ``curves``: name -> {"regret": (S, K), "hard_violation": (S, K)}; ``bounds``: optional
    {"regret": (K,), "hard_violation": (K,), "label": str} drawn dashed grey
    (``REFERENCE_COLOR``; the theorem bound for rectified-bco); ``wealth``: optional name ->
    (S, K) wealth curves, drawn in a third panel (log scale).
    """
    t = np.asarray(rounds, dtype=np.float64)
    panels = [("regret", "regret $R_t$"), ("hard_violation", r"hard violation $\sum_s [g_s(x_s)]_+$")]
    ncols = 3 if wealth else 2
    fig = Figure(figsize=(4.0 * ncols, 3.4), constrained_layout=True)
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    for ax, (key, label) in zip(axes, panels):
        data = [np.asarray(c[key], np.float64) for c in curves.values()]
        for name, c in curves.items():
            band(ax, t, c[key], algorithm_color(name), display_name(name))
        floor = _symlog_floor(data)
        if bounds is not None and key in bounds:
            ax.plot(t, bounds[key], "--", color=REFERENCE_COLOR, lw=1.1,
                    label=bounds.get("label", "bound"))
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=floor)
        lowest = min(float(np.nanmin(np.nanquantile(d, 0.025, axis=0))) for d in data)
        lowest_mean = min(float(np.nanmin(np.nanmean(d, axis=0))) for d in data)
        # show negative means in full; below them only a band's first decade
        ax.set_ylim(bottom=min(1.5 * lowest_mean, max(min(lowest, 0.0), -floor)))
        ax.set_xlabel("round $t$")
        ax.set_title(label, fontsize=9)
    if wealth:
        ax = axes[2]
        for name, w in wealth.items():
            band(ax, t, w, algorithm_color(name), display_name(name))
        ax.set_xscale("log")
        w_all = np.concatenate([np.ravel(np.asarray(w, np.float64)) for w in wealth.values()])
        w_all = w_all[np.isfinite(w_all) & (w_all > 0)]
        if w_all.size and w_all.max() > 10 * w_all.min():
            ax.set_yscale("log")
        ax.set_xlabel("round $t$")
        ax.set_title("wealth $\\prod_s \\langle r_s, x_s\\rangle$", fontsize=9)
    handles, labels = axes[0].get_legend_handles_labels()
    axes[-1].legend(handles, labels, fontsize=7, loc="best")
    if title:
        fig.suptitle(title, fontsize=9)
    fig.savefig(path, dpi=130)
    return path
