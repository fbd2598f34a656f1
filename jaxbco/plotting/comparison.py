"""The comparison figure (``jaxbco.compare``): several algorithms' regret, hard violation and,
for portfolios, wealth against t, in the one style of ``jaxbco.plotting.panels``."""

from __future__ import annotations

import os

import numpy as np

from jaxbco.algorithms import display_name
from jaxbco.plotting import panels
from jaxbco.plotting.dataset import METRIC_LABELS
from jaxbco.plotting.style import assign, variant


def _linestyle(name: str, wrap: int = 0):
    return panels.LINESTYLES[variant(name) if wrap == 0 else wrap % len(panels.LINESTYLES)]


def plot_comparison(rounds, curves: dict, path, *, bounds: dict | None = None,
                    wealth: dict | None = None, title: str | None = None):
    """Regret and hard violation vs t for several algorithms: the mean over seeds (with the
    10-90% band of the seeds when at most ``panels.MAX_BANDS`` algorithms), one fixed colour
    per algorithm in this figure (``style.assign``), oracle baselines dashed, X-only variants
    dotted.

    ``curves``: name -> {"regret": (S, K), "hard_violation": (S, K)}; ``bounds``: optional
    {"regret": (K,), "hard_violation": (K,), "label": str} drawn dashed grey (the theorem
    bound for rectified-bco); ``wealth``: optional name -> (S, K) wealth curves, a third panel.
    Writes ``path`` (PNG) and the PDF beside it; returns ``path``.
    """
    metrics = ["regret", "hard_violation"] + (["wealth"] if wealth else [])
    series, colours = [], assign(curves)
    for name, c in curves.items():
        data = {m: np.asarray(c[m], np.float64) for m in ("regret", "hard_violation")}
        if wealth:
            data["wealth"] = np.asarray(wealth[name], np.float64)
        colour, wrap = colours[name]
        series.append(panels.Series(display_name(name), colour, _linestyle(name, wrap),
                                    {m: v[np.all(np.isfinite(v), axis=1)] for m, v in data.items()}))
    refs = []
    if bounds is not None:
        label = bounds.get("label", "bound")
        refs = [panels.Reference(m, np.asarray(bounds[m], np.float64), label)
                for m in ("regret", "hard_violation") if m in bounds]
    root, ext = os.path.splitext(os.fspath(path))
    panels.draw(root if ext.lower() == ".png" else os.fspath(path), rounds, series, metrics,
                {m: METRIC_LABELS[m] for m in metrics}, refs=refs, title=title)
    return path
