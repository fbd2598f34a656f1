"""The one figure style of jaxbco: panels of curves against the round t, drawn the same way by
every command (``run``, ``sweep``, ``compare``, ``plot``) and by the notebooks.

Each panel: the mean over seeds (failed seeds left out) as a line, the 10-90% range of the
seeds as a shaded band (the only meaning a band has; with more than ``MAX_BANDS`` series the
bands are left out and the legend says so), round t on a log axis, the y axis labelled with
the quantity's formula and scaled to the data (``scale_y``: log where every value is
positive, else symmetric-log with a linear range taken from the data, never a clamp floor);
a theory line is clipped to that range, and one entirely above it is named in the legend
with its range instead of squashing the data.
Series are told apart by colour and line style (``styles``); the legend sits outside the
panels, below them; theory references are dashed grey lines whose label names their
setting.  Text is at least 8 pt; PNG and PDF are saved with tight bounding boxes, so nothing is
clipped.
"""

from __future__ import annotations

import textwrap
import warnings
from typing import NamedTuple

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from jaxbco.plotting.style import PAPER_RC, REFERENCE_COLOR, WIDE_COLORS

BAND_QUANTILES = (0.1, 0.9)
BAND_LABEL = "shaded: 10-90% of seeds"
MAX_BANDS = 4
LINESTYLES = ("-", (0, (5, 1.5)), (0, (1, 1.2)), (0, (5, 1.5, 1, 1.5)))


class Series(NamedTuple):
    """One line: its label, colour, line style and per-metric (S, K) curves over seeds."""

    label: str
    color: str
    ls: object
    curves: dict  # metric -> (S, K) array, failed seeds already left out


class Reference(NamedTuple):
    """A theory line in one panel: (K,) values and its label."""

    metric: str
    values: np.ndarray
    label: str


def styles(n: int) -> list:
    """(colour, line style) for n series told apart: up to 12 distinct colours, the line
    style cycling alongside so neighbours differ in both."""
    return [(WIDE_COLORS[i % len(WIDE_COLORS)], LINESTYLES[i % 3]) for i in range(n)]


def summary(curves) -> tuple:
    """(mean, q10, q90) over the seeds of an (S, K) array, nan where no seed is finite."""
    v = np.asarray(curves, np.float64)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if v.shape[0] == 0:
            nan = np.full(v.shape[1], np.nan)
            return nan, nan, nan
        mean = np.nanmean(v, axis=0)
        lo, hi = np.nanquantile(v, BAND_QUANTILES, axis=0)
    return mean, lo, hi


def scale_y(ax, arrays) -> str:
    """Log scale where every drawn value is positive, else symmetric-log whose linear range
    is the smallest positive magnitude drawn (at least 1e-6 of the largest); limits from the
    data.  Returns the scale's name."""
    v = np.concatenate([np.ravel(np.asarray(a, np.float64)) for a in arrays])
    v = v[np.isfinite(v)]
    if v.size == 0:
        return "linear"
    top, bottom = float(v.max()), float(v.min())
    if bottom > 0:
        ax.set_yscale("log")
        ax.set_ylim(bottom / 1.25, top * 1.25)
        return "log"
    mags = np.abs(v[v != 0])
    if mags.size == 0:
        ax.set_ylim(-1, 1)
        return "linear"
    big = float(mags.max())
    lin = max(float(mags.min()), big * 1e-6)
    if big / lin < 20:  # less than about a decade and a half: linear shows it best
        pad = 0.05 * (top - bottom or big)
        ax.set_ylim(bottom - pad if bottom < 0 else 0.0, top + pad)
        return "linear"
    ax.set_yscale("symlog", linthresh=lin, linscale=1.0)  # the linear part a decade tall
    # each end at the data (zero where the data reach it), a quarter beyond
    low = bottom * 1.25 if bottom < 0 else 0.0
    high = top * 1.25 if top > 0 else (top / 1.25 if top < 0 else 0.0)
    ax.set_ylim(low, high)
    ax.set_yticks(_symlog_ticks(lin, low, high))
    return "symlog"


def _symlog_ticks(lin: float, low: float, high: float) -> list:
    """0 and the decades beyond the linear range (+-lin itself left out: its labels would
    crowd 0's), every other decade where there are more than six on a side."""
    first = int(np.floor(np.log10(lin))) + 1
    ticks = [0.0] if low <= 0.0 <= high else []
    for sign, end in ((1.0, high), (-1.0, -low)):
        if end <= lin:
            continue
        decades = list(range(first, int(np.floor(np.log10(end))) + 1))
        step = 2 if len(decades) > 6 else 1
        ticks += [sign * 10.0 ** k for k in decades[::-1][::step]]
    return sorted(ticks)


def draw(path, t, series: list, metrics, labels: dict, **kwargs) -> list:
    """``build`` the figure and save it as ``path`` + ".png" (300 dpi) and ".pdf" with a tight
    bounding box; returns both paths."""
    fig = build(t, series, metrics, labels, **kwargs)
    base = str(path)
    files = [base + ".png", base + ".pdf"]
    with matplotlib.rc_context(PAPER_RC):
        fig.savefig(files[0], dpi=300, bbox_inches="tight", pad_inches=0.04)
        fig.savefig(files[1], bbox_inches="tight", pad_inches=0.04)
    return files


def build(t, series: list, metrics, labels: dict, *, refs=(), title: str | None = None,
          bands: bool = True, note: str | None = None) -> Figure:
    """One panel per metric (``labels``: metric -> (panel title, y-axis label)) of the
    ``series`` against the rounds ``t``, with the theory ``refs``; ``note`` heads the legend
    (e.g. failed seeds)."""
    t = np.asarray(t, np.float64)
    shade = bands and len(series) <= MAX_BANDS
    ncols = min(3, len(metrics))
    nrows = -(-len(metrics) // ncols)
    with matplotlib.rc_context(PAPER_RC):
        fig = Figure(figsize=(3.2 * ncols + 0.3, 2.5 * nrows + 0.4), constrained_layout=True)
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for ax in axes.ravel()[len(metrics):]:
            ax.set_visible(False)
        ref_handles = {}
        for ax, metric in zip(axes.ravel(), metrics):
            name, ylabel = labels[metric]
            ax.set_title(name)
            ax.set_xlabel("round $t$")
            ax.set_ylabel(ylabel)
            drawn = []
            for s in series:
                mean, lo, hi = summary(s.curves[metric])
                if not np.isfinite(mean).any():
                    continue
                if shade:
                    ax.fill_between(t, lo, hi, color=s.color, alpha=0.18, lw=0)
                    drawn += [lo, hi]
                ax.plot(t, mean, color=s.color, ls=s.ls, lw=1.4)
                drawn.append(mean)
            if not drawn:
                ax.text(0.5, 0.5, "no finite values: every seed failed or none was run",
                        transform=ax.transAxes, ha="center", va="center", wrap=True)
                ax.set_xticks([])
                ax.set_yticks([])
                continue
            ax.set_xscale("log")
            ax.set_xlim(t[0], t[-1])
            scale_y(ax, drawn)  # the limits come from the data; a reference is clipped to them
            top = ax.get_ylim()[1]
            for k, ref in enumerate(r for r in refs if r.metric == metric):
                style = dict(color=REFERENCE_COLOR, lw=1.0, ls=LINESTYLES[1 + k % 3])
                if np.nanmin(ref.values) > top:  # far above the data: said, not drawn
                    h = Line2D([], [], **style)
                    label = (f"{ref.label}: above the {name} panel ({np.nanmin(ref.values):.3g} "
                             f"to {np.nanmax(ref.values):.3g})")
                else:
                    h, = ax.plot(t, ref.values, **style)
                    label = ref.label
                ref_handles.setdefault(label, h)
            ax.grid(True, which="major", lw=0.3, alpha=0.5)
        handles = [Line2D([], [], color=s.color, ls=s.ls, lw=1.4) for s in series]
        texts = [s.label for s in series]
        handles += list(ref_handles.values())
        texts += list(ref_handles)
        notes = [note] if note else []
        if shade:
            handles.append(Patch(color="0.35", alpha=0.18, lw=0))
            texts.append(BAND_LABEL)
        elif bands and len(series) > MAX_BANDS:
            notes.append(f"lines: means over seeds (bands left out for {len(series)} series)")
        width_in = 3.2 * ncols + 0.3
        column = max(len(x) for x in texts) * 0.055 + 0.65  # inches per legend column at 8 pt
        cols = max(1, min(len(texts), int(0.95 * width_in / column)))
        rows = -(-len(texts) // cols) + len(notes)
        fig.set_figheight(2.5 * nrows + 0.45 + 0.17 * rows)  # room below the panels
        fig.legend(handles, texts, loc="outside lower center", ncols=cols,
                   title="; ".join(notes) or None, title_fontsize=8)
        if title:
            fig.suptitle("\n".join(textwrap.wrap(title, int(28 * ncols + 10))))
    return fig
