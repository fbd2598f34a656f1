"""The portfolio summary figure: every real-data set of the study in one figure, each as two
panels against the trading day: wealth relative to the uniform constant-rebalanced portfolio
(uniform CRP) and cumulative hard violation.

Why these two panels, on a linear day axis: on these data most algorithms end within 0.1% of
the uniform CRP's wealth, so wealth itself (growing by decades over 25 years) hides who gained
what; its ratio to the uniform CRP, W_t / W_t^unif, shows the differences at their own scale,
with 1 (uniform weights) as reference.  The risk-constrained best CRP x*, chosen in hindsight,
ends 1.3-4 times higher and would flatten the panels: the caption gives its final ratio
(regret against x* is log(W_t^x* / W_t), the same information).  Violation of the risk constraint accrues in the
late, volatile years (nyse_n: 0 up to day 5331, 0.049 by day 6181), which a log round axis
squeezes into a stroke at the right edge; on calendar days it is drawn where it happens.
Series that coincide on every data set, within ``marks.COINCIDE`` of each panel's own scale,
are drawn once and named in the caption.
"""

from __future__ import annotations

import os

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from jaxbco.algorithms import display_name
from jaxbco.plotting import panels, scales
from jaxbco.plotting.marks import COINCIDE, _apart, legend, marks
from jaxbco.plotting.style import MARKERS, PAPER_RC, PRINT_WIDTH, assign, variant

#: Data sets per row of the figure (each takes a column, two panels tall).
COLUMNS = 3
#: The panels' metrics and their (panel title, y label).
METRICS = {
    "wealth_ratio": ("wealth / uniform CRP", r"$W_t\,/\,W_t^{\mathrm{unif}}$"),
    "hard_violation": ("hard violation", r"$\sum_{s\leq t}[g_s(x_s)]_+$"),
}
#: The wealth panel's reference line: (label, colour, dash).
UNIFORM = ("uniform CRP", "#777777", (0, (2, 1.5)))


def _ratio(wealth, uniform):
    w = np.atleast_2d(np.asarray(wealth, np.float64))
    return w / np.asarray(uniform, np.float64)[None, :]


def _coincide(sets, names):
    """Groups of algorithms whose mean curves coincide on every data set and panel."""
    means = [
        {
            n: {
                "wealth_ratio": np.nanmean(_ratio(s["curves"][n]["wealth"], s["uniform"]), 0),
                "hard_violation": np.nanmean(np.atleast_2d(s["curves"][n]["hard_violation"]), 0),
            }
            for n in names
        }
        for s in sets
    ]

    def apart(a, b):
        worst = 0.0
        for mu in means:
            for m in METRICS:
                v = np.concatenate([mu[n][m] for n in names])
                v = v[np.isfinite(v)]
                span = float(v.max() - v.min()) if v.size else 0.0
                top = float(np.max(np.abs(v))) if v.size else 0.0
                worst = max(worst, _apart(mu[a][m], mu[b][m], span, top))
        return worst

    groups, used = [], set()
    for i, a in enumerate(names):
        if a in used:
            continue
        twins = [b for b in names[i + 1 :] if b not in used and apart(a, b) <= 1.0]
        used.update(twins)
        groups.append([a] + twins)
    return groups


def portfolio_summary(sets: list, *, title: str | None = None) -> Figure:
    """Wealth relative to the uniform CRP and hard violation against the trading day, for
    several portfolio data sets in one figure (``COLUMNS`` data sets a row, two panels each).

    W_t = ∏ₛ≤ₜ ⟨rₛ, xₛ⟩ per seed is divided by the uniform CRP's W_t^unif = ∏ₛ≤ₜ mean(rₛ),
    then averaged over seeds; the hard violation V_t = ∑ₛ≤ₜ [gₛ(xₛ)]₊ is averaged over seeds.

    Args:
        sets: one dict per data set: "name" (the panel title), "rounds" (K,) trading days,
            "curves" (algorithm -> {"wealth", "hard_violation"}: (S, K) per seed or (K,)
            means), "uniform" (K,) the uniform CRP's wealth, and optionally "best" (K,) the
            risk-constrained best CRP's wealth, and "seeds" (the seeds behind (K,) means).
        title: the figure's one-line title.

    Returns:
        Figure: the figure; ``panels.caption(fig)`` is its caption.

    Raises:
        ValueError: no data set, or a data set whose curves do not match its rounds.

    Example:
        >>> t = np.arange(1, 101)
        >>> u = 1.001 ** t
        >>> s = {"name": "toy", "rounds": t, "uniform": u,
        ...      "curves": {"rectified-bco": {"wealth": u * 1.01, "hard_violation": 0 * u},
        ...                 "recoo": {"wealth": u * 0.99, "hard_violation": 0 * u}}}
        >>> "uniform CRP" in panels.caption(portfolio_summary([s]))
        True
    """
    if not sets:
        raise ValueError("sets must hold at least one data set, got none")
    for s in sets:
        k = len(np.asarray(s["rounds"]))
        for n, c in s["curves"].items():
            for m in ("wealth", "hard_violation"):
                if np.shape(c[m])[-1] != k:
                    raise ValueError(
                        f"sets[{s['name']!r}]: {n}'s {m} has {np.shape(c[m])[-1]} "
                        f"checkpoints, its rounds {k}"
                    )
    names = list(dict.fromkeys(n for s in sets for n in s["curves"]))
    names = sorted(names, key=variant)
    groups = _coincide(sets, names)
    colours = assign(names)
    notes = []
    for g in (g for g in groups if len(g) > 1):
        notes.append(
            f"{' and '.join(map(display_name, g))} coincide on every data set (within "
            f"{COINCIDE:g} of each panel's range, in decades where it is logarithmic): one line."
        )
    ncols = min(COLUMNS, len(sets))
    nrows = 2 * -(-len(sets) // ncols)
    width = min(PRINT_WIDTH, panels.PANEL_W * ncols + 0.5)
    height = 1.55 * nrows + 0.5
    seeds = max(
        s.get("seeds", np.atleast_2d(c["wealth"]).shape[0])
        for s in sets
        for c in s["curves"].values()
    )
    with matplotlib.rc_context(PAPER_RC):
        fig = Figure(figsize=(max(width, 3.0), height), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for ax in axes.ravel()[2 * len(sets) :]:
            ax.set_visible(False)
        handles = {}
        for i, s in enumerate(sets):
            t = np.asarray(s["rounds"], np.float64)
            col, row = i % ncols, 2 * (i // ncols)
            for r, metric in enumerate(METRICS):
                ax = axes[row + r, col]
                ylabel = METRICS[metric][1]
                ax.set_title(f"{s['name']}, T = {int(t[-1])}" if r == 0 else "")
                ax.set_ylabel(ylabel)
                ax.set_xlabel("trading day $t$" if r == 1 else "")
                values = []
                for k, g in enumerate(groups):
                    c = s["curves"].get(g[0])
                    if c is None:
                        continue
                    if metric == "wealth_ratio":
                        mean = np.nanmean(_ratio(c["wealth"], s["uniform"]), 0)
                    else:
                        mean = np.nanmean(np.atleast_2d(c["hard_violation"]), 0)
                    values.append(mean)
                    colour, wrap = colours[g[0]]
                    ls = panels.LINESTYLES[
                        variant(g[0]) if wrap == 0 else wrap % len(panels.LINESTYLES)
                    ]
                    (h,) = ax.plot(
                        t,
                        mean,
                        color=colour,
                        ls=ls,
                        lw=1.2,
                        marker=MARKERS[k % len(MARKERS)],
                        ms=3.2,
                        mew=0.6,
                        markevery=marks(t, k, len(groups), log=False),
                        zorder=3,
                    )
                    handles.setdefault(" = ".join(map(display_name, g)), h)
                if metric == "wealth_ratio":
                    label, colour, dash = UNIFORM
                    (h,) = ax.plot(t, np.ones_like(t), color=colour, ls=dash, lw=1.0, zorder=2)
                    handles.setdefault(label, h)
                    values.append(np.ones_like(t))
                scales.scale_y(ax, values)
                ax.set_xlim(t[0], t[-1])
                ax.grid(True, which="major", lw=0.3, alpha=0.5)
        legend(fig, list(handles.items()), max(width, 3.0), height)
        if title:
            fig.suptitle(title)
    best = [
        f"{s['name']} {float(np.asarray(s['best'])[-1] / np.asarray(s['uniform'])[-1]):.3g}"
        for s in sets
        if s.get("best") is not None
    ]
    text = [
        f"Lines: mean over {seeds} seeds; wealth is divided by the uniform CRP's before the "
        f"mean (1: no better than uniform weights).",
        *notes,
    ]
    if best:
        text.append(
            f"Off the panels, so as not to flatten them: the risk-constrained best CRP x* "
            f"(chosen in hindsight) ends at {', '.join(best)} times the uniform CRP's wealth."
        )
    fig.jaxbco_caption = " ".join(text)
    return fig


def plot_portfolio_summary(sets: list, path, *, title: str | None = None, with_caption=False):
    """Draw ``portfolio_summary`` and save it as ``path`` (PNG, 300 dpi) and a PDF beside it.

    Args:
        sets: as ``portfolio_summary``.
        path: the PNG's path.
        title: the figure's one-line title.
        with_caption: also return the caption.

    Returns:
        ``path``, or (``path``, caption) with ``with_caption``.

    Example:
        >>> import tempfile
        >>> t = np.arange(1, 51)
        >>> s = {"name": "toy", "rounds": t, "uniform": np.ones(50),
        ...      "curves": {"recoo": {"wealth": np.ones(50), "hard_violation": np.zeros(50)}}}
        >>> p = plot_portfolio_summary([s], os.path.join(tempfile.mkdtemp(), "p.png"))
        >>> os.path.exists(p)
        True
    """
    fig = portfolio_summary(sets, title=title)
    root, ext = os.path.splitext(os.fspath(path))
    panels.save(fig, root if ext.lower() == ".png" else os.fspath(path))
    return (path, panels.caption(fig)) if with_caption else path
