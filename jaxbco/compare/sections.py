"""One problem's section of the results page: its results table (Markdown, LaTeX), the
theory section and the wealth table, and the section that puts them together.
"""

from __future__ import annotations

import numpy as np

from jaxbco.algorithms import display_name, registry
from jaxbco.compare import findings
from jaxbco.compare.comparison import Comparison
from jaxbco.compare.table import Column, Estimate, Table
from jaxbco.compare.theory import literature_cells, theorem


def slug(name: str) -> str:
    """A problem's name as a file name: ``portfolio:djia`` -> ``portfolio-djia``.

    Args:
        name: the problem's name.

    Returns:
        The name with ``:`` and ``/`` replaced by ``-``.
    """
    return name.replace(":", "-").replace("/", "-")


def _estimate(iv: dict, dtype: str) -> Estimate:
    lo, hi = iv["ci95"]
    return Estimate(iv["mean"], lo, hi, float(np.finfo(dtype).eps))


def certified(row) -> str:
    """What a row's numbers rest on: whether x* and every prox step passed their certificates
    on every seed ("all seeds"), on how many not ("not on k"), or had none to pass ("none":
    no comparator certificate, no prox solve)."""

    def part(name, bad_key, checked_key):
        bad = row.get(bad_key, 0)
        if bad:
            return f"{name} not on {bad}"
        return f"{name} all seeds" if row.get(checked_key, True) else f"{name} none"

    return (
        part("x*", "x_star_uncertified_seeds", "x_star_checked")
        + "; "
        + part("prox", "prox_uncertified_seeds", "prox_checked")
    )


#: The in-run regret cell of a portfolio: R_t there is measured against x*, the best CRP of
#: all T days, not of the first t, so its growth within the run is no regret rate.
NOT_A_RATE = "not a rate (x* of all T)"


def growth(res: Comparison, name: str, metric: str) -> findings.Finding:
    """What the mean curve of ``metric`` of algorithm ``name`` does within the run, over the
    fit range [T/10, T] (``findings.in_run``); on a portfolio the regret's is ``NOT_A_RATE``."""
    if metric == "regret" and res.wealth_baselines is not None:
        return findings.Finding(NOT_A_RATE)  # x* is the best CRP of all T days
    mean = np.nanmean(np.asarray(res.curves[name][metric], np.float64), axis=0)
    return findings.in_run(res.rounds, mean, *res.fit_range)


def results_table(res: Comparison, *, speed: bool = True) -> Table:
    """The results table: one row per algorithm, means over seeds with 95% intervals, the
    growth of R_t and V_t within the run, failed seeds, whether x* and the prox steps were
    certified on every seed (``certified``) and (``speed``) the run's cost.

    Args:
        res: the comparison.
        speed: add the wall time, throughput and back-end columns (the results page has
            them; a paper's table does not need them).

    Returns:
        The ``Table`` (``.markdown()``, ``.latex()``).
    """
    wealth = res.wealth_baselines is not None
    cols = [
        Column("algorithm", "Algorithm", "l"),
        Column("R_T / T", "$R_T/T$"),
        Column("hard V_T", "$V_T^{\\mathrm{hard}}$"),
        Column("soft V_T", "$V_T^{\\mathrm{soft}}$"),
    ]
    if wealth:
        cols.append(Column("final wealth", "Final wealth"))
    cols += [
        Column("R_t in run", "$R_t$ growth", "l"),
        Column("V_t in run", "$V_t$ growth", "l"),
        Column("failed", "Failed"),
        Column("certified", "Certified", "l"),
    ]
    if speed:
        cols += [
            Column("compile + run (s)", "Time (s)"),
            Column("seed-rounds/s (runs only)", "Seed-rounds/s"),
            Column("x* (s)", "$x^*$ (s)"),
            Column("back-end", "Back-end", "l"),
        ]
    rows = []
    for r in res.rows:
        name = r["algorithm"]
        cells = [
            display_name(name),
            _estimate(r["regret_over_T"], res.dtype),
            _estimate(r["hard_violation"], res.dtype),
            _estimate(r["soft_violation"], res.dtype),
        ]
        if wealth:
            cells.append(_estimate(r["final_wealth"], res.dtype))
        cells += [
            growth(res, name, "regret").text(),
            growth(res, name, "hard_violation").text(),
            str(r["failed_seeds"]),
            certified(r),
        ]
        if speed:
            cells += [
                f"{r['wall_s']:.1f}",
                f"{r.get('seed_rounds_per_s', float('nan')):.3g}",
                f"{r.get('comparator_s', float('nan')):.2g}",
                str(r.get("engine", "")),
            ]
        rows.append(cells)
    return Table(cols, rows)


def table_markdown(res: Comparison) -> str:
    """The results table (Markdown): one row per algorithm."""
    return results_table(res).markdown()


def table_latex(res: Comparison) -> str:
    """The results table as a LaTeX ``table`` with booktabs, for a paper: the metrics with
    95% intervals, the growth within the run, the failed seeds and the certificates (no speed
    columns); a text column with one value in every row is said once in the caption instead.

    Args:
        res: the comparison.

    Returns:
        LaTeX source (needs ``\\usepackage{booktabs,array,tabularx}``).
    """
    caption = (
        f"{res.problem}: {res.seeds} seeds, T = {res.horizon}, d = {res.dim}, "
        f"{res.dtype}. Mean over seeds with its 95% bootstrap interval; growth of the mean "
        f"curves within the run over t in [T/10, T] (a log-log slope where a power law "
        f"fits)."
    )
    table = results_table(res, speed=False)
    same = [  # text columns with one value in every row: said once in the caption
        i
        for i, c in enumerate(table.columns)
        if i > 0
        and len(table.rows) > 1
        and all(isinstance(r[i], str) and r[i] == table.rows[0][i] for r in table.rows)
    ]
    if same:
        caption += (
            " Every row: "
            + "; ".join(f"{table.columns[i].markdown} {table.rows[0][i]}" for i in same)
            + "."
        )
        keep = [i for i in range(len(table.columns)) if i not in same]
        table = Table([table.columns[i] for i in keep], [[r[i] for i in keep] for r in table.rows])
    return table.latex(caption=caption, label=f"tab:{slug(res.problem)}")


def theory_markdown(res: Comparison) -> str:
    """The theory section: the bound constants (F, G, D, d), the theorem that applies to
    the reference algorithm and its bounds at T, and each algorithm's growth within the run
    (``growth``) next to the order its source states.

    Args:
        res: the comparison.

    Returns:
        Markdown.
    """
    k, b = res.constants, res.bounds
    sig = "" if k["sigma"] is None else f", sigma = {k['sigma']:g}"
    hull = "" if k["d"] == res.dim else f" (the dimension of X's affine hull in R^{res.dim})"
    ref = registry.reference().name  # the algorithm the theorems are for
    rect = next((r for r in res.rows if r["algorithm"] == ref), None)
    lines = [
        f"Bound constants: F = {k['F']:.4g} (from {k['F_from']}), G = {k['G']:.4g} "
        f"(from {k['G_from']}), D = {k['D']:.4g}, d = {k['d']}{hull}{sig}, c = {k['c']:g}, "
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
        "| algorithm | R_t in run | theory (regret) | V_t in run | theory (violation) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in res.rows:
        name = r["algorithm"]
        if name == ref:
            src = {
                "Thm. 2": "Thm. 1's bound, whose proof holds for varying g",
                "Thm. 4": "Thm. 3's bound, whose proof holds for varying g",
            }.get(theorem(k), theorem(k))
            tr = f"{b['regret_order']} ({src}; exponent {b['regret_exponent']:g})"
            tv = f"{b['violation_order']} (exponent {b['violation_exponent']:g})"
        else:
            tr, tv = literature_cells(name)
        lines.append(
            f"| {display_name(name)} | {growth(res, name, 'regret').text()} | {tr} | "
            f"{growth(res, name, 'hard_violation').text()} | {tv} |"
        )
    if res.wealth_baselines is not None:
        lines += [
            "",
            f'"{NOT_A_RATE}": R_t for t < T is measured against x*, the best CRP over all T '
            f"days, not over the first t, so its growth within the run is no regret rate and "
            f"is not fitted.",
        ]
    if rect is not None:
        lines += [
            "",
            f"A slope is printed only where the mean curve is positive on the range "
            f"and a power law fits it (R² ≥ {findings.MIN_R2:g}); |slope| < "
            f'{findings.BOUNDED:g} reads "bounded"; a curve that crosses zero "changes sign".',
        ]
    return "\n".join(lines)


def wealth_markdown(res: Comparison) -> str:
    """For a portfolio problem: the reference strategies' final wealth and the comparator's
    certificate (objective, max_t g_t(x*), barrier gap); "" for any other problem.

    Args:
        res: the comparison.

    Returns:
        Markdown, or "".
    """
    if res.wealth_baselines is None:
        return ""
    lines = ["| reference strategy | final wealth |", "| --- | --- |"]
    lines += [f"| {k} | {v:.4g} |" for k, v in res.wealth_baselines.items()]
    info = res.comparator_info or {}
    lines += [
        "",
        f"x* (the best CRP with x^T Sigma_t x <= rho for every t): objective "
        f"{info.get('objective', float('nan')):.10g}, max_t g_t(x*) = "
        f"{info.get('max_g', float('nan')):.3g}, barrier gap <= {info.get('gap', float('nan')):.2g}, "
        f"{info.get('newton_steps', 0)} Newton steps, {info.get('working_set', 0)} constraints in "
        f"the working set.",
    ]
    return "\n".join(lines)


#: Final wealth within this share of the uniform CRP's reads as "with the uniform CRP".
NEAR_UNIFORM = 1e-3


def wealth_findings(res: Comparison) -> str:
    """For a portfolio problem: which algorithms end with the uniform CRP's wealth (within
    ``NEAR_UNIFORM``: they did not move far from uniform weights) and which end below it (95%
    interval wholly below), said plainly; "" where there is nothing to say or no wealth.

    Args:
        res: the comparison.

    Returns:
        A "Findings: ..." paragraph, or "".
    """
    uniform = (res.wealth_baselines or {}).get("uniform CRP")
    if uniform is None or not np.isfinite(uniform) or uniform <= 0:
        return ""
    near, below = [], []
    for r in res.rows:
        w = r.get("final_wealth")
        if not w or not np.isfinite(w["mean"]):
            continue
        name = display_name(r["algorithm"])
        if abs(w["mean"] / uniform - 1.0) <= NEAR_UNIFORM:
            near.append(name)
        elif w["ci95"][1] < uniform:
            below.append(f"{name} ({w['mean']:.4g})")
    said = []
    if near:
        said.append(
            f"{', '.join(near)} end within {NEAR_UNIFORM:.1%} of the uniform CRP's wealth "
            f"({uniform:.4g}): on these data no better than rebalancing to uniform weights."
        )
    if below:
        said.append(
            f"Ending below the uniform CRP (95% interval wholly below): {', '.join(below)}."
        )
    if not said:
        said.append(
            f"no algorithm ends within {NEAR_UNIFORM:.1%} of the uniform CRP's wealth "
            f"({uniform:.4g}) or below it."
        )
    return "Findings: " + " ".join(said)


def section_markdown(res: Comparison, figure: str | None) -> str:
    """The problem's section of the results page: sizes, the results table, the wealth table
    (portfolios), the theory section and the figure with its caption.

    Args:
        res: the comparison.
        figure: the figure's path as the page links it (None: a portfolio drawn in the
            summary figure, which the section points to).

    Returns:
        Markdown.
    """
    parts = [
        f"## {res.problem}",
        "",
        f"{res.seeds} seeds, T = {res.horizon}, d = {res.dim}, {res.dtype}; total "
        f"{res.wall_s:.1f} s. Mean over seeds [95% bootstrap CI of the mean]; slopes fitted on the "
        f"mean curves.",
        "",
        table_markdown(res),
        "",
    ]
    if res.wealth_baselines is not None:
        parts += [wealth_markdown(res), ""]
        parts += [wealth_findings(res), ""] if wealth_findings(res) else []
    parts += [theory_markdown(res), ""]
    if figure is None:  # a portfolio in the summary figure
        parts += ["Its curves: the portfolio summary figure (the last section).", ""]
    else:
        parts += [f"![{res.problem}]({figure})\n\n{res.figure_caption}", ""]
    return "\n".join(parts)
