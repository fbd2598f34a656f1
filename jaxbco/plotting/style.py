"""Shared look of the figures: one fixed colour per algorithm (Okabe-Ito, colour-blind safe),
series colours, the reference-line colour, and the mean-and-quantile band every curve figure
draws.  Figures are built with the object-oriented API (``Figure``, no pyplot state): they
render to files on any backend and leave a notebook's inline backend alone.
"""

from __future__ import annotations

import numpy as np

#: One fixed colour per algorithm name, in the order of ``jaxbco.algorithms.ALGORITHMS``, so a
#: method has the same colour in every figure.
ALGORITHM_ORDER = ("rectified-bco", "flaxman-bgd", "agarwal-2pt", "mahdavi-pd", "recoo",
                   "yuan-lamperski", "yu-neely", "flaxman-bgd-xonly", "agarwal-2pt-xonly")

#: Okabe-Ito colour-blind-safe palette.
OKABE_ITO = {"blue": "#0072B2", "orange": "#E69F00", "sky blue": "#56B4E9",
             "bluish green": "#009E73", "vermillion": "#D55E00", "reddish purple": "#CC79A7",
             "black": "#000000", "yellow": "#F0E442"}

#: The fixed colour of each algorithm of ``ALGORITHM_ORDER`` (Okabe-Ito; the two X-only
#: variants of the oracle baselines: Okabe-Ito yellow and Tol's wine).
ALGORITHM_COLORS = dict(zip(ALGORITHM_ORDER, ("#0072B2", "#E69F00", "#56B4E9", "#009E73",
                                              "#D55E00", "#CC79A7", "#000000", "#F0E442",
                                              "#882255")))

#: Colours for the grid points of one algorithm, in order (Okabe-Ito without black).
SERIES_COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442")

#: Theory reference lines (dashed grey, so no algorithm colour is taken).
REFERENCE_COLOR = "#666666"


def algorithm_color(name: str):
    """The colour of ``name``: fixed for the algorithms of ``ALGORITHM_ORDER`` (Okabe-Ito); other
    names get a palette colour chosen by a stable hash of the name."""
    if name in ALGORITHM_COLORS:
        return ALGORITHM_COLORS[name]
    return SERIES_COLORS[sum(map(ord, name)) % len(SERIES_COLORS)]


def band(ax, t, curves, color, label):
    """Plot the mean over seeds of ``curves`` (S, K) with its 2.5-97.5% quantile band; returns
    the mean."""
    curves = np.asarray(curves, dtype=np.float64)
    mean = np.nanmean(curves, axis=0)
    lo, hi = np.nanquantile(curves, [0.025, 0.975], axis=0)
    ax.plot(t, mean, color=color, label=label, lw=1.6)
    ax.fill_between(t, lo, hi, color=color, alpha=0.25, lw=0)
    return mean


def note_no_data(ax, what: str = "no finite values: every seed failed or none was run"):
    """Say on an empty panel why it is empty (a figure of a run whose curves are all
    non-finite, or of no seeds, is drawn, never a crash)."""
    ax.text(0.5, 0.5, what, transform=ax.transAxes, ha="center", va="center", fontsize=8,
            wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])
