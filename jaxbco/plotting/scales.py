"""What a panel draws of one series (the mean over seeds and its band) and how its y axis is
scaled (``scale_y``), for every figure of ``jaxbco.plotting``."""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
from matplotlib.ticker import FixedLocator, NullLocator

#: The bands a figure can shade: a 95% t-interval of the mean over seeds (the default), the
#: 10-90% range of the seeds, or none.
BAND_KINDS = ("ci", "quantiles", None)
BAND_LABELS = {"ci": "shaded: 95% CI of the mean", "quantiles": "shaded: 10-90% of seeds"}
BAND_QUANTILES = (0.1, 0.9)


def t_quantile(p: float, dof: int) -> float:
    """The p-quantile of Student's t with ``dof`` degrees of freedom: for dof ≤ 30 by bisection
    on the cdf (the density integrated by Simpson's rule), above by Hill's (1970) expansion
    about the normal quantile (relative error below 1e-6 there).

    Args:
        p: probability in (0.5, 1).
        dof: degrees of freedom, ≥ 1.

    Returns:
        float: t with P(T ≤ t) = p.

    Example:
        >>> round(t_quantile(0.975, 10), 3)
        2.228
    """
    if dof <= 30:  # bisection on the cdf, integrated (Simpson) from the density
        return _t_quantile_small(p, int(dof))
    z = _normal_quantile(p)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / dof + g2 / dof**2 + g3 / dof**3 + g4 / dof**4


@functools.lru_cache(maxsize=256)
def _t_quantile_small(p: float, dof: int) -> float:
    if dof == 1:
        return math.tan(math.pi * (p - 0.5))
    c = math.exp(math.lgamma((dof + 1) / 2) - math.lgamma(dof / 2)) / math.sqrt(dof * math.pi)

    def cdf(x):
        u = np.linspace(0.0, x, 2001)
        f = c * (1 + u * u / dof) ** (-(dof + 1) / 2)
        return 0.5 + (u[1] - u[0]) / 3 * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())

    lo, hi = 0.0, 100.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return 0.5 * (lo + hi)


def _normal_quantile(p: float) -> float:
    lo, hi = -10.0, 10.0
    for _ in range(80):  # bisection on the normal cdf: exact to float precision
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if 0.5 * math.erfc(-mid / math.sqrt(2)) < p else (lo, mid)
    return 0.5 * (lo + hi)


def summary(curves, band: str | None = "ci") -> tuple:
    """(mean, low, high) over the seeds of an (S, K) array: for ``band`` "ci" mean ± t₀.₉₇₅,S−1 ·
    s/√S (the 95% t-interval of the mean, s the seeds' standard deviation), for "quantiles"
    the 10% and 90% quantiles of the seeds, for None the mean twice; NaN where no seed is
    finite (NaN seeds left out per round).  The interval of a quantity that is ≥ 0 for every
    seed is clipped at 0 (likewise ≤ 0), so it never changes the axis' sign.

    Args:
        curves: (S, K) values, seeds first.
        band: "ci", "quantiles" or None.

    Returns:
        tuple: three (K,) float64 arrays.

    Raises:
        ValueError: for another ``band``.

    Example:
        >>> mean, lo, hi = summary(np.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> mean.tolist(), bool(lo[0] < 2.0 < hi[0])
        ([2.0, 3.0], True)
    """
    if band not in BAND_KINDS:
        raise ValueError(f"band must be one of {BAND_KINDS}, got {band!r}")
    v = np.asarray(curves, np.float64)
    nan = np.full(v.shape[1], np.nan)
    if v.shape[0] == 0:
        return nan, nan, nan
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(v, axis=0)
        if band is None:
            return mean, mean, mean
        if band == "quantiles":
            lo, hi = np.nanquantile(v, BAND_QUANTILES, axis=0)
            return mean, lo, hi
        n = np.sum(np.isfinite(v), axis=0)
        sd = np.nanstd(v, axis=0, ddof=1)
        t = np.array([t_quantile(0.975, int(k) - 1) if k > 1 else np.nan for k in n])
        half = np.where(n > 1, t * sd / np.sqrt(np.maximum(n, 1)), 0.0)
    lo, hi = mean - half, mean + half
    if np.nanmin(v, initial=np.inf) >= 0:  # a nonnegative quantity: so is its interval
        lo = np.maximum(lo, 0.0)
    if np.nanmax(v, initial=-np.inf) <= 0:
        hi = np.minimum(hi, 0.0)
    return mean, lo, hi


def scale_y(ax, arrays) -> str:
    """Scale ``ax``'s y axis to the drawn values: linear when they lie within a decade (or are
    all zero) or change sign, log where they are ≥ 0 and their positive values span more (zeros
    then sit at the bottom edge), symmetric-log where they are ≤ 0 over decades (mirrored, ticks
    at 0 and whole decades, no minor ticks: nothing crowds 0).  Limits come from the data,
    never a clamp floor.

    Why linear where the sign changes: on a symmetric-log axis a curve that crosses its linear
    range (regret going from -1 to +30, or +-0.05 of noise about 0 with a linear range of 1e-3)
    is drawn as a cliff of several decades, which reads as a jump the run never made; a reader
    takes a linear axis in at a glance, a crossing is drawn where and as steeply as it happens,
    and what the linear axis compresses (early rounds of a curve that grows by decades) is
    the part the log round axis already shows small.

    Args:
        ax: a matplotlib Axes.
        arrays: the values drawn in it (any shapes; NaN and inf left out).

    Returns:
        str: "linear", "log" or "symlog".

    Example:
        >>> from matplotlib.figure import Figure
        >>> ax = Figure().subplots()
        >>> scale_y(ax, [np.array([-5.0, 0.0, 300.0])])
        'linear'
        >>> scale_y(ax, [np.array([-1.0, -10.0, -3e3])])
        'symlog'
    """
    v = np.concatenate([np.ravel(np.asarray(a, np.float64)) for a in arrays] or [np.zeros(0)])
    v = v[np.isfinite(v)]
    if v.size == 0 or not np.any(v):
        ax.set_ylim(-1, 1)
        return "linear"
    top, bottom = float(v.max()), float(v.min())
    pos = v[v > 0]
    if bottom >= 0 or top <= 0:  # one sign
        mags = np.abs(v[v != 0])
        small, big = float(mags.min()), float(mags.max())
        zero = bottom == 0 or top == 0
        if big / small <= (100 if zero else 10):
            pad = 0.06 * (top - bottom) or 0.06 * big
            ax.set_ylim(bottom - pad, top + pad)
            return "linear"
        if top <= 0:  # all ≤ 0 over decades: mirror on symlog
            return _symlog(ax, small, bottom, top)
        ax.set_yscale("log", nonpositive="clip")
        ax.set_ylim(float(pos.min()) / 1.6, top * 1.6)
        return "log"
    pad = 0.06 * (top - bottom)  # the sign changes: linear (the docstring says why)
    ax.set_ylim(bottom - pad, top + pad)
    return "linear"


def _symlog(ax, lin: float, bottom: float, top: float) -> str:
    lin = 10.0 ** math.floor(math.log10(lin))
    ax.set_yscale("symlog", linthresh=lin, linscale=0.6)
    low = bottom * 1.6 if bottom < 0 else 0.0
    high = top * 1.6 if top > 0 else 0.0
    ax.set_ylim(low, high)
    ax.yaxis.set_major_locator(FixedLocator(_symlog_ticks(lin, low, high)))
    ax.yaxis.set_minor_locator(NullLocator())
    return "symlog"


def _symlog_ticks(lin: float, low: float, high: float) -> list:
    """0 and whole decades beyond the linear range ±lin (±lin itself left out: its labels would
    crowd 0's), at most three a side."""
    first = int(round(math.log10(lin))) + 1
    ticks = [0.0] if low <= 0.0 <= high else []
    for sign, end in ((1.0, high), (-1.0, -low)):
        if end <= 10 * lin:
            continue
        decades = list(range(first, int(math.floor(math.log10(end))) + 1))
        step = max(1, -(-len(decades) // 3))
        ticks += [sign * 10.0**k for k in decades[::-1][::step]]
    return sorted(ticks)
