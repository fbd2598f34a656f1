"""The portfolio data sets together: the results page's last study section, the summary figure
of every real-data set (``jaxbco.plotting.portfolio_summary``) and what it shows, said plainly:
who ends with the uniform CRP's wealth on every data set, and who ends below it where.
"""

from __future__ import annotations

import numpy as np

from jaxbco.algorithms import display_name
from jaxbco.compare.comparison import Comparison
from jaxbco.compare.sections import NEAR_UNIFORM


def _final(res: Comparison):
    """algorithm -> (mean final wealth, its 95% interval's upper end), and the uniform CRP's."""
    uniform = (res.wealth_baselines or {}).get("uniform CRP", np.nan)
    rows = {
        r["algorithm"]: (r["final_wealth"]["mean"], r["final_wealth"]["ci95"][1])
        for r in res.rows
        if r.get("final_wealth") and np.isfinite(r["final_wealth"]["mean"])
    }
    return rows, float(uniform)


def _told_apart(a: float, b: float) -> tuple:
    """Two numbers to the fewest significant digits (3 at least) that tell them apart."""
    for digits in range(3, 10):
        x, y = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if x != y:
            break
    return x, y


def summary_findings(comparisons: list) -> str:
    """What the portfolio data sets show together: the algorithms that end within
    ``NEAR_UNIFORM`` of the uniform CRP's wealth on every data set, and for each algorithm that
    ends below it (95% interval wholly below) on some, where and how far.

    Args:
        comparisons: portfolio comparisons (``compare``), one per data set.

    Returns:
        A "Findings: ..." paragraph, or "" with fewer than two data sets.

    Example:
        >>> from jaxbco.compare.comparison import Comparison
        >>> row = lambda a, w: {"algorithm": a, "final_wealth": {"mean": w, "ci95": [w, w]}}
        >>> res = [Comparison(p, 4, 10, 2, "float32", np.arange(1, 11),
        ...        [row("recoo", 1.0), row("rectified-bco", 0.9)], {}, {}, {}, (1, 10),
        ...        wealth_baselines={"uniform CRP": 1.0}) for p in ("a", "b")]
        >>> summary_findings(res)[:46]
        'Findings: recoo ends within 0.1% of the unifor'
    """
    if len(comparisons) < 2:
        return ""
    finals = [(res.problem, *_final(res)) for res in comparisons]
    names = list(dict.fromkeys(n for _, rows, _ in finals for n in rows))
    near_all, below = [], {}
    for n in names:
        near = [
            abs(rows[n][0] / u - 1.0) <= NEAR_UNIFORM
            for _, rows, u in finals
            if n in rows and np.isfinite(u) and u > 0
        ]
        if near and all(near) and len(near) == len(finals):
            near_all.append(display_name(n))
        under = [
            f"{p.replace('portfolio:', '')} {' vs '.join(_told_apart(rows[n][0], u))}"
            for p, rows, u in finals
            if n in rows and rows[n][1] < u and abs(rows[n][0] / u - 1.0) > NEAR_UNIFORM
        ]
        if under:
            below[display_name(n)] = under
    said = []
    k = len(finals)
    if near_all:
        verb = "ends" if len(near_all) == 1 else "end"
        said.append(
            f"{', '.join(near_all)} {verb} within {NEAR_UNIFORM:.1%} of the uniform CRP's "
            f"wealth on all {k} data sets: with their default step sizes they move little "
            f"from the uniform weights x_1 they start from, so on these data they are, to "
            f"within {NEAR_UNIFORM:.1%}, the uniform CRP."
        )
    for n, where in below.items():
        said.append(
            f"{n} ends below the uniform CRP (95% interval wholly below) on {len(where)} of {k} "
            f"({'; '.join(where)})."
        )
    return "Findings: " + " ".join(said) if said else ""


def summary_markdown(comparisons: list, figure: str, caption: str) -> str:
    """The results page's section on the portfolio data sets together: the summary figure with
    its caption and ``summary_findings``.

    Args:
        comparisons: portfolio comparisons, one per data set.
        figure: the summary figure's path as the page links it.
        caption: the figure's caption (``jaxbco.plotting.caption``).

    Returns:
        Markdown.

    Example:
        >>> summary_markdown([], "results/portfolios.png", "Lines: means.")[:38]
        '## The portfolio data sets together\\n\\n!'
    """
    names = ", ".join(res.problem for res in comparisons)
    parts = [
        "## The portfolio data sets together",
        "",
        f"![the portfolio data sets]({figure})",
        "",
        f"Figure: {names}; wealth relative to the uniform CRP and cumulative hard violation of "
        f"the risk constraint against the trading day. {caption}",
        "",
    ]
    text = summary_findings(comparisons)
    return "\n".join(parts + ([text, ""] if text else []))
