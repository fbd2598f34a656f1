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
OKABE_ITO = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "black": "#000000",
    "yellow": "#F0E442",
}

#: The registered algorithms' names and their preferred colours, in listing order (a snapshot of
#: ``jaxbco.algorithms.registry`` when this module is imported: ``Record.colour``).
ALGORITHM_ORDER = tuple(registry.names())
ALGORITHM_COLORS = {r.name: r.colour for r in registry.records() if r.colour is not None}

#: Colours for the grid points of one algorithm, in order (Okabe-Ito without black).
SERIES_COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442")

#: Theory reference lines (dashed grey, so no algorithm colour is taken).
REFERENCE_COLOR = "#666666"

#: Markers, one per series of a figure (drawn at a few log-spaced rounds).
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p", "d")


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
WIDE_COLORS = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#000000",
    "#882255",
    "#44AA99",
    "#999933",
    "#332288",
    "#AA4499",
)

#: Every colour ``assign`` hands out, in order: the twelve above, then Tol's dark brown, vibrant
#: red and magenta (never Okabe-Ito yellow: it barely shows on white).
PALETTE = WIDE_COLORS + ("#661100", "#CC3311", "#EE3377")

#: Colours a figure never draws a series in (yellow on white).
UNSEEN = frozenset({"#F0E442"})

#: Two colours closer than this (CIE76 distance in L*a*b*) are taken for one another.
MIN_DISTANCE = 34.0


def _lab(colour: str):
    """CIE L*a*b* (D65) of a '#RRGGBB' colour."""
    rgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92 for c in rgb]
    m = ((0.4124, 0.3576, 0.1805), (0.2126, 0.7152, 0.0722), (0.0193, 0.1192, 0.9505))
    xyz = [sum(a * b for a, b in zip(row, lin)) / w for row, w in zip(m, (0.95047, 1.0, 1.08883))]
    f = [v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116 for v in xyz]
    return (116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2]))


def distance(a: str, b: str) -> float:
    """CIE76 colour difference of two '#RRGGBB' colours (about 2: just noticeable)."""
    return sum((x - y) ** 2 for x, y in zip(_lab(a), _lab(b))) ** 0.5


def _clear(colour, taken) -> bool:
    return colour not in UNSEEN and all(distance(colour, c) >= MIN_DISTANCE for c in taken)


def assign(names) -> dict:
    """name -> (colour, round) for the series of ONE figure, every two told apart: each
    algorithm keeps its registered colour (``Record.colour``) unless it is yellow (``UNSEEN``:
    it barely shows on white) or closer than ``MIN_DISTANCE`` to an earlier series' colour;
    the others take the first ``PALETTE`` colours clear of every colour taken, then any free
    one.  ``round`` is 0, or k ≥ 1 for the k-th wrap of the palette (the caller draws those
    with the k-th line style, so the (colour, line style) pairs stay distinct).

    Args:
        names: the series' names (algorithm names or any other), in drawing order.

    Returns:
        dict: name -> (colour '#RRGGBB', round).

    Example:
        >>> assign(["rectified-bco", "recoo"])
        {'rectified-bco': ('#0072B2', 0), 'recoo': ('#332288', 0)}
    """
    return _assign(names, _clear)


def _assign(names, ok) -> dict:
    names = list(dict.fromkeys(names))
    taken, out, rest = [], {}, []
    for name in names:
        record = registry.get(name) if name in registry.ALGORITHMS else None
        colour = None if record is None else record.colour
        if colour is not None and ok(colour, taken):
            out[name] = (colour, 0)
            taken.append(colour)
        else:
            rest.append(name)
    spare = []
    for name in rest:
        pick = next((c for c in PALETTE if ok(c, taken)), None)
        if pick is None:
            spare.append(name)
            continue
        out[name] = (pick, 0)
        taken.append(pick)
    free = [c for c in PALETTE if c not in taken]
    for i, name in enumerate(spare):
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


#: The width every figure is drawn for (inches: a paper's text width); drawn no wider, so that
#: printed at that width no text is shrunk below its size (every text >= ``MIN_PT``).
PRINT_WIDTH = 5.5
#: The smallest text size in a figure (points), at ``PRINT_WIDTH``.
MIN_PT = 8.0

#: Matplotlib settings of every figure (read at column width: all text >= 8 pt, embedded fonts).
PAPER_RC = {
    "font.size": 8,
    "axes.titlesize": 8.5,
    "axes.labelsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "figure.titlesize": 9,
    "axes.linewidth": 0.6,
    "lines.linewidth": 1.4,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "legend.frameon": False,
}
