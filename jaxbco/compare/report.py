"""The comparison's files (``write``): its section of the results page (Markdown), the JSON
summary and the figure.

The tables and the sections are built in ``jaxbco.compare.sections`` and the page in
``jaxbco.compare.page``; their names are importable from here too.
"""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np

from jaxbco import problems
from jaxbco.algorithms import display_name as display_name
from jaxbco.compare.comparison import Comparison
from jaxbco.compare.page import results_page as results_page
from jaxbco.compare.sections import growth as growth
from jaxbco.compare.sections import results_table as results_table
from jaxbco.compare.sections import section_markdown as section_markdown
from jaxbco.compare.sections import slug as slug
from jaxbco.compare.sections import table_latex as table_latex
from jaxbco.compare.sections import table_markdown as table_markdown
from jaxbco.compare.sections import theory_markdown as theory_markdown
from jaxbco.compare.sections import wealth_markdown as wealth_markdown
from jaxbco.data.portfolio import problem_arrays


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


def _wealth_references(res: Comparison) -> dict:
    """Wealth curves of the best constraint-satisfying CRP x* (exactly W_t exp(R_t) of any
    seed: R_t is regret against x*) and the uniform CRP (from the problem's price relatives
    where it can be built again, else a line at its final wealth)."""
    out = {}
    rounds = np.asarray(res.rounds)
    for c in res.curves.values():
        w, r = np.asarray(c.get("wealth", np.zeros((0, 0)))), np.asarray(c["regret"])
        ok = (
            np.flatnonzero(np.all(np.isfinite(w), axis=1) & np.all(np.isfinite(r), axis=1))
            if w.size
            else []
        )
        if len(ok):
            out["best CRP x* (risk-constrained)"] = w[ok[0]] * np.exp(r[ok[0]])
            break
    try:
        R, _ = problem_arrays(problems.make(res.problem, res.dim, res.horizon), res.horizon)
        out["uniform CRP"] = np.exp(np.cumsum(np.log(R.mean(axis=1))))[rounds - 1]
    except (ValueError, KeyError, ImportError, AttributeError, TypeError):  # not rebuilt here
        if res.wealth_baselines and "uniform CRP" in res.wealth_baselines:
            out["uniform CRP (final value)"] = res.wealth_baselines["uniform CRP"]
    return out


def portfolio_set(res: Comparison) -> dict:
    """A portfolio comparison as one data set of the summary figure
    (``jaxbco.plotting.portfolio_summary``): its per-seed wealth and violation curves, the
    uniform CRP's and the risk-constrained best CRP's wealth at the same days.

    Args:
        res: a comparison on a portfolio problem (``compare``).

    Returns:
        {"name", "rounds", "curves", "uniform", "best", "seeds"}.

    Raises:
        ValueError: ``res`` is not a portfolio comparison, or its uniform CRP cannot be built.

    Example:
        >>> t, flat = np.arange(1, 258), np.zeros((2, 257))
        >>> c = {"recoo": {"regret": flat, "hard_violation": flat, "wealth": flat + 1}}
        >>> res = Comparison("portfolio:djia", 2, 257, 30, "float32", t, [], c, {}, {},
        ...                  (25, 257), wealth_baselines={"uniform CRP": 0.85})
        >>> s = portfolio_set(res)
        >>> s["name"], round(float(s["uniform"][-1]), 4)
        ('djia', 0.8492)
    """
    refs = _wealth_references(res) if res.wealth_baselines is not None else {}
    if "uniform CRP" not in refs:
        raise ValueError(f"res must be a portfolio comparison with its data, got {res.problem!r}")
    return {
        "name": res.problem.replace("portfolio:", ""),
        "rounds": np.asarray(res.rounds),
        "curves": {
            n: {"wealth": c["wealth"], "hard_violation": c["hard_violation"]}
            for n, c in res.curves.items()
            if "wealth" in c
        },
        "uniform": refs["uniform CRP"],
        "best": refs.get("best CRP x* (risk-constrained)"),
        "seeds": res.seeds,
    }


def write(res: Comparison, out: str, *, figure: bool = True) -> list:
    """Write the comparison's files: ``<slug>.md`` (its section of the results page),
    ``<slug>.json`` (every number, and the mean curves), ``<slug>.png`` and ``<slug>.pdf`` (the
    figure; its caption is kept in ``res.figure_caption`` and written under it).

    Args:
        res: the comparison (``compare``); its ``files`` and ``figure_caption`` are set.
        out: the folder (created if missing).
        figure: False: no figure of its own (a portfolio drawn in the summary figure).

    Returns:
        The paths written: the Markdown, the JSON and the PNG (the PDF lies beside it).
    """
    from jaxbco import plotting  # matplotlib: imported only when a figure is drawn

    os.makedirs(out, exist_ok=True)
    base = os.path.join(out, slug(res.problem))
    if not figure:
        res.figure_caption = ""
        with open(base + ".md", "w") as fh:
            fh.write(section_markdown(res, None))
        _write_json(res, base + ".json")
        res.files = [base + ".md", base + ".json"]
        return res.files
    wealth = (
        {n: c["wealth"] for n, c in res.curves.items() if "wealth" in c}
        if res.wealth_baselines is not None
        else None
    )
    title = f"{res.problem}: T = {res.horizon}, {res.seeds} seeds"
    fig, caption = plotting.plot_comparison(
        res.rounds,
        res.curves,
        base + ".png",
        bounds=res.bounds,
        wealth=wealth,
        title=title,
        wealth_references=_wealth_references(res) if wealth else None,
        with_caption=True,
    )
    res.figure_caption = f"Figure: {res.problem}, d = {res.dim}, {res.dtype}. {caption}"
    with open(base + ".md", "w") as fh:
        fh.write(section_markdown(res, os.path.basename(fig)))
    _write_json(res, base + ".json")
    res.files = [base + ".md", base + ".json", fig]
    return res.files


def _write_json(res: Comparison, path: str) -> None:
    summary = {k: v for k, v in dataclasses.asdict(res).items() if k not in ("curves",)}
    summary["mean_curves"] = {
        n: {m: np.nanmean(v, axis=0) for m, v in c.items()} for n, c in res.curves.items()
    }
    with open(path, "w") as fh:
        json.dump(_jsonable(summary), fh, indent=1)
