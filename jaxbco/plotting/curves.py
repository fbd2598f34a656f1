"""The figure of one ``Result``: regret and hard/soft violation against t, with Thm. 1's slope."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from jaxbco.plotting.style import band, note_no_data


def plot_curves(result, path, *, c: float = 0.5, setting: int = 0, title: str | None = None):
    """Regret and hard/soft violation vs t: mean over seeds with a 95% quantile band, log-log,
    with the Theorem 1 slope T^max(c, 1-c) drawn through the final mean regret."""
    t = np.asarray(result.rounds, dtype=np.float64)
    ok = ~np.asarray(result.failed)[setting]
    fig = Figure(figsize=(7.0, 2.9), constrained_layout=True)
    axes = fig.subplots(1, 2)
    if not ok.any():  # every seed non-finite (or none): a figure that says so
        for ax, name in zip(axes, ("regret", "constraint violation")):
            ax.set_title(name)
            note_no_data(ax, f"no finite curves: all {ok.size} seeds failed")
        if title:
            fig.suptitle(title, fontsize=9)
        fig.savefig(path, dpi=150)
        return path
    ax = axes[0]
    regret = np.asarray(result.regret[setting, ok])
    mean = band(ax, t, np.maximum(regret, 1e-12), "C0", "regret $R_t$")
    slope = max(c, 1 - c)
    ref = mean[-1] * (t / t[-1]) ** slope
    ax.plot(t, ref, "k--", lw=1, label=f"$t^{{{slope:g}}}$ (Thm. 1)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round $t$")
    ax.set_title("regret")
    ax.legend(fontsize=8)
    ax = axes[1]
    band(ax, t, np.maximum(np.asarray(result.hard_violation[setting, ok]), 1e-12), "C3",
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
    return path
