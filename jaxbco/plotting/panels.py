"""The one figure style of jaxbco: panels of curves against the round t, drawn the same way by
every command (``run``, ``sweep``, ``compare``, ``plot``) and by the notebooks.

Each panel: the mean over seeds (failed seeds left out) as a line with markers at a few
log-spaced rounds, shaded by default with the 95% t-interval of the mean (``band``: or the
10-90% range of the seeds, or nothing), round t on a log axis (linear where a metric asks,
e.g. wealth per day), y scaled to the data (``scales.scale_y``).  Series differ in colour, line
style and marker; series whose means coincide are drawn once under one legend entry.  Many
series are drawn as small multiples (one column per ``Series.group``, the ungrouped series in
every column, y shared along a row).  Theory enters as short slope guides (``Guide``) near the
data and as reference curves (``Reference``) where they fall on the panel; what is off a panel,
left out or merged is said in the figure's caption (``caption``), not in the legend, which sits
below the panels in columns.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from jaxbco.plotting import scales
from jaxbco.plotting.lines import (  # noqa: F401  (re-exported)
    LINESTYLES,
    REF_STYLES,
    Guide,
    Reference,
    Series,
    styles,
)
from jaxbco.plotting.marks import COINCIDE, _wrap, guide, legend, marks, merge, plain  # noqa: F401
from jaxbco.plotting.scales import BAND_LABELS, scale_y, summary  # noqa: F401  (re-exported)
from jaxbco.plotting.style import MIN_PT, PAPER_RC, PRINT_WIDTH

#: The label of the 10-90% band of the seeds (for figures that draw that band themselves, like
#: the notebooks'; ``BAND_LABELS`` holds each kind's).
BAND_LABEL = BAND_LABELS["quantiles"]
MAX_BANDS = 5  # more series in one panel: bands left out (said in the caption)
PANEL_W, PANEL_H = (PRINT_WIDTH - 0.5) / 3, 1.85  # inches: three panels across the page


def caption(fig) -> str:
    """The caption ``build`` wrote for ``fig``: what the lines and bands are, and what was
    merged, left out or lies off a panel ("" for another figure).

    Args:
        fig: a Figure from ``build``.

    Returns:
        str: one paragraph of plain text.

    Example:
        >>> caption(Figure())
        ''
    """
    return getattr(fig, "jaxbco_caption", "")


def build(
    t,
    series: list,
    metrics,
    labels: dict,
    *,
    refs=(),
    guides=(),
    title: str | None = None,
    band: str | None = "ci",
    bands: bool | None = None,
    note: str | None = None,
    xlinear=(),
    short: dict | None = None,
    notes=(),
) -> Figure:
    """One panel per metric (rows of panels per metric and one column per group when the
    series have groups) of the ``series`` against the rounds ``t``; the caption (``caption``)
    says what the figure cannot.

    Args:
        t: (K,) rounds.
        series: ``Series`` to draw.
        metrics: the metrics, one panel (row) each.
        labels: metric -> (panel title, y-axis label).
        refs: ``Reference`` curves, drawn where they meet their panel, else named in the
            caption.
        guides: ``Guide`` slope guides.
        title: the figure's title (one line: keep it short, details go in the caption).
        band: "ci" (95% t-interval of the mean), "quantiles" (10-90% of seeds) or None.
        bands: False turns ``band`` off (older keyword).
        note: a sentence put first in the caption (e.g. failed seeds).
        xlinear: metrics drawn on a linear round axis.
        short: metric -> a short y label for panels after the first in a row.
        notes: further caption sentences.

    Returns:
        Figure: the figure; ``caption(fig)`` gives its caption.

    Example:
        >>> t = np.arange(1.0, 101.0)
        >>> s = Series("a", "#0072B2", "-", {"regret": np.sqrt(t)[None] * np.ones((3, 1))})
        >>> fig = build(t, [s], ["regret"], {"regret": ("regret", "R_t")})
        >>> "mean over 3 seeds" in caption(fig)
        True
    """
    t = np.asarray(t, np.float64)
    band = None if bands is False else band
    text = [note] if note else []
    series = merge(list(series), list(metrics), text)
    seeds = max((len(next(iter(s.curves.values()))) for s in series if s.curves), default=0)
    text.insert(
        0 if not note else 1,
        f"Lines: mean over {seeds} seeds (failed seeds left out)"
        + (f"; shaded: {BAND_LABELS[band][8:]}." if band else "."),
    )
    finite = {
        m: [s for s in series if np.isfinite(summary(s.curves[m], None)[0]).any()] for m in metrics
    }
    shown = [
        m
        for m in metrics
        if not finite[m]
        or any(np.nanmax(np.abs(summary(s.curves[m], None)[0])) > 0 for s in finite[m])
    ]
    for m in metrics:
        if m not in shown:
            text.append(
                f"{labels[m][0].capitalize()} is 0 at every round for every series: panel left out."
            )
    shown = shown or list(metrics)[:1]
    groups = list(dict.fromkeys(s.group for s in series if s.group is not None))
    grouped = len(groups) > 1
    cols = groups if grouped else [None]
    ncols = len(cols) if grouped else min(3, len(shown))
    nrows = len(shown) if grouped else -(-len(shown) // ncols)
    with matplotlib.rc_context(PAPER_RC):
        width = max(PANEL_W * ncols + 0.5, 4.8 if len(series) > 6 else 3.0)  # room for a legend
        width = min(width, PRINT_WIDTH)
        fig = Figure(figsize=(width, PANEL_H * nrows + 0.5), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False, sharey="row" if grouped else False)
        for ax in axes.ravel()[len(shown) * (len(cols) if grouped else 1) :]:
            ax.set_visible(False)
        cells = (
            [(axes[r, c], m, g) for r, m in enumerate(shown) for c, g in enumerate(cols)]
            if grouped
            else [(ax, m, None) for ax, m in zip(axes.ravel(), shown)]
        )
        handles, off, unbanded, banded, clipped, guided = {}, [], False, False, False, set()
        drawn = []  # (ax, metric, first in its row, panel name): the cells with series
        order = {s.label: i for i, s in enumerate(series)}
        row_values = {m: [] for m in shown}
        for _ax, metric, g in cells:
            members = [s for s in finite[metric] if g is None or s.group in (None, g)]
            shade = band is not None and len(members) <= MAX_BANDS
            unbanded |= band is not None and not shade
            banded |= shade
            for s in members:
                lo_hi = summary(s.curves[metric], band if shade else None)
                row_values[metric] += [lo_hi[0]] + (list(lo_hi[1:]) if shade else [])
            row_values[metric] += [r.values for r in refs if r.metric == metric and r.fit]
        for ax, metric, g in cells:
            name, ylabel = labels[metric]
            log_x = metric not in xlinear
            first = not grouped or g == cols[0]
            ax.set_title(name if not grouped else (_wrap(g, 18) if metric == shown[0] else ""))
            ax.set_xlabel("round $t$" if log_x else "day $t$")
            ax.set_ylabel(ylabel if first or not short else short.get(metric, ylabel))
            ax.tick_params(labelleft=True)
            members = [s for s in finite[metric] if g is None or s.group in (None, g)]
            if not members:
                ax.text(
                    0.5,
                    0.5,
                    "no finite values: every seed failed or none was run",
                    transform=ax.transAxes,
                    ha="center",
                    va="center",
                    wrap=True,
                )
                ax.set_xticks([])
                ax.set_yticks([])
                continue
            if log_x:
                ax.set_xscale("log")
            ax.set_xlim(t[0], t[-1])
            if not grouped or first:
                if scales.scale_y(ax, row_values[metric]) == "log":
                    zero = [
                        s.label
                        for s in finite[metric]
                        if not np.nanmax(np.abs(summary(s.curves[metric], None)[0])) > 0
                    ]
                    if zero:
                        text.append(
                            f"{name.capitalize()} of {', '.join(zero)}: 0 at every "
                            f"round (on the log axis' bottom edge)."
                        )
            log_y = ax.get_yscale() == "log"
            shade = band is not None and len(members) <= MAX_BANDS
            for s in members:
                mean, lo, hi = summary(s.curves[metric], band if shade else None)
                if shade:
                    keep = lo > 0 if log_y else np.isfinite(lo)
                    clipped |= bool(log_y and np.any(~keep & (hi > 0)))
                    ax.fill_between(t, lo, hi, where=keep, color=s.color, alpha=0.13, lw=0)
                    ax.plot(t, np.where(keep, lo, np.nan), color=s.color, lw=0.45, alpha=0.55)
                    ax.plot(t, hi, color=s.color, lw=0.45, alpha=0.55)
                i = order[s.label]
                (h,) = ax.plot(
                    t,
                    mean,
                    color=s.color,
                    ls=s.ls,
                    lw=1.3,
                    marker=s.marker,
                    ms=3.6,
                    mew=0.6,
                    markevery=marks(t, i, len(series), log_x),
                    zorder=3,
                )
                handles.setdefault(s.label, h)
            drawn.append((ax, metric, first, name))
            for k, gd in enumerate(x for x in guides if x.metric == metric):
                anchor = next(
                    (s for s in members if s.label.split(" = ")[0] == gd.anchor), members[0]
                )
                if guide(ax, t, gd, summary(anchor.curves[metric], None)[0], log_x, k):
                    guided.add(plain(gd.label))
            ax.grid(True, which="major", lw=0.3, alpha=0.5)
        for ax, metric, first, name in drawn:  # the final axes: after every guide grew them
            top = ax.get_ylim()[1]
            for k, ref in enumerate(r for r in refs if r.metric == metric):
                colour, dash = ref.style or REF_STYLES[k % len(REF_STYLES)]
                vals = np.asarray(ref.values, np.float64)
                if np.mean(vals <= top) < 0.5:  # above the panel for most rounds: named only
                    if first:
                        off.append(
                            f"{ref.label} lies above the {name} panel "
                            f"({np.nanmax(vals):.3g} at t = {t[-1]:g})."
                        )
                    continue
                (h,) = ax.plot(t, vals, color=colour, ls=dash, lw=1.1, zorder=3.5)
                handles.setdefault(ref.label, h)
        if guided:
            text.append(
                "Grey segments: the slopes the applicable theorem gives ("
                + "; ".join(sorted(guided))
                + "), placed at the last value of "
                "the curve they refer to; they show rates, not bounds."
            )
        text += off
        if clipped:
            text.append(
                "On a log axis a band is shaded only where its lower end is above 0 "
                "(its upper end is drawn throughout)."
            )
        if unbanded:
            text.append(f"Bands are left out in panels with more than {MAX_BANDS} series.")
        text += list(notes)
        entries = list(handles.items())
        if banded:
            entries.append((BAND_LABELS[band], Patch(color="0.45", alpha=0.25, lw=0)))
        legend(fig, entries, width, PANEL_H * nrows + 0.5)
        if title:
            fig.suptitle(title, fontsize=min(9.0, max(MIN_PT, width / len(title) / 0.0075)))
    fig.jaxbco_caption = " ".join(text)
    return fig


def save(fig, path) -> list:
    """Save ``fig`` as ``path`` + ".png" (300 dpi) and ".pdf" (vector) with tight bounding boxes.

    Args:
        fig: a Figure.
        path: the files' path without suffix.

    Returns:
        list: the PNG's and the PDF's paths.

    Example:
        >>> import tempfile, os
        >>> files = save(Figure(figsize=(1, 1)), os.path.join(tempfile.mkdtemp(), "f"))
        >>> [f[-3:] for f in files]
        ['png', 'pdf']
    """
    base = str(path)
    files = [base + ".png", base + ".pdf"]
    with matplotlib.rc_context(PAPER_RC):
        fig.savefig(files[0], dpi=300, bbox_inches="tight", pad_inches=0.04)
        fig.savefig(files[1], bbox_inches="tight", pad_inches=0.04)
    return files


def draw(path, t, series: list, metrics, labels: dict, **kwargs) -> list:
    """``build`` the figure and ``save`` it as ``path`` + ".png" and ".pdf".

    Args:
        path: the files' path without suffix.
        t: (K,) rounds.
        series: ``Series`` to draw.
        metrics: one panel each.
        labels: metric -> (panel title, y-axis label).
        **kwargs: passed to ``build``.

    Returns:
        list: the PNG's and the PDF's paths.

    Example:
        >>> import tempfile, os
        >>> t = np.arange(1.0, 11.0)
        >>> s = Series("a", "#0072B2", "-", {"regret": np.ones((2, 10)) * t})
        >>> out = draw(os.path.join(tempfile.mkdtemp(), "f"), t, [s], ["regret"],
        ...            {"regret": ("regret", "R_t")})
        >>> len(out)
        2
    """
    return save(build(t, series, metrics, labels, **kwargs), path)
