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
    assert lines[:4] == ["\\begin{table}[t]", "\\centering", "\\small", "\\begin{tabular}{lrrl}"]
    assert "\\toprule" in lines and "\\midrule" in lines and "\\bottomrule" in lines
    row = lines[lines.index("\\midrule") + 1]
    assert row == (
        "rectified\\_bco & $-0.1497$ {\\scriptsize $[-0.1512, -0.1482]$} & "
        "$0$ {\\scriptsize (identical across seeds)} & $\\le$ 0 \\\\"
    )
    row = lines[lines.index("\\midrule") + 2]
    assert (
        "$4.307\\times10^{-5}$ {\\scriptsize $[4.282\\times10^{-5}, 4.334\\times10^{-5}]$}" in row
    )
    assert "10\\% \\& more" in row and " & -- & " in row
    assert "\\caption{A 95\\% interval \\& more}" in tex and "\\label{tab:x}" in tex
    # every row has one cell per column; braces and maths delimiters balance
    body = lines[lines.index("\\midrule") + 1 : lines.index("\\bottomrule")]
    for line in body:
        assert re.sub(r"\\&", "", line).count(" & ") == 3
        assert line.count("{") == line.count("}")
        assert re.sub(r"\\\$", "", line).count("$") % 2 == 0
    assert table.latex().startswith("\\begin{tabular}")  # bare, without caption or label


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
    assert f"${shown}$ {{\\scriptsize (identical across seeds)}}" in table.latex()
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
