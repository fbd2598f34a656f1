"""The one figure style (``jaxbco.plotting``), checked on every figure kind: the legend outside
the panels and at most a fifth of the figure, every series its own (colour, line style), no
yellow, no empty panel, y labels on every panel, a PDF beside every PNG, y axes at the data
(symlog only where values change sign, no crowded 0), bands that mean what the caption says,
coinciding series merged, the slope of the theorem that applies.  Synthetic curves: no JAX
program is compiled here."""

import json
import pathlib

import numpy as np
import pytest
import xarray as xr
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.text import Text

from jaxbco.algorithms import registry
from jaxbco.plotting import comparison, dataset, panels, scales, style
from jaxbco.plotting.dataset import METRIC_LABELS

ROOT = pathlib.Path(__file__).resolve().parents[1]
T = np.unique(np.geomspace(1, 1000, 40).round())
METRICS = ("regret", "hard_violation", "soft_violation")
LABELS = {m: METRIC_LABELS[m] for m in METRICS}
BOUNDS = dict(
    regret=3e3 * np.sqrt(T),
    hard_violation=np.full(T.shape, 5e4),
    regret_exponent=0.5,
    violation_exponent=0.0,
    regret_order="T^0.5",
    violation_order="O(1)",
    label="Thm. 1 bound (rectified-bco)",
)


def check(fig, panels_expected=None):
    """The layout checks every figure must pass; returns the legend's texts."""
    FigureCanvasAgg(fig).draw()
    r = fig.canvas.get_renderer()
    axes = [ax for ax in fig.axes if ax.get_visible()]
    if panels_expected is not None:
        assert len(axes) == panels_expected
    area = fig.bbox.width * fig.bbox.height
    for legend in fig.legends:
        box = legend.get_window_extent(r)
        assert box.width * box.height <= 0.2 * area, "legend over a fifth of the figure"
        for ax in axes:
            assert not box.overlaps(ax.get_window_extent(r)), "legend over a panel"
    seen = set()
    for ax in axes:
        assert ax.get_ylabel(), "every panel has a y label"
        lines = [ln for ln in ax.get_lines() if ln.get_label() and ln.get_alpha() is None]
        assert lines or ax.texts, "empty panel"
    for legend in fig.legends:
        for h in legend.legend_handles:
            if hasattr(h, "get_linestyle") and hasattr(h, "get_marker"):
                key = (to_hex(h.get_color()), str(h._unscaled_dash_pattern), h.get_marker())
                assert key not in seen, f"two series drawn alike: {key}"
                seen.add(key)
                assert to_hex(h.get_color()) not in style.UNSEEN, "yellow on white"
    scale = min(1.0, style.PRINT_WIDTH / fig.get_figwidth())  # printed at the text width
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    small = [(t.get_text(), t.get_fontsize()) for t in texts if t.get_fontsize() * scale < 8.0]
    assert not small, f"text below 8 pt at {style.PRINT_WIDTH} in: {small[:3]}"
    titles = [ax.title.get_window_extent(r) for ax in axes if ax.get_title()]
    assert not any(a.overlaps(b) for i, a in enumerate(titles) for b in titles[i + 1 :])
    if fig._suptitle is not None:
        box, title = fig.bbox, fig._suptitle.get_window_extent(r)
        assert "\n" not in fig._suptitle.get_text() and title.x0 >= box.x0 and title.x1 <= box.x1
    return [t.get_text().replace("\n", " ") for lg in fig.legends for t in lg.get_texts()]


def _curves(names, seeds=12, k=T.size, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for i, n in enumerate(names):
        regret = (1 + 0.4 * i) * np.sqrt(T[:k]) * rng.uniform(0.8, 1.2, (seeds, 1)) - 3.0
        hard = np.where(T[:k] > 50, 1e-2 * (T[:k] - 50) * (i % 3), 0.0) * rng.uniform(
            0.5, 1.5, (seeds, 1)
        )
        out[n] = {"regret": regret, "hard_violation": hard}
    return out


def test_a_comparison_of_few_series_has_bands_guides_and_its_bound_named():
    names = registry.names()[:3]
    fig = comparison.comparison_figure(T, _curves(names), bounds=BOUNDS, title="problem: T = 1000")
    texts = check(fig, panels_expected=2)
    assert scales.BAND_LABELS["ci"] in texts
    text = panels.caption(fig)
    assert "95% CI of the mean" in text and "lies above the hard violation panel" in text
    assert "Thm. 1 bound" not in " ".join(texts[:3])  # off the panel: in the caption only
    guides = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any("t^{1/2}" in g and "Thm. 1" in g for g in guides)
    assert fig.axes[0].get_yscale() == "linear"  # regret starts below zero: no cliff
    assert fig.axes[1].get_yscale() in ("log", "linear")  # V_t >= 0: never symlog


def test_many_series_become_small_multiples_and_twins_merge(tmp_path):
    names = registry.names()
    curves = _curves(names)
    curves["flaxman-bgd-xonly"] = curves["flaxman-bgd"]  # the same line twice
    wealth = {
        n: np.exp(np.cumsum(np.full((12, T.size), 1e-4 * i), axis=1)) for i, n in enumerate(names)
    }
    wealth["flaxman-bgd-xonly"] = wealth["flaxman-bgd"]
    refs = {"uniform CRP": np.linspace(1, 1.05, T.size), "best CRP x*": 1.1}
    path, text = comparison.plot_comparison(
        T,
        curves,
        tmp_path / "many.png",
        bounds=BOUNDS,
        wealth=wealth,
        wealth_references=refs,
        title="many: T = 1000",
        with_caption=True,
    )
    assert (tmp_path / "many.png").exists() and (tmp_path / "many.pdf").exists()
    fig = comparison.comparison_figure(
        T, curves, bounds=BOUNDS, wealth=wealth, wealth_references=refs
    )
    texts = check(fig, panels_expected=9)  # 3 metrics x 3 groups
    assert "flaxman-bgd (g known in advance) = flaxman-bgd-xonly" in texts
    assert "coincide" in text and "Columns:" in text
    assert {"uniform CRP", "best CRP x*"} <= set(texts)
    wealth_ax = fig.axes[6]
    assert wealth_ax.get_xscale() == "linear" and wealth_ax.get_xlabel() == "day $t$"
    colours = [to_hex(c) for c, _ in style.assign(names).values()]
    assert len(set(colours)) == len(colours)
    assert all(
        style.distance(a, b) >= style.MIN_DISTANCE
        for i, a in enumerate(colours)
        for b in colours[i + 1 :]
    )


def test_a_violation_that_is_zero_everywhere_drops_its_panel():
    curves = {
        n: {"regret": c["regret"], "hard_violation": np.zeros_like(c["hard_violation"])}
        for n, c in _curves(registry.names()[:2]).items()
    }
    fig = comparison.comparison_figure(T, curves)
    check(fig, panels_expected=1)
    assert "panel left out" in panels.caption(fig)


def _ds(cs=(0.25, 0.5), config=None, seeds=6):
    rng = np.random.default_rng(1)
    shape = (len(cs), seeds, T.size)
    data = {
        "regret": np.sqrt(T) * rng.uniform(0.5, 1.5, shape),
        "hard_violation": np.log1p(T) * rng.uniform(0.5, 1.5, shape),
        "soft_violation": -T * rng.uniform(0.5, 1.5, shape),
    }
    ds = xr.Dataset(
        {m: (("setting", "seed", "round"), v) for m, v in data.items()}
        | {"failed": (("setting", "seed"), np.zeros(shape[:2], bool))},
        coords={"round": T, "c": ("setting", list(cs)), "algorithm": "rectified-bco"},
    )
    ds.attrs["config_json"] = json.dumps(config or {})
    return ds


@pytest.mark.parametrize("constraint,exp", [("fixed", "O(1)"), ("varying", "t^{7/8}")])
def test_dataset_figure_draws_the_slope_that_applies_one_dash_per_c(constraint, exp):
    fig = dataset.dataset_figure(_ds(), metrics=METRICS, constraint=constraint, title="a run")
    check(fig, panels_expected=3)
    labels = {ax: [t.get_text() for t in ax.texts] for ax in fig.axes}
    viol = " ".join(labels[fig.axes[1]])
    assert exp in viol and ("Thm. 2" in viol) == (constraint == "varying")
    assert "Thm. 2" not in " ".join(labels[fig.axes[0]])  # regret: Theorem 1's exponent
    dashes = [
        {str(ln._unscaled_dash_pattern) for ln in ax.get_lines() if ln.get_zorder() == 4}
        for ax in fig.axes[:2]
    ]
    assert dashes[0] == dashes[1] and len(dashes[0]) == 2  # one dash per c, the same in both


def test_dataset_figure_without_a_known_constraint_leaves_the_violation_slope_out():
    fig = dataset.dataset_figure(_ds(cs=(0.5,)), metrics=METRICS, band="quantiles")
    texts = check(fig)
    assert not fig.axes[1].texts and fig.axes[0].texts
    assert scales.BAND_LABELS["quantiles"] in texts


def test_plot_dataset_writes_png_and_pdf(tmp_path):
    files = dataset.plot_dataset(_ds(), tmp_path / "d.png", constraint="fixed")
    assert [pathlib.Path(f).exists() for f in files] == [True, True]
    assert files[1].endswith(".pdf") and pathlib.Path(files[1]).read_bytes()[:5] == b"%PDF-"


def test_twelve_series_in_one_panel_are_told_apart():
    series = [
        panels.Series(
            f"setting {k}",
            c,
            ls,
            {"regret": np.sqrt(T) * (k + 1) * np.ones((3, 1))},
            style.MARKERS[k],
        )
        for k, (c, ls) in enumerate(panels.styles(12))
    ]
    fig = panels.build(T, series, ["regret"], {"regret": LABELS["regret"]})
    texts = check(fig)
    assert texts[:12] == [s.label for s in series]
    assert "Bands are left out" in panels.caption(fig)


def test_a_panel_without_finite_values_says_so(tmp_path):
    bad = panels.Series(
        "all failed", "#000000", "-", {m: np.full((0, T.size), np.nan) for m in METRICS}
    )
    files = panels.draw(tmp_path / "empty", T, [bad], METRICS, LABELS)
    assert [p.endswith(s) for p, s in zip(files, (".png", ".pdf"))] == [True, True]
    fig = panels.build(T, [bad], METRICS, LABELS)
    assert "every seed failed" in fig.axes[0].texts[0].get_text()


def test_scales_linear_where_the_sign_changes_symlog_only_below_zero_no_crowded_zero():
    """A sign change is drawn on a linear axis (issue 55: on symmetric-log a crossing of the
    linear range became a cliff of decades); values <= 0 over decades on a mirrored
    symmetric-log axis whose ticks do not crowd 0."""
    ax = Figure().subplots()
    for values in ([-50.0, 0.0, 3e3], [-0.05, 0.05, 1e-3], [-1e3, 1e2]):
        assert scales.scale_y(ax, [np.array(values)]) == "linear", values
        low, high = ax.get_ylim()
        assert low < min(values) and high > max(values)
    ax = Figure().subplots()
    assert scales.scale_y(ax, [np.array([-1.0, -10.0, -3e3, 0.0])]) == "symlog"
    ticks = [t for t in ax.get_yticks() if t != 0]
    lin = ax.yaxis.get_transform().linthresh
    assert all(abs(t) >= 10 * lin for t in ticks) and not ax.yaxis.get_minor_locator()()
    for values, kind in (
        ([0.0, 1e-3, 10.0], "log"),
        ([0.0, 1.0, 2.0], "linear"),
        ([0.6, 1.3], "linear"),
        ([1.0, 1e4], "log"),
    ):
        assert scales.scale_y(Figure().subplots(), [np.array(values)]) == kind, values


def test_bands_are_the_t_interval_of_the_mean_or_the_quantiles():
    stats = pytest.importorskip("scipy.stats")
    v = np.random.default_rng(0).normal(2.0, 1.0, (9, 4))
    mean, lo, hi = scales.summary(v)
    half = stats.t.ppf(0.975, 8) * v.std(axis=0, ddof=1) / 3
    np.testing.assert_allclose(hi - mean, half, rtol=1e-4)
    np.testing.assert_allclose(scales.summary(v, "quantiles")[1], np.quantile(v, 0.1, axis=0))
    for dof in (1, 2, 5, 30):
        assert scales.t_quantile(0.975, dof) == pytest.approx(stats.t.ppf(0.975, dof), rel=2e-3)
    assert scales.summary(np.abs(v) * 0 + np.array([0, 0, 0, 1.0]))[1].min() >= 0  # >= 0 stays


def test_benchmark_figures_from_the_records_with_pdfs(tmp_path):
    from benchmarks import kernel_plot, scaling

    rows = kernel_plot.load([str(ROOT / "benchmarks/gpu/h200-kernel-run7.jsonl")])
    files = kernel_plot.plot(rows, str(tmp_path / "kernel.png"))
    records = [
        json.loads(x) for x in (ROOT / "benchmarks/figures/scaling.jsonl").read_text().splitlines()
    ]
    files += scaling.plot(records, str(tmp_path / "scaling.png"))
    assert all(pathlib.Path(f).exists() for f in files) and len(files) == 4
    for png in (ROOT / "benchmarks/figures").glob("*.png"):
        assert png.with_suffix(".pdf").exists(), png


def test_package_and_docs_figures_have_a_pdf_beside_each_png():
    for folder in ("docs/results", "docs/figures", "benchmarks/figures"):
        for png in (ROOT / folder).glob("*.png"):
            assert png.with_suffix(".pdf").exists(), png


def test_series_merge_only_where_they_coincide_in_the_panels_own_scale():
    """Issue 55: nyse-portfolio's violation panel drew one line for 6.7e-5 and 8.4e-4 / 8.6e-4
    (merged by a tolerance relative to the linear range, on a log axis).  Now curves a decade
    apart at small values stay apart, 2% apart too, while copies (and a 1e-6 relative twin)
    merge, and the caption gives the merged members' spread."""
    top = np.full((4, T.size), 1.0) * np.linspace(0.01, 0.1, T.size)  # the panel's top: 0.1
    base = np.full((4, T.size), 1.0) * np.linspace(1e-6, 6.7e-5, T.size)
    series = [
        panels.Series(n, colour, "-", {"hard_violation": c})
        for n, colour, c in [
            ("a", "#0072B2", base),
            ("b", "#D55E00", base * 12.5),  # 8.4e-4: a decade above a
            ("c", "#009E73", base * 12.5 * 1.02),  # 8.6e-4: 2% above b, 1e-5 of the range
            ("d", "#CC79A7", top),
            ("a-copy", "#0072B2", base.copy()),
            ("a-twin", "#0072B2", base * (1 + 1e-6)),
        ]
    ]
    notes = []
    merged = panels.merge(series, ["hard_violation"], notes)
    assert [s.label for s in merged] == ["a = a-copy = a-twin", "b", "c", "d"]
    (note,) = notes
    assert "a and a-copy and a-twin coincide" in note and "within 1e-07" in note
    fig = panels.build(T, series, ["hard_violation"], {"hard_violation": LABELS["hard_violation"]})
    texts = check(fig)
    assert fig.axes[0].get_yscale() == "log"
    assert {"a = a-copy = a-twin", "b", "c", "d"} <= set(texts)


@pytest.mark.parametrize("scale", [0.6, 1.0, 1.3, 1.8, 2.5, 4.0, 8.0])
def test_a_bound_named_as_off_its_panel_is_drawn_in_none_of_its_row(scale):
    """Issue 55: the yu-neely caption said the Thm. 1 bound lies above the regret panel while
    two of three columns drew it (the decision came from a y-limit taken before the slope
    guides grew the shared axis).  Now decided on the final axes: a bound is either drawn in
    every panel of its row, or named in the caption and drawn in none."""
    names = registry.names()
    curves = _curves(names)
    top = max(np.nanmax(c["regret"]) for c in curves.values())
    bounds = dict(BOUNDS, regret=scale * top * np.sqrt(T / T[-1]))
    fig = comparison.comparison_figure(T, curves, bounds=bounds)
    FigureCanvasAgg(fig).draw()
    label = BOUNDS["label"]
    row = [ax for ax in fig.axes if ax.get_visible()][:3]  # the regret row, one per group
    is_bound = lambda ln: (
        np.shape(ln.get_ydata()) == T.shape
        and np.allclose(np.asarray(ln.get_ydata(), float), bounds["regret"])
    )
    drawn = [any(is_bound(ln) for ln in ax.get_lines()) for ax in row]
    named = f"{label} lies above the regret panel" in panels.caption(fig)
    assert drawn in ([True] * 3, [False] * 3), drawn
    assert named == (not drawn[0]), (named, drawn)


def _portfolio_sets(names, lengths=(257, 793, 5401, 1017, 1009, 6181), seeds=6):
    """Data sets of the summary figure: wealth a little off the uniform CRP's, violation that
    starts late (as on nyse_n: 0 until day 5331)."""
    rng = np.random.default_rng(1)
    out = []
    for j, n_days in enumerate(lengths):
        t = np.unique(np.r_[np.geomspace(1, n_days, 60).round(), np.linspace(1, n_days, 200)])
        t = t.round().astype(int)
        uniform = np.exp(np.cumsum(rng.normal(3e-4, 1e-2, n_days)))[t - 1]
        curves = {}
        for i, name in enumerate(names):
            drift = 1 + (i % 4) * 1e-5 * t * rng.uniform(0.9, 1.1, (seeds, 1))
            late = np.where(t > 0.85 * n_days, (t - 0.85 * n_days) * 1e-4 * (i % 3), 0.0)
            curves[name] = {"wealth": uniform * drift, "hard_violation": late + 0 * drift}
        out.append(
            {"name": f"set{j}", "rounds": t, "curves": curves, "uniform": uniform,
             "best": uniform * 1.5, "seeds": seeds}
        )  # fmt: skip
    return out


def test_the_portfolio_summary_is_one_figure_on_the_day_axis():
    """Issue 55 item 2: one figure for the six portfolio data sets (five figures of 3 x 2
    panels before), violation on the trading-day axis where it accrues, wealth drawn from
    enough checkpoints to be a curve, every text at least 8 pt at the print width."""
    from jaxbco.plotting import portfolios

    names = registry.names()[:4]
    sets = _portfolio_sets(names)
    fig = portfolios.portfolio_summary(sets, title="The portfolio data sets")
    texts = check(fig, panels_expected=12)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert all(ax.get_xscale() == "linear" for ax in axes)
    assert fig.get_figwidth() <= style.PRINT_WIDTH
    for i, s in enumerate(sets):  # a violation that starts at 0.85 T is drawn there
        ax = axes[(2 * (i // 3) + 1) * 3 + i % 3]  # rows: wealth, violation of 3 data sets
        assert "g_s" in ax.get_ylabel()
        (x0, x1) = ax.get_xlim()
        assert (x0, x1) == (s["rounds"][0], s["rounds"][-1])
        assert np.sum(s["rounds"] > 0.85 * s["rounds"][-1]) >= 20  # a curve, not a stroke
    assert "uniform CRP" in texts and all(n in " ".join(texts) for n in names)
    text = panels.caption(fig)
    assert "mean over 6 seeds" in text and "1.5 times the uniform CRP" in text


def test_the_portfolio_summary_merges_only_what_coincides_on_every_data_set():
    from jaxbco.plotting import portfolios

    names = registry.names()[:3]
    sets = _portfolio_sets(names, lengths=(300, 600))
    for s in sets:  # the third a copy of the first on every data set
        s["curves"][names[2]] = dict(s["curves"][names[0]])
    fig = portfolios.portfolio_summary(sets)
    texts = check(fig, panels_expected=4)
    assert f"{names[0]} = {names[2]}" in " ".join(texts).replace(" (g known in advance)", "")
    sets[1]["curves"][names[2]] = {  # apart on one data set: two lines
        m: v * (1.2 if m == "wealth" else 1.0) for m, v in sets[1]["curves"][names[0]].items()
    }
    texts = check(portfolios.portfolio_summary(sets), panels_expected=4)
    assert not any(" = " in t for t in texts)
    with pytest.raises(ValueError, match="sets must hold"):
        portfolios.portfolio_summary([])


def test_a_portfolio_comparison_draws_every_row_on_the_day_axis():
    names = registry.names()[:2]
    curves = _curves(names)
    wealth = {n: 1 + 1e-3 * T * np.ones((12, 1)) for n in names}
    fig = comparison.comparison_figure(T, curves, wealth=wealth)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 3 and all(ax.get_xscale() == "linear" for ax in axes)
    assert all(ax.get_xlabel() == "day $t$" for ax in axes)
