"""What a fitted exponent says, in words a paper can print: a power law with its exponent, or
the finding that replaces it ("bounded", "changes sign", "≤ 0", "no power law",
"unresolved"), and means with confidence intervals to the digits the interval supports
(an interval only round-off wide: the value at its data's precision, "identical across seeds").

A log-log slope means something only for a positive curve that a power law fits: a fit to a
curve that crosses zero (an in-run slope of −3.25), or an exponent whose 95% interval spans
[−0.62, 4.81], is not a finding and is not printed as one.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

#: A power law must explain at least this share of the variance of log y (R²).
MIN_R2 = 0.9
#: |exponent| below this, with the interval inside ±BOUNDED, reads "bounded" (no growth).
BOUNDED = 0.15
#: An exponent across horizons is printed only when its 95% interval is at most ±RESOLVED.
RESOLVED = 0.1
#: The words an interval of zero or round-off width is printed with (``identical``).
IDENTICAL = "identical across seeds"
#: An interval at most this many ulps of its magnitude wide (half-width) is round-off.
ROUNDOFF_ULPS = 4
#: The data's precision where a table is not told it: float32's, the runs' default.
EPS32 = float(np.finfo(np.float32).eps)


@dataclasses.dataclass(frozen=True)
class Finding:
    """What a curve's growth is.

    Attributes:
        kind: "power law", "bounded", "decreasing", "changes sign", "0", "≤ 0", "0 on part"
            (zero on part of the range, positive elsewhere), "no power law", "unresolved" or
            "too few points".
        exponent: the fitted exponent (NaN where none was fitted).
        ci95: its 95% interval (NaN, NaN where none).
    """

    kind: str
    exponent: float = math.nan
    ci95: tuple = (math.nan, math.nan)

    def text(self, digits: int = 2) -> str:
        """The finding as a table cell, e.g. "0.53", "0.96 [0.95, 0.97]", "bounded".

        Args:
            digits: decimals of the exponent and its interval.

        Returns:
            The cell's text.
        """
        lo, hi = self.ci95
        iv = f" [{lo:.{digits}f}, {hi:.{digits}f}]" if np.isfinite(lo) and np.isfinite(hi) else ""
        if self.kind == "power law":
            return f"{self.exponent:.{digits}f}{iv}"
        if self.kind in ("bounded", "unresolved") and iv:
            return f"{self.kind}{iv}"
        return self.kind


def _sign(y) -> Finding | None:
    """The finding of a curve that is not positive throughout (None if it is)."""
    if np.all(y == 0):
        return Finding("0")
    if np.all(y <= 0):
        return Finding("≤ 0")
    if np.all(y >= 0) and np.any(y == 0):
        return Finding("0 on part")  # e.g. no violation until some round
    if np.any(y <= 0):
        return Finding("changes sign")
    return None


def _fit(x, y):
    """(slope, R²) of the least-squares line of y on x."""
    slope, icpt = np.polyfit(x, y, 1)
    ss = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum((y - (slope * x + icpt)) ** 2)) / ss if ss > 0 else 1.0
    return float(slope), r2


def in_run(t, y, lo: float, hi: float) -> Finding:
    """The growth of one mean curve y(t) within a run, over the rounds t in [lo, hi].

    A power law y ≈ C t^a where y > 0 on the range and the log-log line explains at least
    ``MIN_R2`` of log y's variance; |a| < ``BOUNDED``: "bounded"; a ≤ −BOUNDED: "decreasing".

    Args:
        t: (K,) rounds.
        y: (K,) the mean curve at those rounds.
        lo: first round of the fit range.
        hi: last round of the fit range.

    Returns:
        The ``Finding`` (no interval: one curve).

    Example:
        >>> import numpy as np
        >>> t = np.arange(1.0, 101.0)
        >>> in_run(t, 3 * t**0.5, 10, 100).text()
        '0.50'
        >>> in_run(t, np.sin(t / 10), 10, 100).text()
        'changes sign'
    """
    t, y = np.asarray(t, np.float64), np.asarray(y, np.float64)
    keep = (t >= lo) & (t <= hi) & np.isfinite(y)
    if keep.sum() < 3:
        return Finding("too few points")
    t, y = t[keep], y[keep]
    sign = _sign(y)
    if sign is not None:
        return sign
    a, r2 = _fit(np.log(t), np.log(y))
    if abs(a) < BOUNDED:
        return Finding("bounded", a)
    if a <= -BOUNDED:
        return Finding("decreasing", a)
    if r2 < MIN_R2:
        return Finding("no power law", a)
    return Finding("power law", a)


def across_horizons(fit: dict) -> Finding:
    """The finding of an exponent across horizons (``fits.exponent_across_horizons``'s dict).

    "≤ 0" or "changes sign" where a mean is not positive; "bounded" where the 95% interval
    lies inside ±``BOUNDED``; "unresolved" where it is wider than ±``RESOLVED`` (more seeds
    would tell); "no power law" where log mean against log T is not a line (R² below
    ``MIN_R2``); else the exponent with its interval.

    Args:
        fit: {"exponent", "ci95", "means"} and optionally "horizons" (for the R² check).

    Returns:
        The ``Finding``.

    Example:
        >>> across_horizons({"exponent": 0.96, "ci95": [0.95, 0.97], "means": [1, 2]}).text()
        '0.96 [0.95, 0.97]'
        >>> across_horizons({"exponent": 0.91, "ci95": [-0.62, 4.81], "means": [1, 2]}).kind
        'unresolved'
    """
    means = np.asarray(fit["means"], np.float64)
    sign = _sign(means)
    if sign is not None:
        return sign
    a = float(fit["exponent"])
    lo, hi = (float(v) for v in fit["ci95"])
    ci = (lo, hi)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return Finding("unresolved", a)
    if -BOUNDED < lo and hi < BOUNDED:
        return Finding("bounded", a, ci)
    if (hi - lo) / 2 > RESOLVED:
        return Finding("unresolved", a, ci)
    if "horizons" in fit and len(means) > 2:
        _, r2 = _fit(np.log(np.asarray(fit["horizons"], np.float64)), np.log(means))
        if r2 < MIN_R2:
            return Finding("no power law", a, ci)
    return Finding("power law", a, ci)


def _decimal_place(half: float) -> int:
    """The power of ten of an interval's last significant digit: two significant digits when
    the half-width's leading digit is 1 or 2, else one."""
    e = math.floor(math.log10(half))
    return e - 1 if half / 10.0**e < 3 else e


def identical(mean: float, lo: float, hi: float, eps: float = EPS32) -> bool:
    """Whether an interval is only round-off wide: its half-width (the mean's distance to the
    farther end; the mean may sit a rounding outside an interval of identical values) at most
    ``ROUNDOFF_ULPS`` eps of the largest magnitude, eps the data's precision: every seed gave
    the same value, as far as the data can tell.

    Example:
        >>> identical(0.00173163837398455553, 0.00173163837398455532, 0.00173163837398455532)
        True
        >>> identical(0.0017, 0.0016, 0.0018)
        False
    """
    if not (np.isfinite(mean) and np.isfinite(lo) and np.isfinite(hi)):
        return False
    big = max(abs(mean), abs(lo), abs(hi))
    return max(hi - mean, mean - lo, 0.0) <= ROUNDOFF_ULPS * eps * big


def digits_of(eps: float) -> int:
    """The decimal digits a precision resolves (6 for float32, 15 for float64: FLT_DIG,
    DBL_DIG)."""
    return max(1, math.floor(-math.log10(2.0 * eps)))


def estimate(mean: float, lo: float = math.nan, hi: float = math.nan, eps: float = EPS32) -> tuple:
    """A mean and its interval rounded to the digits the interval supports.

    Args:
        mean: the estimate.
        lo: the interval's lower end (NaN: no interval; 4 significant digits).
        hi: the interval's upper end.
        eps: the data's precision (float32's by default): an interval only round-off wide
            (``identical``) gives the mean to the digits it resolves (``digits_of``).

    Returns:
        (mean, lo, hi) as strings; lo and hi are "" without an interval, and all three the
        same where the interval is round-off wide (the tables add ``IDENTICAL``). Scientific
        notation for magnitudes below 1e-3 or from 1e5 on.

    Example:
        >>> estimate(-0.14968, -0.15121, -0.14823)
        ('-0.1497', '-0.1512', '-0.1482')
        >>> estimate(0.035461, 0.028214, 0.043108)
        ('0.035', '0.028', '0.043')
        >>> estimate(0.83365477743041572, 0.83365477743041549, 0.83365477743041549)
        ('0.833655', '0.833655', '0.833655')
    """
    if not np.isfinite(mean):
        return "nan", "", ""
    has_iv = np.isfinite(lo) and np.isfinite(hi)
    if not has_iv:
        return ("0" if mean == 0 else f"{mean:.4g}"), "", ""
    if identical(mean, lo, hi, eps):
        text = "0" if mean == 0 else f"{mean:.{digits_of(eps)}g}"
        return text, text, text
    half = max(hi - mean, mean - lo)
    place = _decimal_place(half)
    big = max(abs(mean), abs(lo), abs(hi))
    if 1e-3 <= big < 1e5:
        d = max(0, -place)
        return f"{mean:.{d}f}", f"{lo:.{d}f}", f"{hi:.{d}f}"
    lead = math.floor(math.log10(big))
    d = max(0, lead - place)
    return f"{mean:.{d}e}", f"{lo:.{d}e}", f"{hi:.{d}e}"
