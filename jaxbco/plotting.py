"""Figures (the only module that imports matplotlib).

``plot_curves`` and ``plot_comparison`` draw from a ``Result`` / the comparison study;
``plot_dataset`` draws paper figures from a saved results Dataset (``jaxbco.results``).
"""

from __future__ import annotations

import os
import warnings

import matplotlib
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

# Figures are built with the object-oriented API (``Figure``, no pyplot state): they render to
# files on any backend and leave a notebook's inline backend alone.
import numpy as np  # noqa: E402


def _band(ax, t, curves, color, label):
    curves = np.asarray(curves, dtype=np.float64)
    mean = np.nanmean(curves, axis=0)
    lo, hi = np.nanquantile(curves, [0.025, 0.975], axis=0)
    ax.plot(t, mean, color=color, label=label, lw=1.6)
    ax.fill_between(t, lo, hi, color=color, alpha=0.25, lw=0)
    return mean


def plot_curves(result, path, *, c: float = 0.5, setting: int = 0, title: str | None = None):
    """Regret and hard/soft violation vs t: mean over seeds with a 95% quantile band, log-log,
    with the Theorem 1 slope T^max(c, 1-c) drawn through the final mean regret."""
    t = np.asarray(result.rounds, dtype=np.float64)
    ok = ~np.asarray(result.failed)[setting]
    fig = Figure(figsize=(7.0, 2.9), constrained_layout=True)
    axes = fig.subplots(1, 2)
    ax = axes[0]
    regret = np.asarray(result.regret[setting, ok])
    mean = _band(ax, t, np.maximum(regret, 1e-12), "C0", "regret $R_t$")
    slope = max(c, 1 - c)
    ref = mean[-1] * (t / t[-1]) ** slope
    ax.plot(t, ref, "k--", lw=1, label=f"$t^{{{slope:g}}}$ (Thm. 1)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round $t$")
    ax.set_title("regret")
    ax.legend(fontsize=8)
    ax = axes[1]
    _band(ax, t, np.maximum(np.asarray(result.hard_violation[setting, ok]), 1e-12), "C3",
          r"hard $\sum[g_t]_+$")
    soft = np.asarray(result.soft_violation[setting, ok])
    ax.plot(t, np.nanmean(soft, axis=0), "C2:", lw=1.4, label=r"soft $\sum g_t$ (mean)")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel("round $t$")
    ax.set_title("constraint violation")
    ax.legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.savefig(path, dpi=150)
    return path


# --- Comparison figures (jaxbco.compare) -----------------------------------------------------

#: One fixed colour per algorithm name, in the order of ``jaxbco.algorithms.ALGORITHMS``, so a
#: method has the same colour in every figure.
ALGORITHM_ORDER = ("rectified-bco", "flaxman-bgd", "agarwal-2pt", "mahdavi-pd", "recoo",
                   "yuan-lamperski", "yu-neely")

#: Okabe-Ito colour-blind-safe palette.
OKABE_ITO = {"blue": "#0072B2", "orange": "#E69F00", "sky blue": "#56B4E9",
             "bluish green": "#009E73", "vermillion": "#D55E00", "reddish purple": "#CC79A7",
             "black": "#000000", "yellow": "#F0E442"}

#: The fixed colour of each algorithm of ``ALGORITHM_ORDER`` (Okabe-Ito).
ALGORITHM_COLORS = dict(zip(ALGORITHM_ORDER, ("#0072B2", "#E69F00", "#56B4E9", "#009E73",
                                              "#D55E00", "#CC79A7", "#000000")))

#: Colours for the grid points of one algorithm, in order (Okabe-Ito without black).
SERIES_COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442")

#: Theory reference lines (dashed grey, so no algorithm colour is taken).
REFERENCE_COLOR = "#666666"


def algorithm_color(name: str):
    """The colour of ``name``: fixed for the algorithms of ``ALGORITHM_ORDER`` (Okabe-Ito); other
    names get a palette colour chosen by a stable hash of the name."""
    if name in ALGORITHM_COLORS:
        return ALGORITHM_COLORS[name]
    return SERIES_COLORS[sum(map(ord, name)) % len(SERIES_COLORS)]


def _symlog_floor(curves) -> float:
    finite = [np.abs(np.nanmean(np.asarray(c, np.float64), axis=0)) for c in curves]
    top = max((float(np.nanmax(f)) for f in finite if np.isfinite(f).any()), default=1.0)
    return max(top * 1e-3, 1e-12)


def plot_comparison(rounds, curves: dict, path, *, bounds: dict | None = None,
                    wealth: dict | None = None, title: str | None = None):
    """Regret and hard violation vs t for several algorithms: mean over seeds with a 2.5-97.5%
    quantile band, log t axis, symmetric-log values (regret may be negative), one colour per
    algorithm (``algorithm_color``).

    ``curves``: name -> {"regret": (S, K), "hard_violation": (S, K)}; ``bounds``: optional
    {"regret": (K,), "hard_violation": (K,), "label": str} drawn dashed black (the theorem
    bound for rectified-bco); ``wealth``: optional name -> (S, K) wealth curves, drawn in a
    third panel (log scale).
    """
    t = np.asarray(rounds, dtype=np.float64)
    panels = [("regret", "regret $R_t$"), ("hard_violation", r"hard violation $\sum_s [g_s(x_s)]_+$")]
    ncols = 3 if wealth else 2
    fig = Figure(figsize=(4.0 * ncols, 3.4), constrained_layout=True)
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    for ax, (key, label) in zip(axes, panels):
        data = [np.asarray(c[key], np.float64) for c in curves.values()]
        for name, c in curves.items():
            _band(ax, t, c[key], algorithm_color(name), name)
        floor = _symlog_floor(data)
        if bounds is not None and key in bounds:
            ax.plot(t, bounds[key], "--", color=REFERENCE_COLOR, lw=1.1,
                    label=bounds.get("label", "bound"))
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=floor)
        lowest = min(float(np.nanmin(np.nanquantile(d, 0.025, axis=0))) for d in data)
        lowest_mean = min(float(np.nanmin(np.nanmean(d, axis=0))) for d in data)
        # show negative means in full; below them only a band's first decade
        ax.set_ylim(bottom=min(1.5 * lowest_mean, max(min(lowest, 0.0), -floor)))
        ax.set_xlabel("round $t$")
        ax.set_title(label, fontsize=9)
    if wealth:
        ax = axes[2]
        for name, w in wealth.items():
            _band(ax, t, w, algorithm_color(name), name)
        ax.set_xscale("log")
        w_all = np.concatenate([np.ravel(np.asarray(w, np.float64)) for w in wealth.values()])
        w_all = w_all[np.isfinite(w_all) & (w_all > 0)]
        if w_all.size and w_all.max() > 10 * w_all.min():
            ax.set_yscale("log")
        ax.set_xlabel("round $t$")
        ax.set_title("wealth $\\prod_s \\langle r_s, x_s\\rangle$", fontsize=9)
    handles, labels = axes[0].get_legend_handles_labels()
    axes[-1].legend(handles, labels, fontsize=7, loc="best")
    if title:
        fig.suptitle(title, fontsize=9)
    fig.savefig(path, dpi=130)
    return path


# --- Paper figures from a results Dataset (jaxbco.results) ----------------------------------

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
            log_y = all(np.all(st[0][late] > 0) for _, st in stats if np.isfinite(st[0]).any())
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
