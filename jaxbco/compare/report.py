"""The comparison's output: its Markdown table and theory section, the JSON summary and the
figure (``write``).
"""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np

from jaxbco.algorithms import display_name, registry
from jaxbco.compare.comparison import Comparison
from jaxbco.compare.theory import literature_cells, theorem


def slug(name: str) -> str:
    return name.replace(":", "-").replace("/", "-")


def _fmt(iv: dict) -> str:
    lo, hi = iv["ci95"]
    if not np.isfinite(lo):
        return f"{iv['mean']:.4g}"
    return f"{iv['mean']:.4g} [{lo:.4g}, {hi:.4g}]"


def _failed(row) -> str:
    """The failed-seeds cell, with the seeds whose x* or a prox step failed its certificate
    where any did."""
    bad = row.get("x_star_uncertified_seeds", 0)
    prox = row.get("prox_uncertified_seeds", 0)
    return (str(row["failed_seeds"]) + (f"; x* uncertified on {bad}" if bad else "")
            + (f"; prox uncertified on {prox}" if prox else ""))


def table_markdown(res: Comparison) -> str:
    """The results table (Markdown): one row per algorithm."""
    wealth = res.wealth_baselines is not None
    head = ["algorithm", "R_T / T", "hard V_T", "soft V_T"] + (["final wealth"] if wealth else [])
    head += ["R_t slope in run", "V_t slope in run", "failed", "compile + run (s)",
             "seed-rounds/s (compile excluded)", "back-end"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in res.rows:
        cells = [display_name(r["algorithm"]), _fmt(r["regret_over_T"]), _fmt(r["hard_violation"]),
                 _fmt(r["soft_violation"])]
        if wealth:
            cells.append(_fmt(r["final_wealth"]))
        cells += [f"{r['regret_exponent']:.2f}", f"{r['violation_exponent']:.2f}",
                  _failed(r), f"{r['wall_s']:.1f}",
                  f"{r.get('seed_rounds_per_s', float('nan')):.3g}", str(r.get("engine", ""))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def theory_markdown(res: Comparison) -> str:
    """Bound constants, the applicable theorem, and fitted vs theoretical exponents."""
    k, b = res.constants, res.bounds
    sig = "" if k["sigma"] is None else f", sigma = {k['sigma']:g}"
    ref = registry.reference().name  # the algorithm the theorems are for
    rect = next((r for r in res.rows if r["algorithm"] == ref), None)
    lines = [
        f"Bound constants: F = {k['F']:.4g} (from {k['F_from']}), G = {k['G']:.4g} "
        f"(from {k['G_from']}), D = {k['D']:.4g}, d = {k['d']}{sig}, c = {k['c']:g}, "
        f"eps = {k['eps']:g}; g {'fixed' if k['fixed_g'] else 'time-varying'}, loss "
        f"{'strongly convex' if k['strongly_convex'] else 'convex'}: **{theorem(k)}** applies to "
        f"{ref}. At T = {res.horizon}: regret bound {b['regret'][-1]:.4g}, hard "
        f"violation bound {b['hard_violation'][-1]:.4g}.",
        "",
        f"Log-log slopes of the mean curves within one run, over t in [{res.fit_range[0]:g}, "
        f"{res.fit_range[1]:g}] = [T/10, T], vs theory (the theorems are statements across "
        f"horizons, whose step sizes depend on T: see the horizon ladder, "
        f"``jaxbco.compare.ladder``):",
        "",
        "| algorithm | R_t slope | theory (regret) | V_t slope | theory (violation) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in res.rows:
        name = r["algorithm"]
        if name == ref:
            src = {"Thm. 2": "Thm. 1's bound, whose proof holds for varying g",
                   "Thm. 4": "Thm. 3's bound, whose proof holds for varying g"}.get(theorem(k), theorem(k))
            tr = f"{b['regret_order']} ({src}; exponent {b['regret_exponent']:g})"
            tv = f"{b['violation_order']} (exponent {b['violation_exponent']:g})"
        else:
            tr, tv = literature_cells(name)
        lines.append(f"| {display_name(name)} | {r['regret_exponent']:.2f} | {tr} | "
                     f"{r['violation_exponent']:.2f} | {tv} |")
    if rect is not None:
        lines += ["", "A bounded V_T fits a slope near 0; a slope is fitted only where the mean "
                  "curve is positive (NaN otherwise)."]
    return "\n".join(lines)


def wealth_markdown(res: Comparison) -> str:
    if res.wealth_baselines is None:
        return ""
    lines = ["| reference strategy | final wealth |", "| --- | --- |"]
    lines += [f"| {k} | {v:.4g} |" for k, v in res.wealth_baselines.items()]
    info = res.comparator_info or {}
    lines += ["", f"x* (the best CRP with x^T Sigma_t x <= rho for every t): objective "
              f"{info.get('objective', float('nan')):.10g}, max_t g_t(x*) = "
              f"{info.get('max_g', float('nan')):.3g}, barrier gap <= {info.get('gap', float('nan')):.2g}, "
              f"{info.get('newton_steps', 0)} Newton steps, {info.get('working_set', 0)} constraints in "
              f"the working set."]
    return "\n".join(lines)


def _jsonable(obj):
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    return obj


def write(res: Comparison, out: str) -> list:
    """Write ``<slug>.md``, ``<slug>.json`` and ``<slug>.png`` under ``out``."""
    from jaxbco import plotting

    os.makedirs(out, exist_ok=True)
    base = os.path.join(out, slug(res.problem))
    wealth = ({n: c["wealth"] for n, c in res.curves.items() if "wealth" in c}
              if res.wealth_baselines is not None else None)
    title = (f"{res.problem}: {res.seeds} seeds, T = {res.horizon}, d = {res.dim}, {res.dtype}")
    fig = plotting.plot_comparison(res.rounds, res.curves, base + ".png",
                                   bounds={"regret": res.bounds["regret"],
                                           "hard_violation": res.bounds["hard_violation"],
                                           "label": res.bounds["label"]},
                                   wealth=wealth, title=title)
    with open(base + ".md", "w") as fh:
        fh.write(section_markdown(res, os.path.basename(fig)))
    summary = {k: v for k, v in dataclasses.asdict(res).items() if k not in ("curves",)}
    summary["mean_curves"] = {n: {m: np.nanmean(v, axis=0) for m, v in c.items()}
                              for n, c in res.curves.items()}
    with open(base + ".json", "w") as fh:
        json.dump(_jsonable(summary), fh, indent=1)
    res.files = [base + ".md", base + ".json", fig]
    return res.files


def section_markdown(res: Comparison, figure: str) -> str:
    parts = [f"## {res.problem}", "",
             f"{res.seeds} seeds, T = {res.horizon}, d = {res.dim}, {res.dtype}; total "
             f"{res.wall_s:.1f} s. Mean over seeds [95% bootstrap CI of the mean]; slopes fitted on the "
             f"mean curves.", "", table_markdown(res), ""]
    if res.wealth_baselines is not None:
        parts += [wealth_markdown(res), ""]
    parts += [theory_markdown(res), "", f"![{res.problem}]({figure})", ""]
    return "\n".join(parts)


def results_page(command: str, machine: str, total_s: float, sections: list,
                 comparisons: list) -> str:
    """The results page (docs/results.md): ``command`` that generated it, the ``machine``, total
    wall time, one summary row per ``Comparison`` and the ``sections`` (``section_markdown``)."""
    summary = [f"| {r.problem} | {r.seeds} | {r.horizon} | {r.dim} | {r.wall_s:.0f} |"
               for r in comparisons]
    ref = registry.reference().name
    head = [
        f"# Comparison study: Algorithm 1 ({ref}) and the Table 1 baselines",
        "",
        f"Generated by `{command}` (every number and figure on this page comes from that one "
        f"command; it rewrites this file and `results/`). Machine: {machine}. "
        f"Total wall time {total_s:.0f} s ({total_s / 60:.1f} min), compile time included.",
        "",
        f"Each algorithm runs with its documented `default_hyper` ({ref}: c = 1/2, "
        "eps = 0.1, delta = 1/T, xi = delta / r; the strongly convex schedule alpha_t = sigma t "
        "with sigma the loss's modulus where the loss is strongly convex) as one compiled "
        "`sweep` over all seeds; `compile + run` is that call's wall time. R_T is regret "
        "against the offline constrained optimum x*; V_T hard = sum_t [g_t(x_t)]_+, soft = "
        "sum_t g_t(x_t); brackets: 95% percentile-bootstrap interval of the mean over seeds. The "
        "figures show the mean over seeds (with the 10-90% band of the seeds where at most four "
        "algorithms are drawn; oracle baselines dashed, X-only variants dotted) and the "
        f"{ref} bound of the applicable theorem (dashed grey). See `jaxbco/compare/theory.py` for the bound formulas "
        "and `jaxbco/data/portfolio.py` for the portfolio problem and its comparator.",
        "",
        "Sizes: 1000 seeds at the published horizons (yu-neely T = 5000, hutchinson-toy "
        "T = 2000, online-logistic T = 10^4) and Theorem 4's setting at T = 2000; after each, "
        "the exponents of R_T and V_T across a ladder of horizons (64 seeds per T, one run per "
        "T with that T's step sizes); nyse-portfolio at 1000 seeds over all 5401 trading days "
        "(the risk-constrained prox is an interior point run only where the constraint binds), "
        "and the other real-data sets (DJIA, MSCI, S&P 500, TSE, NYSE 1985-2010) at 256 seeds "
        "over all their days after the one-year window.",
        "",
        "| problem | seeds | T | d | wall (s) |",
        "| --- | --- | --- | --- | --- |",
        *summary,
        "",
    ]
    tail = [
        "## Hyperparameter tuning",
        "",
        "Tuning the schedule by gradients through whole runs, against grid and random search "
        "on held-out seeds (quadratic-ball, the hutchinson-toy preset and the NYSE portfolio), "
        "has its own page with its commands: [tuning.md](tuning.md); a reduced-size walk-through "
        "is `notebooks/04_tuning.ipynb`.",
        "",
    ]
    return "\n".join(head + sections + tail)
