"""The parts of a panel that ``panels.build`` composes: coinciding series merged into one line
(``merge``), marker positions (``marks``), slope guides (``guide``), the legend below the
panels (``legend``) and mathtext turned into caption text (``plain``)."""

from __future__ import annotations

import re

import numpy as np

from jaxbco.plotting.scales import summary
from jaxbco.plotting.style import MIN_PT, REFERENCE_COLOR

COINCIDE = 1e-3  # mean curves this close in the panel's own scale are one line
FLOOR = 1e-4  # below this share of a panel's largest |value| a log scale is linear (symlog)


def _apart(a, b, span: float, top: float) -> float:
    """How far apart two mean curves are, as a share of COINCIDE (<= 1: one line): the larger of
    their linear distance over the panel's linear ``span`` and, where either is at least
    ``FLOOR`` ``top`` (the panel's largest |value|), their distance in decades over the
    panel's decades (at least one), the way a log or symmetric-log axis draws them; a zero
    against a nonzero value above the floor, or opposite signs there, is apart."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    both = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(np.isfinite(a), np.isfinite(b)):
        return np.inf
    a, b = a[both], b[both]
    if a.size == 0:
        return 0.0
    lin = float(np.max(np.abs(a - b))) / (COINCIDE * span + 1e-300)
    if not top > 0:
        return lin
    floor = FLOOR * top
    big = (np.abs(a) >= floor) | (np.abs(b) >= floor)
    if not np.any(big):
        return lin
    a, b = a[big], b[big]
    if np.any(np.sign(a) != np.sign(b)):
        return np.inf
    decades = max(np.log10(top / floor), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero against a value: apart
        logs = np.abs(np.log10(np.abs(a)) - np.log10(np.abs(b)))
    logs = np.where(np.isnan(logs), np.inf, logs)
    return max(lin, float(np.max(logs)) / (COINCIDE * decades))


def merge(series, metrics, notes):
    """``series`` (``panels.Series``) whose mean curves coincide in every metric drawn once,
    labelled "a = b": within ``COINCIDE`` of each panel's range on a linear axis and of its
    decades on a log one (``_apart``); the caption names the members and their spread."""
    means = [{m: summary(s.curves[m], None)[0] for m in metrics} for s in series]
    span, top = {}, {}
    for m in metrics:
        v = np.concatenate([mu[m] for mu in means] or [np.zeros(0)])
        v = v[np.isfinite(v)]
        span[m] = float(v.max() - v.min()) if v.size else 0.0
        top[m] = float(np.max(np.abs(v))) if v.size else 0.0
    apart = lambda i, j: max(
        (_apart(means[i][m], means[j][m], span[m], top[m]) for m in metrics), default=0.0
    )
    out, used = [], set()
    for i, s in enumerate(series):
        if i in used:
            continue
        twins = [j for j in range(i + 1, len(series)) if j not in used and apart(i, j) <= 1.0]
        used.update(twins)
        if twins:
            names = [s.label] + [series[j].label for j in twins]
            spread = max(apart(i, j) for j in twins) * COINCIDE
            notes.append(
                f"{' and '.join(names)} coincide (mean curves within {spread:.1g} of each "
                f"panel's range, in decades on a log axis; merged below {COINCIDE:g}): one "
                f"line, labelled {' = '.join(names)}."
            )
            s = s._replace(label=" = ".join(names))
        out.append(s)
    return out


def plain(label: str) -> str:
    """A mathtext label as plain text for a caption: $\\propto t^{1/2}$ -> ∝ t^(1/2).

    Args:
        label: text with $...$ mathtext.

    Returns:
        str: the same in Unicode, without $ or backslashes.

    Example:
        >>> plain(r"$\\propto \\sqrt{t \\log t}$ (Thm. 4)")
        '∝ √(t log t) (Thm. 4)'
    """
    out = label.replace("$", "").replace(r"\propto", "∝").replace(r"\log", "log")
    out = re.sub(r"\\sqrt\{([^}]*)\}", r"√(\1)", out)
    out = re.sub(r"\^\{([^}]*)\}", r"^(\1)", out)
    return re.sub(r"\s+", " ", out.replace("\\", "")).replace("∝ ", "∝ ").strip()


def marks(t, i, n, log=True, count=5):
    """Indices of ``count`` marker positions, spread in (log) t and shifted per series i."""
    x = np.log(t) if log else np.asarray(t, np.float64)
    pos = x[0] + (x[-1] - x[0]) * (np.arange(count) + (i + 0.5) / max(n, 1)) / count
    return sorted({int(np.argmin(np.abs(x - p))) for p in pos})


def guide(ax, t, g, mean, log_x, k=0):
    """Draw the slope guide ``g`` (``panels.Guide``) over the last decade of rounds (the last
    30% on a linear axis), starting 1.6 times above the anchor's last positive mean, labelled
    over its right end (the k-th guide of a panel 9 pt higher; the panel grows upwards where the
    label would leave it); False when the anchor has no positive mean."""
    ok = np.isfinite(mean) & (mean > 0)
    if not ok.any() or t[-1] <= t[0]:
        return False
    end = np.flatnonzero(ok)[-1]
    t1 = t[end]
    t0 = max(t[0], t1 / 10) if log_x else t1 - 0.3 * (t1 - t[0])
    tt = np.geomspace(t0, t1, 20) if t0 > 0 else np.linspace(t0, t1, 20)
    shape = np.log1p(tt) / np.log1p(t1) if g.exponent == "log" else (tt / t1) ** float(g.exponent)
    y = 1.6 * mean[end] * shape
    ax.plot(tt, y, color=REFERENCE_COLOR, lw=1.6, ls=g.ls, solid_capstyle="butt", zorder=4)
    at = -1  # the label over the segment, ending where it ends (inside the panel)
    room = (16 + 9 * k) * ax.figure.dpi / 72  # the label's height above the segment, pixels
    for _ in range(4):  # grow the panel upwards until the label fits inside it
        top = ax.transAxes.transform((0, 1))[1]
        need = ax.transData.transform((tt[at], y[at]))[1] + room
        if need <= top:
            break
        ax.set_ylim(top=ax.transData.inverted().transform((0, need + 0.25 * (need - top)))[1])
    ax.annotate(
        g.label,
        (tt[at], y[at]),
        xytext=(0, 3 + 9 * k),
        textcoords="offset points",
        ha="right",
        va="bottom",
        fontsize=MIN_PT,
        color="#333333",
        zorder=5,
        annotation_clip=True,
        bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.75),
    )
    return True


def _wrap(label: str, width: int = 34) -> str:
    """A long legend label on two lines, broken at " = " (merged series) or a space."""
    if len(label) <= width or "$" in label:
        return label
    cut = label.rfind(" = ", 0, width + 2)
    cut = cut if cut > 0 else label.rfind(" ", 0, width)
    return label if cut <= 0 else label[:cut] + "\n" + label[cut:].lstrip()


def legend(fig, entries, width, height):
    """The legend below the panels of a figure ``width`` inches wide whose panels take
    ``height`` inches, in the most columns whose rendered width fits the figure (entries:
    (label, handle) pairs); the figure grows by the legend's rendered height."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not entries:
        return
    entries = [(_wrap(lab), h) for lab, h in entries]
    renderer = FigureCanvasAgg(fig).get_renderer()
    handles, labels = [h for _, h in entries], [lab for lab, _ in entries]
    for cols in range(min(len(entries), 6), 0, -1):
        lg = fig.legend(
            handles,
            labels,
            loc="outside lower center",
            ncols=cols,
            handlelength=2.6,
            columnspacing=1.2,
            borderaxespad=0.2,
        )
        box = lg.get_window_extent(renderer)
        if box.width / fig.dpi <= width - 0.1 or cols == 1:
            break
        lg.remove()
    fig.set_figheight(height + box.height / fig.dpi + 0.08)


def exponent_text(p) -> str:
    """A slope's exponent as mathtext: 1/2, 3/4, 2/3 as fractions, log as log t.

    Args:
        p: the exponent (a float), or "log".

    Returns:
        str: e.g. "$\\propto t^{1/2}$".

    Example:
        >>> exponent_text(0.75)
        '$\\\\propto t^{3/4}$'
    """
    if p == "log":
        return r"$\propto \log t$"
    p = float(p)
    if p == 0:
        return r"$O(1)$"
    for den in (2, 3, 4, 5, 6, 8):
        num = round(p * den)
        if abs(num / den - p) < 1e-9:
            frac = f"{num}/{den}" if num % den else f"{num // den}"
            return rf"$\propto t^{{{frac}}}$"
    return rf"$\propto t^{{{p:.3g}}}$"
