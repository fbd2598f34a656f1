"""Figures (the only module that imports matplotlib)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def _band(ax, t, curves, color, label):
    curves = np.asarray(curves, dtype=np.float64)
    mean = np.nanmean(curves, axis=0)
    lo, hi = np.nanquantile(curves, [0.025, 0.975], axis=0)
    ax.plot(t, mean, color=color, label=label, lw=1.6)
    ax.fill_between(t, lo, hi, color=color, alpha=0.25, lw=0)
    return mean


def plot_curves(result, path, *, c: float = 0.5, setting: int = 0, title: str | None = None):
    """Regret and hard/soft violation vs t: mean over seeds with a 95% quantile band, log-log,
    with the Theorem 1 slope T^max(c, 1-c) drawn through the final mean regret."""
    t = np.asarray(result.rounds, dtype=np.float64)
    ok = ~np.asarray(result.failed)[setting]
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 2.9), constrained_layout=True)
    ax = axes[0]
    regret = np.asarray(result.regret[setting, ok])
    mean = _band(ax, t, np.maximum(regret, 1e-12), "C0", "regret $R_t$")
    slope = max(c, 1 - c)
    ref = mean[-1] * (t / t[-1]) ** slope
    ax.plot(t, ref, "k--", lw=1, label=f"$t^{{{slope:g}}}$ (Thm. 1)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round $t$")
    ax.set_title("regret")
    ax.legend(fontsize=8)
    ax = axes[1]
    _band(ax, t, np.maximum(np.asarray(result.hard_violation[setting, ok]), 1e-12), "C3",
          r"hard $\sum[g_t]_+$")
    soft = np.asarray(result.soft_violation[setting, ok])
    ax.plot(t, np.nanmean(soft, axis=0), "C2:", lw=1.4, label=r"soft $\sum g_t$ (mean)")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel("round $t$")
    ax.set_title("constraint violation")
    ax.legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


# --- Comparison figures (jaxbco.compare) -----------------------------------------------------

#: One fixed colour per algorithm name, in the order of ``jaxbco.algorithms.ALGORITHMS``, so a
#: method has the same colour in every figure.
ALGORITHM_ORDER = ("rectified-bco", "flaxman-bgd", "agarwal-2pt", "mahdavi-pd", "recoo",
                   "yuan-lamperski", "yu-neely")


def algorithm_color(name: str):
    """The colour of ``name`` (tab10 by position in ``ALGORITHM_ORDER``; others after it)."""
    cmap = plt.get_cmap("tab10")
    if name in ALGORITHM_ORDER:
        return cmap(ALGORITHM_ORDER.index(name))
    return cmap((len(ALGORITHM_ORDER) + sum(map(ord, name))) % 10)


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
    {"regret": (K,), "hard_violation": (K,), "label": str} drawn dashed black (the theorem
    bound for rectified-bco); ``wealth``: optional name -> (S, K) wealth curves, drawn in a
    third panel (log scale).
    """
    t = np.asarray(rounds, dtype=np.float64)
    panels = [("regret", "regret $R_t$"), ("hard_violation", r"hard violation $\sum_s [g_s(x_s)]_+$")]
    ncols = 3 if wealth else 2
    fig, axes = plt.subplots(1, ncols, figsize=(4.0 * ncols, 3.4), constrained_layout=True)
    for ax, (key, label) in zip(axes, panels):
        data = [np.asarray(c[key], np.float64) for c in curves.values()]
        for name, c in curves.items():
            _band(ax, t, c[key], algorithm_color(name), name)
        floor = _symlog_floor(data)
        if bounds is not None and key in bounds:
            ax.plot(t, bounds[key], "k--", lw=1.1, label=bounds.get("label", "bound"))
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
            _band(ax, t, w, algorithm_color(name), name)
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
    plt.close(fig)
    return path
