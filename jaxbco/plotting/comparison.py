"""The comparison figure (``jaxbco.compare``): several algorithms' regret, hard violation and,
for portfolios, wealth against t, in the one style of ``jaxbco.plotting.panels``."""

from __future__ import annotations

import os

import numpy as np

from jaxbco.algorithms import display_name, registry
from jaxbco.plotting import panels
from jaxbco.plotting.dataset import METRIC_LABELS, SHORT_LABELS
from jaxbco.plotting.marks import exponent_text
from jaxbco.plotting.style import MARKERS, assign, variant

#: Small-multiples columns: the algorithm kinds ``style.variant`` tells apart.
GROUPS = ("bandit baselines (learn g)", "oracle baselines (g known in advance)", "X-only variants")
WEALTH_STYLES = (
    ("#000000", (0, (6, 2))),
    ("#333333", (0, (1.2, 1.2))),
    ("#777777", (0, (6, 1.5, 1.5, 1.5))),
)


def _guides(bounds, ref):
    """Slope guides of the theorem in ``bounds`` (``jaxbco.compare.theory.bound_curves``)."""
    thm = str(bounds.get("label", "")).split(" bound")[0] or "theory"
    out = []
    for metric, key, order in (
        ("regret", "regret_exponent", "regret_order"),
        ("hard_violation", "violation_exponent", "violation_order"),
    ):
        if key not in bounds:
            continue
        p = bounds[key]
        if str(bounds.get(order, "")).startswith("log"):
            p = "log"
        label = (
            r"$\propto\sqrt{t \log t}$"
            if "log" in str(bounds.get(order, "")) and p != "log"
            else exponent_text(p)
        )
        # Thm. 2 / 4 bound the violation; their regret is Thm. 1's / 3's (theory.py)
        name = {"Thm. 2": "Thm. 1", "Thm. 4": "Thm. 3"}.get(thm, thm) if metric == "regret" else thm
        out.append(panels.Guide(metric, p, f"{label} ({name})", anchor=ref))
    return out


def comparison_figure(
    rounds,
    curves: dict,
    *,
    bounds: dict | None = None,
    wealth: dict | None = None,
    title: str | None = None,
    wealth_references: dict | None = None,
    band: str | None = "ci",
):
    """Regret Rₜ = ∑ₛ≤ₜ fₛ(xₛ) − fₛ(x*), hard violation Vₜ = ∑ₛ≤ₜ [gₛ(xₛ)]₊ and, for portfolios,
    wealth W_t = ∏ₛ≤ₜ ⟨rₛ, xₛ⟩ against t for several algorithms: the mean over seeds with its
    95% confidence band, one colour, line style and marker per algorithm (``style.assign``;
    oracle baselines dashed, X-only variants dotted).  With more than ``panels.MAX_BANDS``
    algorithms the figure is small multiples: the paper's algorithm (``registry.reference()``)
    against the bandit baselines, the oracle baselines (g known in advance) and the X-only
    variants in separate columns, y shared along each row.  The applicable theorem enters as
    short slope guides at the paper's algorithm's last value, its bound curves where they meet
    the panel; a bound above a panel is named in the caption.

    Args:
        rounds: (K,) checkpoint rounds.
        curves: name -> {"regret": (S, K), "hard_violation": (S, K)} (extra keys ignored);
            seeds with a non-finite value are left out.
        bounds: optional ``jaxbco.compare.theory.bound_curves`` output: "regret" and
            "hard_violation" (K,) bound curves, "label", and "regret_exponent",
            "violation_exponent", "regret_order", "violation_order" for the slope guides.
        wealth: optional name -> (S, K) wealth curves: a third row of panels; with wealth
            (a portfolio) every panel has a linear day axis, where violation accrues.
        title: the figure's one-line title.
        wealth_references: optional label -> (K,) wealth curve or a number (a horizontal line)
            of reference strategies (uniform CRP, best constant-rebalanced portfolio).
        band: "ci" (95% t-interval of the mean), "quantiles" (10-90% of seeds) or None.

    Returns:
        Figure: the figure; ``panels.caption(fig)`` is its caption.

    Raises:
        ValueError: for an unknown ``band``.

    Example:
        >>> t = np.arange(1, 51)
        >>> c = {n: {"regret": np.sqrt(t) * (1 + k) * np.ones((4, 1)),
        ...          "hard_violation": np.zeros((4, 50))}
        ...      for k, n in enumerate(("rectified-bco", "flaxman-bgd"))}
        >>> fig = comparison_figure(t, c)
        >>> "panel left out" in panels.caption(fig)
        True
    """
    if band not in ("ci", "quantiles", None):
        raise ValueError(f"band must be 'ci', 'quantiles' or None, got {band!r}")
    metrics = ["regret", "hard_violation"] + (["wealth"] if wealth else [])
    ref = registry.reference().name
    kinds = {n: variant(n) for n in curves}
    names = sorted(curves, key=lambda n: (n != ref, kinds[n]))  # stable: each group together
    used = sorted({kinds[n] for n in names if n != ref})
    grouped = len(names) > panels.MAX_BANDS and len(used) > 1
    series, colours = [], assign(names)
    for i, name in enumerate(names):
        data = {m: np.asarray(curves[name][m], np.float64) for m in ("regret", "hard_violation")}
        if wealth:
            data["wealth"] = np.asarray(wealth[name], np.float64)
        ok = np.all([np.all(np.isfinite(v), axis=1) for v in data.values()], axis=0)
        colour, wrap = colours[name]
        ls = panels.LINESTYLES[kinds[name] if wrap == 0 else wrap % len(panels.LINESTYLES)]
        group = None if name == ref or not grouped else GROUPS[kinds[name]]
        series.append(
            panels.Series(
                display_name(name),
                colour,
                ls,
                {m: v[ok] for m, v in data.items()},
                MARKERS[i % len(MARKERS)],
                group,
            )
        )
    refs, guides = [], []
    if bounds is not None:
        label = bounds.get("label", "bound")
        refs = [
            panels.Reference(m, np.asarray(bounds[m], np.float64), label)
            for m in ("regret", "hard_violation")
            if m in bounds
        ]
        if ref in curves:
            guides = _guides(bounds, display_name(ref))
    t = np.asarray(rounds, np.float64)
    for k, (label, v) in enumerate((wealth_references or {}).items()):
        v = np.broadcast_to(np.asarray(v, np.float64), t.shape)
        refs.append(
            panels.Reference("wealth", v, label, WEALTH_STYLES[k % len(WEALTH_STYLES)], fit=True)
        )
    notes = []
    if grouped:
        notes.append(
            f"Columns: {display_name(ref)} (Algorithm 1, in every column) against each "
            f"group of baselines; y shared along a row."
        )
    labels = {m: METRIC_LABELS[m] for m in metrics}
    return panels.build(
        t,
        series,
        metrics,
        labels,
        refs=refs,
        guides=guides,
        title=title,
        band=band,
        xlinear=tuple(metrics) if wealth else (),  # portfolios: everything accrues by day
        short=SHORT_LABELS,
        notes=notes,
    )


def plot_comparison(
    rounds,
    curves: dict,
    path,
    *,
    bounds: dict | None = None,
    wealth: dict | None = None,
    title: str | None = None,
    wealth_references: dict | None = None,
    band: str | None = "ci",
    with_caption: bool = False,
):
    """Draw ``comparison_figure`` and save it as ``path`` (PNG, 300 dpi) and a vector PDF
    beside it.

    Args:
        rounds: (K,) checkpoint rounds.
        curves: name -> {"regret": (S, K), "hard_violation": (S, K)}.
        path: the PNG's path.
        bounds: ``jaxbco.compare.theory.bound_curves`` output, or None.
        wealth: name -> (S, K) wealth curves, or None.
        title: a one-line title.
        wealth_references: label -> (K,) wealth curve or number, or None.
        band: "ci", "quantiles" or None.
        with_caption: also return the caption (what the figure cannot say: merged series,
            bounds off a panel, panels left out, the band's meaning).

    Returns:
        ``path``, or (``path``, caption) with ``with_caption``.

    Raises:
        ValueError: for an unknown ``band``.

    Example:
        >>> import tempfile, os
        >>> t = np.arange(1, 51)
        >>> c = {n: {"regret": np.sqrt(t) * np.ones((4, 1)), "hard_violation": np.zeros((4, 50))}
        ...      for n in ("rectified-bco", "flaxman-bgd")}
        >>> p, text = plot_comparison(t, c, os.path.join(tempfile.mkdtemp(), "f.png"),
        ...                           with_caption=True)
        >>> "coincide" in text
        True
    """
    fig = comparison_figure(
        rounds,
        curves,
        bounds=bounds,
        wealth=wealth,
        title=title,
        wealth_references=wealth_references,
        band=band,
    )
    root, ext = os.path.splitext(os.fspath(path))
    panels.save(fig, root if ext.lower() == ".png" else os.fspath(path))
    return (path, panels.caption(fig)) if with_caption else path
