"""Shared look of the figures: one fixed colour per algorithm (Okabe-Ito, colour-blind safe),
series colours, the reference-line colour and the figures' matplotlib settings (the panels
themselves: ``panels``).  Figures are built with the object-oriented API (``Figure``, no pyplot state): they
render to files on any backend and leave a notebook's inline backend alone.
"""

from __future__ import annotations


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


#: Twelve colours told apart (Okabe-Ito without yellow, then Tol's muted), for the settings of a
#: grid drawn as separate series.
WIDE_COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
               "#882255", "#44AA99", "#999933", "#332288", "#AA4499")

#: Matplotlib settings of every figure (read at column width: all text >= 8 pt, embedded fonts).
PAPER_RC = {"font.size": 8, "axes.titlesize": 8.5, "axes.labelsize": 8, "xtick.labelsize": 8,
            "ytick.labelsize": 8, "legend.fontsize": 8, "figure.titlesize": 9,
            "axes.linewidth": 0.6, "lines.linewidth": 1.4, "pdf.fonttype": 42, "ps.fonttype": 42,
            "legend.frameon": False}
