"""The one figure style (``jaxbco.plotting.panels``), checked where it can be: every panel's
axes labelled, the legend outside the panels, y-limits within a decade or so of the data (no
clamp floor), up to 12 series in distinct colours, the band's meaning in the legend, nothing
outside the saved image.  Synthetic curves: no JAX program is compiled here."""

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from jaxbco.plotting import panels
from jaxbco.plotting.dataset import METRIC_LABELS

T = np.unique(np.geomspace(1, 1000, 40).round())
METRICS = ("regret", "hard_violation", "soft_violation")
LABELS = {m: METRIC_LABELS[m] for m in METRICS}


def _series(n, seeds=20, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for (color, ls), k in zip(panels.styles(n), range(n)):
        regret = (1 + k) * np.sqrt(T) * rng.uniform(0.5, 1.5, (seeds, 1))
        regret[:, :3] -= 2.0  # early regret below zero: the values change sign
        hard = np.where(rng.uniform(size=(seeds, 1)) < 0.7, 0.0, 1e-3 * np.log1p(T))  # mostly 0
        soft = -0.5 * T * rng.uniform(0.5, 1.5, (seeds, 1))
        out.append(panels.Series(f"setting {k}", color, ls,
                                 {"regret": regret, "hard_violation": hard, "soft_violation": soft}))
    return out


def _values(series, metric):
    """What a panel draws: the means, and the bands' edges where bands are drawn."""
    stats = [panels.summary(s.curves[metric]) for s in series]
    keep = slice(None) if len(series) <= panels.MAX_BANDS else slice(0, 1)
    return np.concatenate([np.concatenate(st[keep]) for st in stats])


@pytest.mark.parametrize("n", [1, 4, 12])
def test_panels_are_labelled_legend_outside_limits_at_the_data(n):
    series = _series(n)
    fig = panels.build(T, series, METRICS, LABELS, title="a title long enough to need some room "
                       "in a figure of three panels, with settings named at length")
    FigureCanvasAgg(fig).draw()  # lay the figure out as savefig does
    renderer = fig.canvas.get_renderer()
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 3
    legend = fig.legends[0].get_window_extent(renderer)
    for ax, metric in zip(axes, METRICS):
        assert ax.get_xlabel() == "round $t$" and ax.get_ylabel() == LABELS[metric][1]
        assert not legend.overlaps(ax.get_window_extent(renderer)), metric
        values = _values(series, metric)
        values = values[np.isfinite(values)]
        lo, hi = ax.get_ylim()
        if ax.get_yscale() == "log":
            assert values.min() / 10 <= lo <= values.min() and values.max() <= hi <= 10 * values.max()
        else:  # symlog or linear: both ends at the data (zero where the data reach it)
            assert lo <= values.min() and hi >= values.max()
            assert lo >= min(0.0, 10 * values.min()) and hi <= max(0.0, 10 * values.max())
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert [s.label for s in series] == texts[:n]
    if n <= panels.MAX_BANDS:
        assert panels.BAND_LABEL in texts
    else:
        assert "bands left out" in fig.legends[0].get_title().get_text()
    # nothing outside the figure: the title and the legend lie inside its area
    box = fig.bbox
    for artist in (fig._suptitle, fig.legends[0]):
        ext = artist.get_window_extent(renderer)
        assert ext.x0 >= box.x0 - 1 and ext.x1 <= box.x1 + 1 and ext.y0 >= box.y0 - 1, artist


def test_twelve_series_in_twelve_colours():
    colors = [c for c, _ in panels.styles(12)]
    assert len(set(colors)) == 12


def test_no_clamp_floor_on_a_sign_changing_curve():
    """Regret that starts below zero: symmetric-log from the data's minimum, never a 1e-12
    floor spanning 15 decades."""
    series = _series(1)
    fig = panels.build(T, series, ("regret",), {"regret": LABELS["regret"]})
    ax = fig.axes[0]
    assert ax.get_yscale() == "symlog"
    values = _values(series, "regret")
    lo, hi = ax.get_ylim()
    assert lo < 0 and lo >= 1.3 * values.min()
    assert ax.yaxis.get_transform().linthresh >= 1e-6 * np.abs(values).max()


def test_a_panel_without_finite_values_says_so(tmp_path):
    bad = panels.Series("all failed", "#000000", "-",
                        {m: np.full((0, T.size), np.nan) for m in METRICS})
    files = panels.draw(tmp_path / "empty", T, [bad], METRICS, LABELS)
    assert [p.endswith(s) for p, s in zip(files, (".png", ".pdf"))] == [True, True]
    fig = panels.build(T, [bad], METRICS, LABELS)
    assert "every seed failed" in fig.axes[0].texts[0].get_text()
