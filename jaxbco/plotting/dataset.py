"""The figure of a results Dataset (``jaxbco.results``): ``plot_dataset``, in the one style of
``jaxbco.plotting.panels``."""

from __future__ import annotations

import os

import numpy as np

from jaxbco import problems
from jaxbco.algorithms import display_name, registry
from jaxbco.plotting import panels
from jaxbco.plotting.marks import exponent_text
from jaxbco.plotting.style import MARKERS, assign, variant
from jaxbco.results import algorithms_of, config_of

#: Panel title and y-axis label (the quantity's formula) of each curve.
METRIC_LABELS = {
    "regret": ("regret", r"$R_t = \sum_{s\leq t} f_s(x_s) - f_s(x^*)$"),
    "hard_violation": ("hard violation", r"$V_t = \sum_{s\leq t}\,[g_s(x_s)]_+$"),
    "soft_violation": ("soft violation", r"$\sum_{s\leq t}\, g_s(x_s)$"),
    "lam": ("penalty", r"$\lambda_t$"),
    "loss": ("loss", r"$f_t(x_t)$"),
    "wealth": ("wealth", r"$W_t = \prod_{s\leq t}\,\langle r_s, x_s\rangle$"),
}

#: A short y label of each curve (panels after the first in a row of small multiples).
SHORT_LABELS = {
    "regret": "$R_t$",
    "hard_violation": "$V_t$",
    "soft_violation": r"$\sum g_s(x_s)$",
    "lam": r"$\lambda_t$",
    "loss": "$f_t(x_t)$",
    "wealth": "$W_t$",
}

#: The panels a command draws when the dataset does not say (``figure_metrics`` attribute).
DEFAULT_METRICS = ("regret", "hard_violation")


def _fmt_value(v) -> str:
    v = np.asarray(v).item()
    return f"{v:g}" if isinstance(v, float) else str(v)


def _series(ds, metrics):
    """One entry per (algorithm, grid point): label parts, coords and (S, K) curves."""
    lead = [d for d in ds["failed"].dims if d != "seed"]
    shape = tuple(ds.sizes[d] for d in lead)
    grid = [d for d in lead if d != "algorithm"]
    # coordinates that vary between grid points name them in the legend
    varying = []
    for name, coord in ds.coords.items():
        if name in ds.dims and name not in grid:
            continue
        if name == "setting" or name in ("seed", "round") or coord.ndim == 0:
            continue
        if any(d in grid for d in coord.dims) and coord.size > 1:
            vals = np.asarray(coord.values)
            if "algorithm" in coord.dims:
                vals = np.moveaxis(vals, coord.dims.index("algorithm"), 0)
                if any(
                    np.unique(v[np.isfinite(v)] if v.dtype.kind == "f" else v).size > 1
                    for v in vals
                ):
                    varying.append(name)
            elif np.unique(vals).size > 1:
                varying.append(name)
    algorithms = algorithms_of(ds)
    out = []
    for idx in np.ndindex(*shape):
        point = ds.isel(dict(zip(lead, idx)))
        alg = str(point["algorithm"].values) if "algorithm" in lead else algorithms[0]
        parts = []
        for name in varying:
            v = point[name].values
            if v.dtype.kind == "f" and not np.isfinite(v):
                continue
            parts.append(f"{name}={_fmt_value(v)}")
        grid_pos = tuple(i for d, i in zip(lead, idx) if d != "algorithm")
        curves = {
            m: np.asarray(point[m].transpose("seed", "round").values, np.float64) for m in metrics
        }
        coords = {n: point[n].values.item() for n in point.coords if point[n].ndim == 0}
        out.append(
            dict(
                algorithm=alg,
                grid=", ".join(parts),
                grid_pos=grid_pos,
                curves=curves,
                failed=np.asarray(point["failed"].values, bool),
                coords=coords,
            )
        )
    return out


def theory_of(ds, constraint: str | None = None, strongly_convex: bool | None = None) -> tuple:
    """(constraint, strongly convex) of the problem behind ``ds``: "fixed", "varying" or None
    (unknown), from the arguments, else the dataset's config (its ``fixed_g`` and
    ``strongly_convex`` entries or its ``schedule``, else the named problem, built again)."""
    cfg = config_of(ds)
    if strongly_convex is None:
        strongly_convex = bool(cfg.get("strongly_convex") or cfg.get("schedule") == "Thm. 3")
    if constraint is None and "fixed_g" in cfg:
        constraint = "fixed" if cfg["fixed_g"] else "varying"
    if constraint is None and isinstance(cfg.get("problem"), str):
        try:
            prob = problems.make(cfg["problem"], cfg.get("dim"), cfg.get("horizon"))
            constraint = "fixed" if prob.constraint_data.constant else "varying"
        except Exception:  # noqa: BLE001  (a problem this process cannot build: slope unknown)
            constraint = None
    return constraint, strongly_convex


def _default_guides(ds, metrics, series, constraint, strongly_convex) -> list:
    """Slope guides of the theorem that applies to the paper's algorithm's series
    (``registry.reference()``), one per c and metric, anchored at that series' curve, the
    same dash for the same c in every panel: regret t^max(c, 1-c) (Thm. 1; log t when strongly
    convex, Thm. 3); hard violation O(1) for a fixed constraint (Thm. 1 / 3), t^(1-c/2) for a
    time-varying one (Thm. 2; sqrt(t log t) strongly convex, Thm. 4), none when unknown."""

    ref = registry.reference().name
    cs = sorted(
        {
            round(float(s["coords"]["c"]), 6)
            for s in series
            if s["algorithm"] == ref and np.isfinite(s["coords"].get("c", np.nan))
        }
    )
    out = []
    for k, c in enumerate(cs):
        anchor = next(
            s["label"]
            for s in series
            if s["algorithm"] == ref and round(float(s["coords"]["c"]), 6) == c
        )
        dash = panels.LINESTYLES[k % len(panels.LINESTYLES)]
        tag = f", c = {c:g}" if len(cs) > 1 else ""
        regret = ("log", "Thm. 3") if strongly_convex else (max(c, 1 - c), "Thm. 1")
        viol = {
            ("fixed", False): (0.0, "Thm. 1"),
            ("fixed", True): (0.0, "Thm. 3"),
            ("varying", False): (1 - c / 2, "Thm. 2"),
            ("varying", True): (0.5, "Thm. 4"),
        }.get((constraint, strongly_convex))
        for metric, spec in (("regret", regret), ("hard_violation", viol)):
            if metric in metrics and spec is not None:
                text = (
                    r"$\propto\sqrt{t \log t}$" if spec[1] == "Thm. 4" else exponent_text(spec[0])
                )
                out.append(panels.Guide(metric, spec[0], f"{text} ({spec[1]}{tag})", anchor, dash))
    return out


def _styles(series) -> None:
    """Colour, line style and label of each series: several algorithms get distinct colours
    (``style.assign``: each its registered colour unless another series has it; oracle
    baselines dashed, X-only variants dotted when there is one grid point,
    else the line style tells grid points apart); one algorithm over a grid gets up to 12
    distinct colours (``panels.styles``)."""
    n_alg = len({s["algorithm"] for s in series})
    grid_ids = sorted({s["grid_pos"] for s in series})
    own = panels.styles(len(grid_ids))
    colours = assign([s["algorithm"] for s in series])
    for i, s in enumerate(series):
        s["marker"] = MARKERS[i % len(MARKERS)]
        g = grid_ids.index(s["grid_pos"])
        colour, wrap = colours[s["algorithm"]]
        if n_alg > 1:
            s["color"] = colour
            kind = variant(s["algorithm"]) if wrap == 0 else wrap
            s["ls"] = panels.LINESTYLES[kind % 4 if len(grid_ids) == 1 else g % 4]
            name = display_name(s["algorithm"])
        elif len(grid_ids) > 1:
            s["color"], s["ls"] = own[g]
            name = ""
        else:
            s["color"], s["ls"] = colour, "-"
            name = s["algorithm"]
        label = ", ".join(p for p in (name, s["grid"]) if p) or s["algorithm"]
        nf = int(s["failed"].sum())
        s["label"] = label + (f" ({nf}/{s['failed'].size} seeds failed, left out)" if nf else "")


def dataset_figure(
    ds,
    *,
    metrics=None,
    theory_slopes=None,
    quantile_band: bool | None = None,
    title: str | None = None,
    band: str | None = "ci",
    constraint: str | None = None,
    strongly_convex: bool | None = None,
):
    """The figure of a results Dataset (``jaxbco.results``) in jaxbco's one style
    (``jaxbco.plotting.panels``): one panel per metric, one line per (algorithm, grid point):
    the mean over seeds (failed seeds left out, their count in the legend) with the 95%
    t-interval of the mean, mean ± t₀.₉₇₅ · s/√S (``band``), and short slope guides of the
    theorem that applies.

    Args:
        ds: a results Dataset.
        metrics: the panels; None takes those the command that wrote ``ds`` drew (its
            ``figure_metrics`` attribute, else regret and hard violation), so ``jaxbco plot``
            redraws that figure.
        theory_slopes: {metric: exponent} slope guides ({} for none); None: for the paper's
            algorithm with exponent c, regret t^max(c, 1−c) (Thm. 1; log t strongly convex) and
            hard violation O(1) for a fixed constraint (Thm. 1) or t^(1−c/2) for a time-varying
            one (Thm. 2), each c with its own dash in every panel.
        quantile_band: older keyword: False leaves the band out (True or None: ``band``).
        title: one-line title; None: the dataset's ``figure_title``, else a default.
        band: "ci" (95% CI of the mean, default), "quantiles" (10-90% of seeds) or None.
        constraint: "fixed" or "varying" (gₜ); None: read from the dataset's config.
        strongly_convex: whether the loss is strongly convex; None: from the config.

    Returns:
        Figure: the figure (``panels.caption(fig)``: its caption).

    Raises:
        ValueError: for a metric the dataset does not have.

    Example:
        >>> import xarray as xr
        >>> t = np.arange(1, 21)
        >>> ds = xr.Dataset({"regret": (("seed", "round"), np.sqrt(t) * np.ones((3, 1))),
        ...                  "failed": ("seed", np.zeros(3, bool))},
        ...                 coords={"round": t, "algorithm": "rectified-bco"})
        >>> len(dataset_figure(ds, metrics=["regret"]).axes)
        1
    """
    if quantile_band is False:
        band = None
    if metrics is None:
        metrics = tuple(str(ds.attrs.get("figure_metrics", ",".join(DEFAULT_METRICS))).split(","))
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    unknown = [m for m in metrics if m not in ds]
    if unknown or not metrics:
        raise ValueError(
            f"unknown metric(s) {unknown}; choose from: "
            f"{', '.join(m for m in METRIC_LABELS if m in ds)}"
        )
    t = np.asarray(ds["round"].values, np.float64)
    raw = _series(ds, metrics)
    _styles(raw)
    series = [
        panels.Series(
            s["label"],
            s["color"],
            s["ls"],
            {m: s["curves"][m][~s["failed"]] for m in metrics},
            s["marker"],
        )
        for s in raw
    ]
    if theory_slopes is None:
        guides = _default_guides(ds, metrics, raw, *theory_of(ds, constraint, strongly_convex))
    else:
        guides = [
            panels.Guide(m, float(p), exponent_text(p), None)
            for m, p in theory_slopes.items()
            if p is not None and m in metrics
        ]
    if title is None:
        title = ds.attrs.get("figure_title") or _default_title(ds)
    labels = {m: METRIC_LABELS.get(m, (m, m)) for m in metrics}
    return panels.build(t, series, metrics, labels, guides=guides, title=title, band=band)


def plot_dataset(
    ds,
    path,
    *,
    metrics=None,
    theory_slopes=None,
    quantile_band: bool | None = None,
    title: str | None = None,
    band: str | None = "ci",
    constraint: str | None = None,
    strongly_convex: bool | None = None,
) -> list:
    """Draw ``dataset_figure`` and save it as PNG (300 dpi) and vector PDF.

    Args:
        ds: a results Dataset.
        path: the PNG's path (suffix replaced: PNG and PDF are written).
        metrics: the panels (see ``dataset_figure``).
        theory_slopes: {metric: exponent} slope guides, {} for none, None for the theorem's.
        quantile_band: older keyword: False leaves the band out (True or None: ``band``).
        title: one-line title.
        band: "ci" (default), "quantiles" or None.
        constraint: "fixed" or "varying"; None: from the dataset's config.
        strongly_convex: None: from the config.

    Returns:
        list: the PNG's and the PDF's paths.

    Raises:
        ValueError: for a metric the dataset does not have.

    Example:
        >>> import tempfile, os, xarray as xr
        >>> t = np.arange(1, 21)
        >>> ds = xr.Dataset({"regret": (("seed", "round"), np.sqrt(t) * np.ones((3, 1))),
        ...                  "failed": ("seed", np.zeros(3, bool))},
        ...                 coords={"round": t, "algorithm": "rectified-bco"})
        >>> files = plot_dataset(ds, os.path.join(tempfile.mkdtemp(), "f"), metrics=["regret"])
        >>> [f[-3:] for f in files]
        ['png', 'pdf']
    """
    base = os.fspath(path)
    root, ext = os.path.splitext(base)
    base = root if ext.lower() in (".png", ".pdf", ".svg") else base
    fig = dataset_figure(
        ds,
        metrics=metrics,
        theory_slopes=theory_slopes,
        quantile_band=quantile_band,
        title=title,
        band=band,
        constraint=constraint,
        strongly_convex=strongly_convex,
    )
    return panels.save(fig, base)


def _default_title(ds) -> str:
    cfg = config_of(ds)
    parts = [
        f"{ds.sizes['seed']} seeds",
        f"T = {ds.attrs.get('horizon', int(ds['round'].values[-1]))}",
    ]
    if "dim" in ds.sizes:
        parts.append(f"d = {ds.sizes['dim']}")
    if "dtype" in ds.attrs:
        parts.append(str(ds.attrs["dtype"]))
    head = cfg.get("problem")
    return (f"{head}: " if head else "") + ", ".join(parts)
