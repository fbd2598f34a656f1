"""What the panels of a figure draw (``panels.build``): one line per series (``Series``),
reference curves (``Reference``) and slope guides (``Guide``) of the theory, and the line
styles that tell them apart (``LINESTYLES``, ``REF_STYLES``, ``styles``)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from jaxbco.plotting.style import WIDE_COLORS

LINESTYLES = ("-", (0, (5, 1.5)), (0, (1, 1.2)), (0, (5, 1.5, 1, 1.5)))
REF_STYLES = (("#555555", (0, (6, 2))), ("#999999", (0, (2, 1.5))), ("#555555", (0, (1, 1))))


class Series(NamedTuple):
    """One line: label, colour, line style, per-metric (S, K) curves over seeds (failed seeds
    left out), its marker and its small-multiples column (None: every column)."""

    label: str
    color: str
    ls: object
    curves: dict
    marker: str | None = None
    group: str | None = None


class Reference(NamedTuple):
    """A reference curve in one panel: (K,) values, its label, (colour, dash) or None, and
    whether the panel's y range takes it in (``fit``; else one above the data is only named in
    the caption)."""

    metric: str
    values: np.ndarray
    label: str
    style: tuple | None = None
    fit: bool = False


class Guide(NamedTuple):
    """A short slope guide ∝ t^exponent (``exponent`` "log": ∝ log t) drawn over the last
    decade of a panel at the ``anchor`` series' last mean (None: the first series), in line
    style ``ls``."""

    metric: str
    exponent: float | str
    label: str
    anchor: str | None = None
    ls: object = "-"


def styles(n: int) -> list:
    """(colour, line style) for n series told apart: up to 12 distinct colours, the line
    style cycling alongside so neighbours differ in both (``MARKERS`` give the third cue).

    Args:
        n: the number of series.

    Returns:
        list: n (colour, line style) pairs, all distinct.

    Example:
        >>> len(set(styles(12)))
        12
    """
    return [(WIDE_COLORS[i % len(WIDE_COLORS)], LINESTYLES[i % 3]) for i in range(n)]
