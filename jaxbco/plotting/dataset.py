"""The figure of a results Dataset (``jaxbco.results``): ``plot_dataset``, in the one style of
``jaxbco.plotting.panels``."""

from __future__ import annotations

import os

import numpy as np

from jaxbco.algorithms import display_name, registry
from jaxbco.plotting import panels
from jaxbco.plotting.style import assign, variant

#: Panel title and y-axis label (the quantity's formula) of each curve.
METRIC_LABELS = {
    "regret": ("regret", r"$R_t = \sum_{s\leq t} f_s(x_s) - f_s(x^*)$"),
    "hard_violation": ("hard violation", r"$V_t = \sum_{s\leq t}\,[g_s(x_s)]_+$"),
    "soft_violation": ("soft violation", r"$\sum_{s\leq t}\, g_s(x_s)$"),
    "lam": ("penalty", r"$\lambda_t$"),
    "loss": ("loss", r"$f_t(x_t)$"),
    "wealth": ("wealth", r"$\prod_{s\leq t}\,\langle r_s, x_s\rangle$"),
}

#: The panels a command draws when the dataset does not say (``figure_metrics`` attribute).
DEFAULT_METRICS = ("regret", "hard_violation")


def _fmt_value(v) -> str:
    v = np.asarray(v).item()
    return f"{v:g}" if isinstance(v, float) else str(v)


def _series(ds, metrics):
    """One entry per (algorithm, grid point): label parts, coords and (S, K) curves."""
    from jaxbco.results import algorithms_of

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
                if any(np.unique(v[np.isfinite(v)] if v.dtype.kind == "f" else v).size > 1
                       for v in vals):
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
        curves = {m: np.asarray(point[m].transpose("seed", "round").values, np.float64)
                  for m in metrics}
        coords = {n: point[n].values.item() for n in point.coords if point[n].ndim == 0}
        out.append(dict(algorithm=alg, grid=", ".join(parts), grid_pos=grid_pos, curves=curves,
                        failed=np.asarray(point["failed"].values, bool), coords=coords))
    return out


def _default_slopes(ds, metric, series) -> dict:
    """slope -> (label, series) for the paper's algorithm's series (``registry.reference()``):
    regret t^max(c, 1-c) (Thm. 1), hard
    violation t^(1-c/2) (Thm. 2), using each series' c; the label names the c."""
    from jaxbco.results import config_of

    if metric not in ("regret", "hard_violation"):
        return {}
    cfg = config_of(ds)
    if metric == "regret" and (cfg.get("strongly_convex") or cfg.get("schedule") == "Thm. 3"):
        return {}
    slopes = {}
    for s in series:
        c = s["coords"].get("c")
        if s["algorithm"] != registry.reference().name or c is None or not np.isfinite(c):
            continue
        slope = max(c, 1 - c) if metric == "regret" else 1 - c / 2
        members, cs = slopes.setdefault(round(float(slope), 6), ([], set()))
        members.append(s)
        cs.add(round(float(c), 6))
    thm = "Thm. 1" if metric == "regret" else "Thm. 2"
    return {k: (f"$\\propto t^{{{k:g}}}$ ({thm}, c = {', '.join(f'{c:g}' for c in sorted(cs))})",
                members) for k, (members, cs) in slopes.items()}


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
    for s in series:
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


def plot_dataset(ds, path, *, metrics=None, theory_slopes=None, quantile_band: bool = True,
                 title: str | None = None) -> list:
    """The figure of a results Dataset (``jaxbco.results``) in jaxbco's one style
    (``jaxbco.plotting.panels``): one panel per metric, the mean over seeds (failed seeds left
    out, their count in the legend) with the 10-90% band of the seeds, one line per
    (algorithm, grid point).

    ``metrics``: None takes the panels the command that wrote ``ds`` drew (its
    ``figure_metrics`` attribute; else regret and hard violation), so ``jaxbco plot`` redraws
    that figure; ``title`` None likewise (``figure_title``).  Theory references, dashed grey
    through twice the final mean: ``theory_slopes`` = {metric: slope} ({} for none); by
    default, for rectified-bco with exponent c, regret max(c, 1-c) (Thm. 1) and hard
    violation 1 - c/2 (Thm. 2), each labelled with its c.  Writes ``path`` as PNG (300 dpi)
    and PDF (suffix replaced); returns both paths.
    """
    if metrics is None:
        metrics = tuple(str(ds.attrs.get("figure_metrics", ",".join(DEFAULT_METRICS))).split(","))
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    unknown = [m for m in metrics if m not in ds]
    if unknown or not metrics:
        raise ValueError(f"unknown metric(s) {unknown}; choose from: "
                         f"{', '.join(m for m in METRIC_LABELS if m in ds)}")
    base = os.fspath(path)
    root, ext = os.path.splitext(base)
    base = root if ext.lower() in (".png", ".pdf", ".svg") else base
    t = np.asarray(ds["round"].values, np.float64)
    raw = _series(ds, metrics)
    _styles(raw)
    series = [panels.Series(s["label"], s["color"], s["ls"],
                            {m: s["curves"][m][~s["failed"]] for m in metrics}) for s in raw]
    refs = []
    for metric in metrics:
        if theory_slopes is None:
            chosen = _default_slopes(ds, metric, raw)
        else:
            slope = theory_slopes.get(metric)
            chosen = {} if slope is None else {float(slope): (f"$\\propto t^{{{float(slope):g}}}$", raw)}
        for slope, (label, members) in sorted(chosen.items()):
            finals = [panels.summary(m["curves"][metric][~m["failed"]])[0][-1] for m in members]
            finals = [f for f in finals if np.isfinite(f) and f > 0]
            if finals:
                refs.append(panels.Reference(metric, 2.0 * max(finals) * (t / t[-1]) ** slope, label))
    if title is None:
        title = ds.attrs.get("figure_title") or _default_title(ds)
    labels = {m: METRIC_LABELS.get(m, (m, m)) for m in metrics}
    return panels.draw(base, t, series, metrics, labels, refs=refs, title=title,
                       bands=quantile_band)


def _default_title(ds) -> str:
    from jaxbco.results import config_of

    cfg = config_of(ds)
    parts = [f"{ds.sizes['seed']} seeds", f"T = {ds.attrs.get('horizon', int(ds['round'].values[-1]))}"]
    if "dim" in ds.sizes:
        parts.append(f"d = {ds.sizes['dim']}")
    if "dtype" in ds.attrs:
        parts.append(str(ds.attrs["dtype"]))
    head = cfg.get("problem")
    return (f"{head}: " if head else "") + ", ".join(parts)
