"""Paper figures from a results Dataset (``jaxbco.results``): ``plot_dataset``."""

from __future__ import annotations

import os
import warnings

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from jaxbco.plotting.style import REFERENCE_COLOR, SERIES_COLORS, algorithm_color, note_no_data


#: Panel titles and y labels of the dataset curves.
METRIC_LABELS = {
    "regret": "regret $R_t$",
    "hard_violation": r"hard violation $V_t = \Sigma_{s\leq t}\,[g_s(x_s)]_+$",
    "soft_violation": r"soft violation $\Sigma_{s\leq t}\, g_s(x_s)$",
    "lam": r"penalty $\lambda_t$",
    "loss": r"loss $f_t(x_t)$",
}

#: Matplotlib settings for figures read at column width (all text >= 8 pt, embedded fonts).
PAPER_RC = {"font.size": 8, "axes.titlesize": 8.5, "axes.labelsize": 8, "xtick.labelsize": 8,
            "ytick.labelsize": 8, "legend.fontsize": 8, "figure.titlesize": 9,
            "axes.linewidth": 0.6, "lines.linewidth": 1.4, "pdf.fonttype": 42, "ps.fonttype": 42,
            "legend.frameon": False}

_LINESTYLES = ("-", (0, (5, 1.5)), (0, (1, 1.2)), "-.", (0, (3, 1, 1, 1, 1, 1)))


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
    """slope -> label for rectified-bco series: regret t^max(c, 1-c) (Thm. 1), hard violation
    t^(1-c/2) (Thm. 2), using each series' c."""
    from jaxbco.results import config_of

    if metric not in ("regret", "hard_violation"):
        return {}
    cfg = config_of(ds)
    if metric == "regret" and (cfg.get("strongly_convex") or cfg.get("schedule") == "Thm. 3"):
        return {}
    slopes = {}
    for s in series:
        c = s["coords"].get("c")
        if s["algorithm"] != "rectified-bco" or c is None or not np.isfinite(c):
            continue
        slope = max(c, 1 - c) if metric == "regret" else 1 - c / 2
        slopes.setdefault(round(float(slope), 6), []).append(s)
    thm = "Thm. 1" if metric == "regret" else "Thm. 2"
    return {k: (f"$\\propto t^{{{k:g}}}$ ({thm})", v) for k, v in slopes.items()}


def _stats(curves, ok):
    v = curves[ok]
    n = v.shape[0]
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(v, axis=0) if n else np.full(curves.shape[1], np.nan)
        half = 1.96 * np.nanstd(v, axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full_like(mean, np.nan)
        q10, q90 = (np.nanquantile(v, [0.1, 0.9], axis=0) if n else (mean, mean))
    return mean, mean - half, mean + half, q10, q90


def plot_dataset(ds, path, *, metrics=("regret", "hard_violation"), theory_slopes=None,
                 quantile_band: bool = True, title: str | None = None) -> list:
    """Paper figure of a results Dataset (``jaxbco.results``): one panel per metric, rounds and
    values on log axes (symmetric-log where a mean is <= 0 late in the run), the mean over seeds
    with its 95% confidence band (normal approximation) and, lighter, the 10-90% range of the
    seeds; failed seeds are left out (the count is in the legend).

    One line per (algorithm, grid point): several algorithms keep their fixed colours
    (``algorithm_color``) and differ by line style across grid points; one algorithm gets one
    colour per grid point.  Dashed grey lines show the theorem's slope through (twice) the
    final mean: ``theory_slopes`` = {metric: slope} (an empty dict for none); by default, for
    rectified-bco with exponent c, regret max(c, 1-c) (Thm. 1) and hard violation 1 - c/2
    (Thm. 2).  Writes ``path`` as PNG (300 dpi) and PDF (suffix replaced); returns both paths.
    """
    from matplotlib.patches import Patch

    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    unknown = [m for m in metrics if m not in ds]
    if unknown or not metrics:
        raise ValueError(f"unknown metric(s) {unknown}; choose from: "
                         f"{', '.join(m for m in METRIC_LABELS if m in ds)}")
    base = os.fspath(path)
    root, ext = os.path.splitext(base)
    base = root if ext.lower() in (".png", ".pdf", ".svg") else base
    t = np.asarray(ds["round"].values, np.float64)
    series = _series(ds, metrics)
    n_alg = len({s["algorithm"] for s in series})
    grid_ids = sorted({s["grid_pos"] for s in series})
    n_grid = len(grid_ids)
    for s in series:
        g = grid_ids.index(s["grid_pos"])
        if n_alg > 1:
            s["color"], s["ls"] = algorithm_color(s["algorithm"]), _LINESTYLES[g % len(_LINESTYLES)]
        elif n_grid > 1:
            s["color"] = SERIES_COLORS[g % len(SERIES_COLORS)]
            s["ls"] = _LINESTYLES[(g // len(SERIES_COLORS)) % len(_LINESTYLES)]
        else:
            s["color"], s["ls"] = algorithm_color(s["algorithm"]), "-"
        label = s["algorithm"] if (n_alg > 1 or n_grid == 1) else ""
        label = ", ".join(p for p in (label, s["grid"]) if p)
        nf = int(s["failed"].sum())
        if nf:
            label += f" ({nf}/{s['failed'].size} seeds failed, excluded)"
        s["label"] = label or s["algorithm"]

    ncols = min(2, len(metrics))
    nrows = -(-len(metrics) // ncols)
    with matplotlib.rc_context(PAPER_RC):
        fig = Figure(figsize=(3.5 * ncols, 2.5 * nrows + 0.2), constrained_layout=True)
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for ax in axes.ravel()[len(metrics):]:
            ax.set_visible(False)
        ref_handles = {}
        for ax, metric in zip(axes.ravel(), metrics):
            stats = [(s, _stats(s["curves"][metric], ~s["failed"])) for s in series]
            late = slice(len(t) // 2, None)
            finite = [st for _, st in stats if np.isfinite(st[0]).any()]
            if not finite:  # all seeds failed, or none: say so, draw nothing to scale
                ax.set_title(METRIC_LABELS.get(metric, metric))
                note_no_data(ax)
                continue
            log_y = all(np.all(st[0][late] > 0) for st in finite)
            positive = [st[0][st[0] > 0] for _, st in stats]
            floor = min((float(p.min()) for p in positive if p.size), default=1e-12) * 0.5
            for s, (mean, lo, hi, q10, q90) in stats:
                if log_y:
                    mean_plot = np.where(mean > 0, mean, np.nan)
                    lo, q10 = np.maximum(lo, floor), np.maximum(q10, floor)
                else:
                    mean_plot = mean
                if quantile_band:
                    ax.fill_between(t, q10, q90, color=s["color"], alpha=0.12, lw=0)
                ax.fill_between(t, lo, hi, color=s["color"], alpha=0.35, lw=0)
                ax.plot(t, mean_plot, color=s["color"], ls=s["ls"], lw=1.4, label=s["label"])
            ax.set_xscale("log")
            if log_y:
                ax.set_yscale("log")
                tops = [np.nanmax(st[2]) for _, st in stats if np.isfinite(st[2]).any()]
                if tops:
                    ax.set_ylim(floor, max(tops) * 3.0)
            else:
                means = [np.abs(st[0]) for _, st in stats if np.isfinite(st[0]).any()]
                top = max((float(np.nanmax(m)) for m in means), default=1.0)
                ax.set_yscale("symlog", linthresh=max(top * 1e-3, 1e-12))
            # theory reference slopes
            if theory_slopes is None:
                refs = _default_slopes(ds, metric, series)
            else:
                slope = theory_slopes.get(metric)
                refs = {} if slope is None else {float(slope): (f"$\\propto t^{{{float(slope):g}}}$", series)}
            if log_y:
                for k, (slope, (label, members)) in enumerate(sorted(refs.items())):
                    finals = [st[0][-1] for s, st in stats if any(s is m for m in members)]
                    finals = [f for f in finals if np.isfinite(f) and f > 0]
                    if not finals:
                        continue
                    ref = 2.0 * max(finals) * (t / t[-1]) ** slope
                    ls = _LINESTYLES[1 + k % (len(_LINESTYLES) - 1)]
                    h, = ax.plot(t, ref, color=REFERENCE_COLOR, ls=ls, lw=1.0, label=label)
                    ref_handles.setdefault(label, h)
            ax.set_xlabel("round $t$")
            ax.set_title(METRIC_LABELS.get(metric, metric))
            ax.grid(True, which="major", lw=0.3, alpha=0.5)
        handles = [Line2D([], [], color=s["color"], ls=s["ls"], lw=1.4) for s in series]
        labels = [s["label"] for s in series]
        handles += list(ref_handles.values())
        labels += list(ref_handles)
        handles += [Patch(color="0.3", alpha=0.35, lw=0)]
        labels += ["95% CI of the mean"]
        if quantile_band:
            handles += [Patch(color="0.3", alpha=0.12, lw=0)]
            labels += ["10-90% of seeds"]
        width = max(len(lab) for lab in labels) * 0.06 + 0.5  # inches per legend column at 8 pt
        fig.legend(handles, labels, loc="outside lower center",
                   ncols=max(1, min(len(labels), int(3.5 * ncols / width))))
        if title is None:
            title = _default_title(ds)
        if title:
            fig.suptitle(title)
        png, pdf = base + ".png", base + ".pdf"
        fig.savefig(png, dpi=300, bbox_inches="tight", pad_inches=0.03)
        fig.savefig(pdf, bbox_inches="tight", pad_inches=0.03)
        return [png, pdf]


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
