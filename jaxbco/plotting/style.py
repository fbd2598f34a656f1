"""Shared look of the figures: each algorithm's preferred colour (Okabe-Ito, colour-blind safe;
``Record.colour`` in the registry) and ``assign``, which gives the series of one figure
distinct colours (a researcher's algorithm never takes a built-in's colour in the same figure);
series colours, the reference-line colour and the figures' matplotlib settings (the panels
themselves: ``panels``).  Figures are built with the object-oriented API (``Figure``, no pyplot state): they
render to files on any backend and leave a notebook's inline backend alone.
"""

from __future__ import annotations

from jaxbco.algorithms import registry

#: Okabe-Ito colour-blind-safe palette.
OKABE_ITO = {"blue": "#0072B2", "orange": "#E69F00", "sky blue": "#56B4E9",
             "bluish green": "#009E73", "vermillion": "#D55E00", "reddish purple": "#CC79A7",
             "black": "#000000", "yellow": "#F0E442"}

#: The registered algorithms' names and their preferred colours, in listing order (a snapshot of
#: ``jaxbco.algorithms.registry`` when this module is imported: ``Record.colour``).
ALGORITHM_ORDER = tuple(registry.names())
ALGORITHM_COLORS = {r.name: r.colour for r in registry.records() if r.colour is not None}

#: Colours for the grid points of one algorithm, in order (Okabe-Ito without black).
SERIES_COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442")

#: Theory reference lines (dashed grey, so no algorithm colour is taken).
REFERENCE_COLOR = "#666666"


def algorithm_color(name: str):
    """The preferred colour of ``name`` on its own (its registered ``Record.colour``, else a
    palette colour by a stable hash of the name).  Figures with several series use ``assign``,
    which never gives two series the same colour."""
    record = registry.get(name) if name in registry.ALGORITHMS else None
    if record is not None and record.colour is not None:
        return record.colour
    return SERIES_COLORS[sum(map(ord, name)) % len(SERIES_COLORS)]


#: Twelve colours told apart (Okabe-Ito without yellow, then Tol's muted), for the settings of a
#: grid drawn as separate series.
WIDE_COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
               "#882255", "#44AA99", "#999933", "#332288", "#AA4499")

#: Every colour ``assign`` hands out, in order: the twelve above, then Okabe-Ito yellow.
PALETTE = WIDE_COLORS + ("#F0E442",)


def assign(names) -> dict:
    """name -> (colour, round) for the series of ONE figure, no two with the same colour while
    the palette lasts: each algorithm keeps its registered colour unless an earlier series in
    the figure has it; the others take the first ``PALETTE`` colours no series has.  ``round``
    is 0, or k >= 1 for the k-th wrap of the palette past its 13 colours (the caller draws
    those with the k-th line style, so the (colour, line style) pairs stay distinct)."""
    names = list(dict.fromkeys(names))
    taken, out, rest = set(), {}, []
    for name in names:
        record = registry.get(name) if name in registry.ALGORITHMS else None
        colour = None if record is None else record.colour
        if colour is not None and colour not in taken:
            out[name] = (colour, 0)
            taken.add(colour)
        else:
            rest.append(name)
    free = [c for c in PALETTE if c not in taken]
    for i, name in enumerate(rest):
        if i < len(free):
            out[name] = (free[i], 0)
        else:
            j = i - len(free)
            out[name] = (PALETTE[j % len(PALETTE)], 1 + j // len(PALETTE))
    return {n: out[n] for n in names}


def variant(name: str) -> int:
    """0 (solid) for a method that learns g; 1 (dashed) for an oracle baseline (g known in
    advance); 2 (dotted) for an X-only variant (``Record.xonly``)."""
    if name not in registry.ALGORITHMS:
        return 0
    record = registry.get(name)
    return 1 if record.knows_constraint else 2 if record.xonly else 0


#: Matplotlib settings of every figure (read at column width: all text >= 8 pt, embedded fonts).
PAPER_RC = {"font.size": 8, "axes.titlesize": 8.5, "axes.labelsize": 8, "xtick.labelsize": 8,
            "ytick.labelsize": 8, "legend.fontsize": 8, "figure.titlesize": 9,
            "axes.linewidth": 0.6, "lines.linewidth": 1.4, "pdf.fonttype": 42, "ps.fonttype": 42,
            "legend.frameon": False}
