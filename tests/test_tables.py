"""Tables for a paper (issue 40, item 2): means with intervals to the digits the interval
supports, exponents only where they mean something (else the finding: bounded, changes sign,
unresolved, no power law), and the same cells rendered as Markdown and as LaTeX (booktabs)."""

import math
import re

import numpy as np
import pytest

from jaxbco.compare import findings, sections
from jaxbco.compare.comparison import Comparison
from jaxbco.compare.fits import exponent_across_horizons
from jaxbco.compare.table import Column, Estimate, Table, escape


@pytest.mark.parametrize(
    "mean, lo, hi, expect",
    [
        (-0.14968, -0.15121, -0.14823, ("-0.1497", "-0.1512", "-0.1482")),  # half 0.0015: 2 digits
        (0.035461, 0.028214, 0.043108, ("0.035", "0.028", "0.043")),  # half 0.0077: 1 digit
        (-2440.2, -2447.3, -2432.9, ("-2440", "-2447", "-2433")),
        (722.0, 718.5, 725.7, ("722", "718", "726")),
        (4.307e-05, 4.282e-05, 4.334e-05, ("4.307e-05", "4.282e-05", "4.334e-05")),
        (1.72e7, 1.70e7, 1.74e7, ("1.720e+07", "1.700e+07", "1.740e+07")),  # half 2.0e5
        (0.0, 0.0, 0.0, ("0", "0", "0")),  # a zero-width interval: the value alone
        (3.14159, math.nan, math.nan, ("3.142", "", "")),  # no interval: 4 significant digits
    ],
)
def test_estimate_digits(mean, lo, hi, expect):
    assert findings.estimate(mean, lo, hi) == expect


def test_estimate_keeps_the_interval_inside_its_rounding():
    """The rounded ends differ from the true ends by at most half the last digit, and the
    last digit is never coarser than a third of the half-width."""
    rng = np.random.default_rng(0)
    for _ in range(500):
        mean = rng.normal() * 10.0 ** rng.integers(-2, 4)
        half = abs(mean) * 10.0 ** rng.uniform(-4, 0) + 1e-12
        lo, hi = mean - half, mean + half * rng.uniform(0.5, 1.5)
        m, a, b = (float(v) for v in findings.estimate(mean, lo, hi))
        place = 10.0 ** findings._decimal_place(max(hi - mean, mean - lo))
        assert place <= max(hi - mean, mean - lo) / 1.0 + 1e-300
        for shown, true in ((m, mean), (a, lo), (b, hi)):
            assert abs(shown - true) <= 0.5 * place * (1 + 1e-9) + 1e-12 * abs(true)


T = np.arange(1.0, 1001.0)


@pytest.mark.parametrize(
    "curve, kind",
    [
        (2.0 * T**0.75, "power law"),
        (5.0 + 0.0 * T, "bounded"),
        (np.log(T) + 3.0, "bounded"),  # slope of log t on [100, 1000] is < 0.15
        (np.sin(T / 50.0) * T, "changes sign"),
        (-T, "≤ 0"),
        (0.0 * T, "0"),
        (np.where(T < 400, 0.0, T - 400), "0 on part"),  # no violation until round 400
        (100.0 / T, "decreasing"),
        (T**0.5 * (1.0 + 0.9 * np.sin(T / 15.0)), "no power law"),
    ],
)
def test_in_run_findings(curve, kind):
    found = findings.in_run(T, curve, 100, 1000)
    assert found.kind == kind, (found, kind)
    if kind == "power law":
        assert found.text() == "0.75"
    else:
        assert not re.fullmatch(r"-?\d+\.\d+", found.text())  # no slope printed


def _ladder(exponent, seeds, cv, rng, shift=0.0):
    horizons = np.asarray([250, 500, 1000, 2000])
    means = horizons.astype(float) ** exponent + shift
    noise = np.exp(cv * rng.standard_normal((horizons.size, seeds)) - cv**2 / 2)  # mean 1, > 0
    finals = means[:, None] * noise
    return dict(exponent_across_horizons(horizons, finals, resamples=400), horizons=horizons)


def test_across_horizons_findings():
    rng = np.random.default_rng(1)
    clear = findings.across_horizons(_ladder(0.5, 1000, 0.5, rng))
    assert clear.kind == "power law" and abs(clear.exponent - 0.5) < 0.05
    lo, hi = clear.ci95
    assert lo < 0.5 < hi and hi - lo < 2 * findings.RESOLVED
    assert re.fullmatch(r"0\.\d\d \[0\.\d\d, 0\.\d\d\]", clear.text())
    flat = findings.across_horizons(_ladder(0.0, 1000, 0.5, rng))
    assert flat.kind == "bounded" and flat.text().startswith("bounded [")
    noisy = findings.across_horizons(_ladder(0.5, 8, 2.0, rng))  # few seeds, huge spread
    assert noisy.kind == "unresolved"
    crossing = findings.across_horizons(_ladder(1.0, 64, 0.1, rng, shift=-600.0))  # -350 .. 1400
    assert crossing.kind == "changes sign" and crossing.text() == "changes sign"
    kinked = findings.across_horizons(
        {
            "exponent": 0.5,
            "ci95": [0.45, 0.55],
            "means": [1.0, 10.0, 1.2, 11.0],
            "horizons": [250, 500, 1000, 2000],
        }
    )
    assert kinked.kind == "no power law"


def _table():
    cols = [
        Column("algorithm", "Algorithm", "l"),
        Column("R_T / T", "$R_T/T$"),
        Column("V_T", "$V_T$"),
        Column("note", "Note", "l"),
    ]
    rows = [
        ["rectified_bco", Estimate(-0.14968, -0.15121, -0.14823), Estimate(0.0, 0.0, 0.0), "≤ 0"],
        [
            "flaxman-bgd (g known in advance)",
            Estimate(4.307e-05, 4.282e-05, 4.334e-05),
            Estimate(math.nan),
            "10% & more",
        ],
    ]
    return Table(cols, rows)


def test_markdown_and_latex_render_the_same_cells():
    table = _table()
    md = table.markdown().splitlines()
    assert md[0] == "| algorithm | R_T / T | V_T | note |" and len(md) == 4
    assert md[2] == (
        "| rectified_bco | -0.1497 [-0.1512, -0.1482] | 0 (identical across seeds) | ≤ 0 |"
    )
    assert all(line.count("|") == 5 for line in md)
    tex = table.latex(caption="A 95% interval & more", label="tab:x")
    lines = tex.splitlines()
    x = ">{\\raggedright\\arraybackslash\\hspace{0pt}}X"
    assert lines[:5] == [
        "\\begin{table}[t]",
        "\\centering",
        "\\footnotesize",
        "\\setlength{\\tabcolsep}{3pt}",
        f"\\begin{{tabularx}}{{\\linewidth}}{{@{{}}{x}rr{x}@{{}}}}",
    ]
    assert "\\toprule" in lines and "\\midrule" in lines and "\\bottomrule" in lines
    stack = "\\begin{tabular}[t]{@{}r@{}}"
    row = lines[lines.index("\\midrule") + 1]
    assert row == (
        f"rectified\\_bco & {stack}$-0.1497$\\\\{{\\scriptsize $[-0.1512,$}}\\\\"
        f"{{\\scriptsize $-0.1482]$}}\\end{{tabular}} & {stack}$0$\\\\{{\\scriptsize (identical}}\\\\"
        f"{{\\scriptsize across seeds)}}\\end{{tabular}} & $\\le$ 0 \\\\"
    )
    row = lines[lines.index("\\midrule") + 2]
    # a long interval: one end a line, so the column stays narrow
    assert (
        f"{stack}$4.307\\times10^{{-5}}$\\\\{{\\scriptsize $[4.282\\times10^{{-5}},$}}\\\\"
        f"{{\\scriptsize $4.334\\times10^{{-5}}]$}}\\end{{tabular}}" in row
    )
    assert "10\\% \\& more" in row and " & -- & " in row
    assert "\\caption{A 95\\% interval \\& more}" in tex and "\\label{tab:x}" in tex
    # every row has one cell per column; braces and maths delimiters balance
    body = lines[lines.index("\\midrule") + 1 : lines.index("\\bottomrule")]
    for line in body:
        assert re.sub(r"\\&", "", line).count(" & ") == 3
        assert line.count("{") == line.count("}")
        assert re.sub(r"\\\$", "", line).count("$") % 2 == 0
    assert table.latex().startswith("\\begin{tabularx}")  # bare, without caption or label


@pytest.mark.parametrize(
    "mean, lo, hi, eps, shown",
    [
        # docs/results.md's recoo row on portfolio:djia: every seed the same, the interval's
        # width and the mean's offset from it only the float64 mean's round-off
        (
            0.00173163837398455553,
            0.00173163837398455532,
            0.00173163837398455532,
            None,
            "0.00173164",
        ),
        (0.83365477743041572, 0.83365477743041549, 0.83365477743041549, None, "0.833655"),
        (-116.8123412, -116.8123412, -116.8123412, None, "-116.812"),
        (0.0, 0.0, 0.0, None, "0"),
        # float64 data resolve 15 digits; float32's ulp-wide interval is no round-off there
        (
            0.83365477743041572,
            0.83365477743041549,
            0.83365477743041549,
            2.2e-16,
            "0.833654777430416",
        ),
    ],
)
def test_a_round_off_interval_prints_as_identical_across_seeds(mean, lo, hi, eps, shown):
    """An interval only round-off wide (issue 55: 20 digits, the mean outside its own
    interval) prints as the value to its data's digits, "(identical across seeds)", in
    Markdown and LaTeX alike; an interval a few ulps wider keeps its brackets."""
    cell = Estimate(mean, lo, hi) if eps is None else Estimate(mean, lo, hi, eps)
    table = Table([Column("x", "x")], [[cell]])
    assert table.markdown().splitlines()[2] == f"| {shown} (identical across seeds) |"
    assert (
        f"${shown}$\\\\{{\\scriptsize (identical}}\\\\{{\\scriptsize across seeds)}}"
        in table.latex()
    )
    assert findings.identical(mean, lo, hi, cell.eps)
    if mean != 0:
        wide = abs(mean) * 64 * cell.eps  # 64 ulps: resolved, not round-off
        assert not findings.identical(mean, mean - wide, mean + wide, cell.eps)
        assert (
            "["
            in Table(
                [Column("x", "x")], [[Estimate(mean, mean - wide, mean + wide, cell.eps)]]
            ).markdown()
        )


def test_a_label_from_any_name_is_one_latex_can_take():
    """``\\label`` built from a problem's name with %, #, braces: the user's build does not
    break (issue 57: the caption was escaped, the label not)."""
    tex = _table().latex(caption="c", label="tab:my%prob#1{x}\\y z")
    (line,) = [ln for ln in tex.splitlines() if ln.startswith("\\label")]
    assert line == "\\label{tab:my-prob-1-x--y-z}"


def test_escape():
    assert escape("a_b & 50% #1 {x} ~ ^") == "a\\_b \\& 50\\% \\#1 \\{x\\} \\textasciitilde{} \\^{}"


def test_orders_typeset_as_maths_in_latex():
    from jaxbco.compare.table import tex_text

    assert tex_text("T^0.5 (exponent 0.5)") == "$T^{0.5}$ (exponent 0.5)"
    assert tex_text("hard T^(1-c/2)") == "hard $T^{1-c/2}$"
    assert tex_text("T^max(c,1-c) [full information]") == "$T^{\\max(c,1-c)}$ [full information]"
    assert tex_text("T^(1/2) (log T)") == "$T^{1/2}$ ($\\log T$)"
    assert tex_text("x_1 & 50%") == "x\\_1 \\& 50\\%"  # the rest escaped


def test_portfolio_findings_name_who_ends_with_or_below_the_uniform_crp():
    """Issue 55 item 3: the six portfolio baselines ended within 0.1% of the uniform CRP's
    wealth and rectified-bco below it, on every data set, without a word.  Numbers from
    docs/results/portfolio-djia.json."""

    def row(name, mean, lo, hi):
        return {"algorithm": name, "final_wealth": {"mean": mean, "ci95": [lo, hi]}}

    rows = [
        row("rectified-bco", 0.82996, 0.82428, 0.83532),
        row("flaxman-bgd", 0.84925, 0.84896, 0.84954),
        row("recoo", 0.83366, 0.83366, 0.83366),
        row("mahdavi-pd", 0.9, 0.85, 0.95),  # neither near nor below
    ]
    res = Comparison(
        "portfolio:djia",
        256,
        257,
        30,
        "float32",
        np.arange(1, 258),
        rows,
        {},
        {},
        {},
        (25, 257),
        wealth_baselines={"uniform CRP": 0.84924},
    )
    text = sections.wealth_findings(res)
    near, below = text.split("Ending below")
    assert "flaxman-bgd (g known in advance) end within 0.1% of the uniform CRP" in near
    assert "rectified-bco (0.83)" in below and "recoo (0.8337)" in below
    assert "mahdavi" not in text
    res.wealth_baselines = None
    assert sections.wealth_findings(res) == ""


def _stored(path):
    """A comparison rebuilt from its stored JSON (docs/results/*.json; mean curves as one seed)."""
    import json

    d = json.loads(path.read_text())
    keys = ("problem", "seeds", "horizon", "dim", "dtype", "rows", "constants", "bounds")
    keys += ("fit_range", "wealth_baselines", "comparator_info")
    curves = {
        a: {m: np.asarray(v)[None] for m, v in c.items()} for a, c in d["mean_curves"].items()
    }
    return Comparison(rounds=np.asarray(d["rounds"]), curves=curves, **{k: d[k] for k in keys})


def _long_ladder():
    """A ladder of every registered algorithm with the widest cells the page prints."""
    from jaxbco.algorithms import registry
    from jaxbco.compare.ladder import Ladder

    wide = {"exponent": 0.91, "ci95": [-0.62, 4.81], "means": [1, 2]}
    fit = {"exponent": 0.96, "ci95": [0.95, 0.97], "means": [1, 2]}
    rows = [
        {"algorithm": n, "regret": fit, "hard_violation": wide, "soft_violation": fit}
        for n in registry.names()
    ]
    theory = {"regret": 0.5, "hard_violation": 0.5, "regret_order": "sqrt(T log T)"}
    return Ladder(
        "strongly-convex-time-varying",
        1000,
        [250, 500, 1000, 2000],
        rows,
        theory | {"violation_order": "sqrt(T log T)"},
    )


@pytest.mark.skipif(__import__("shutil").which("pdflatex") is None, reason="no pdflatex here")
def test_the_latex_tables_fit_the_text_width(tmp_path):
    """Issue 55 item 6: every results table the page ships (docs/results/*.json) and a ladder
    of every algorithm compile with pdflatex inside a 5.5 in text width, with no overfull box
    (7-8 columns of long names in ``l`` columns overflowed by 344-794 pt)."""
    import pathlib
    import subprocess

    from jaxbco.compare.ladder import ladder_table

    stored = sorted((pathlib.Path(__file__).parents[1] / "docs" / "results").glob("*.json"))
    assert stored
    tables = [sections.table_latex(_stored(p)) for p in stored]
    tables.append(ladder_table(_long_ladder()).latex(caption="ladder", label="tab:ladder"))
    (tmp_path / "tables.tex").write_text("\n".join(tables))
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs,array,tabularx}\n"
        "\\usepackage[T1]{fontenc}\n\\setlength{\\textwidth}{5.5in}\n"
        "\\begin{document}\n\\input{tables.tex}\n\\end{document}\n"
    )
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert run.returncode == 0, log[-2000:]
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox.*", log)
    assert (tmp_path / "doc.pdf").exists()


def test_a_paper_table_says_a_column_of_one_value_in_its_caption():
    """A text column with one value in every row (failed 0, certified on all seeds, a
    portfolio's regret "not a rate") is said once in the caption, not printed per row."""
    rows = [
        {
            "algorithm": name,
            "regret_over_T": {"mean": 0.1, "ci95": [0.09, 0.11]},
            "hard_violation": {"mean": k, "ci95": [k, k + 0.1]},
            "soft_violation": {"mean": 1.0, "ci95": [0.9, 1.1]},
            "failed_seeds": 0,
        }
        for k, name in enumerate(("rectified-bco", "recoo"))
    ]
    t = np.arange(1, 101, dtype=float)
    curves = {
        r["algorithm"]: {"regret": t[None] ** (0.5 + i / 4), "hard_violation": t[None] * (i + 1)}
        for i, r in enumerate(rows)
    }
    res = Comparison("p", 4, 100, 2, "float32", t, rows, curves, {}, {}, (10, 100))
    tex = sections.table_latex(res)
    assert "Every row: V\\_t in run 1.00; failed 0; certified x* all seeds; prox all seeds." in tex
    header = [ln for ln in tex.splitlines() if ln.startswith("Algorithm")][0]
    assert "Failed" not in header and "Certified" not in header
    assert "$R_t$ growth" in header and "$V_t$ growth" not in header


def test_the_portfolio_summary_says_who_is_the_uniform_crp_everywhere():
    """Issue 55 item 3 on all data sets at once: the baselines that end within 0.1% of the
    uniform CRP on every data set are named once; who ends below it, where and by how much."""
    from jaxbco.compare.portfolios import summary_findings, summary_markdown

    def res(problem, uniform, finals):
        rows = [
            {"algorithm": a, "final_wealth": {"mean": w, "ci95": [w - 1e-3, w + 1e-3]}}
            for a, w in finals.items()
        ]
        return Comparison(
            problem, 8, 100, 5, "float32", np.arange(1, 101), rows, {}, {}, {}, (10, 100),
            wealth_baselines={"uniform CRP": uniform},
        )  # fmt: skip

    sets = [
        res("portfolio:djia", 0.849, {"rectified-bco": 0.830, "mahdavi-pd": 0.8492, "recoo": 0.9}),
        res("portfolio:msci", 0.788, {"rectified-bco": 0.758, "mahdavi-pd": 0.7881, "recoo": 0.7}),
    ]
    text = summary_findings(sets)
    assert "mahdavi-pd ends within 0.1% of the uniform CRP's wealth on all 2 data sets" in text
    assert "rectified-bco ends below the uniform CRP (95% interval wholly below) on 2 of 2" in text
    assert "djia 0.83 vs 0.849" in text and "recoo ends below" in text and "msci 0.7 vs" in text
    assert summary_findings(sets[:1]) == ""
    page = summary_markdown(sets, "results/portfolios.png", "Lines: mean over 8 seeds.")
    assert "![the portfolio data sets](results/portfolios.png)" in page and text in page


def test_a_portfolio_regret_slope_is_not_printed_as_a_rate():
    """Issue 55: within-run portfolio slopes of 1.15-1.22 were printed as rates, though R_t is
    measured against x* of all T days; and d = 36 in the header against d = 35 in the bound
    constants went unexplained."""
    t = np.arange(1, 101, dtype=float)
    rows = [{"algorithm": "rectified-bco"}]
    curves = {"rectified-bco": {"regret": t[None] ** 1.2, "hard_violation": t[None] * 0}}
    constants = dict(F=1.0, F_from="loss", G=1.0, G_from="g", D=1.4, d=4, sigma=None, c=0.5)
    constants |= dict(eps=0.1, fixed_g=False, strongly_convex=False)
    bounds = dict(regret=[1e3], hard_violation=[1e4], regret_order="T^0.5", regret_exponent=0.5)
    bounds |= dict(violation_order="T^0.75", violation_exponent=0.75)
    res = Comparison(
        "portfolio:djia", 4, 100, 5, "float32", t, rows, curves, constants, bounds, (10, 100),
        wealth_baselines={"uniform CRP": 1.0},
    )  # fmt: skip
    assert sections.growth(res, "rectified-bco", "regret").text() == sections.NOT_A_RATE
    text = sections.theory_markdown(res)
    assert "d = 4 (the dimension of X's affine hull in R^5)" in text
    assert "best CRP over all T days" in text and "1.20" not in text
    res.wealth_baselines = None
    assert sections.growth(res, "rectified-bco", "regret").text() == "1.20"


def test_ladder_findings_name_baselines_above_their_sources_and_above_one():
    """Issue 55 item 3: exponents 1.75-1.76 (> 1) and baselines above their sources' orders
    were printed without a word."""
    from jaxbco.compare.ladder import Ladder, theory_findings

    def fit(a, lo, hi):
        return {"exponent": a, "ci95": [lo, hi], "means": [1.0, 2.0]}

    rows = [
        {"algorithm": "rectified-bco", "regret": fit(0.5, 0.45, 0.55),
         "hard_violation": fit(0.0, -0.02, 0.02)},
        {"algorithm": "mahdavi-pd", "regret": fit(0.80, 0.79, 0.81),
         "hard_violation": fit(1.75, 1.74, 1.76)},
        {"algorithm": "yu-neely", "regret": fit(0.45, 0.44, 0.46),
         "hard_violation": fit(0.27, 0.26, 0.28)},
    ]  # fmt: skip
    text = " ".join(theory_findings(Ladder("p", 10, [100, 200], rows, {"regret": 0.5})))
    assert "mahdavi-pd regret 0.80 [0.79, 0.81] against 0.5" in text
    assert "Exponents above 1: mahdavi-pd hard-violation 1.75 [1.74, 1.76]" in text
    assert "rectified-bco" not in text and "yu-neely" not in text  # inside their bounds
