"""Intervals of means over seeds (``jaxbco.summary``): percentile bootstrap, within the values'
range (a non-negative quantity's interval is non-negative), deterministic, and as wide as the
normal theory says where that holds."""

import numpy as np

from jaxbco import summary


def test_interval_of_a_nonnegative_quantity_is_nonnegative():
    """Mostly zeros and a few positive values (a hard violation): the normal interval of the
    mean goes below 0 here, the bootstrap's does not."""
    v = np.r_[np.zeros(95), np.random.default_rng(3).exponential(0.3, 5)]
    normal_lo = v.mean() - 1.96 * v.std(ddof=1) / np.sqrt(v.size)
    assert normal_lo < 0
    iv = summary.interval(v)
    lo, hi = iv["ci95"]
    assert 0.0 <= lo <= iv["mean"] <= hi <= v.max()
    assert summary.interval(v) == iv  # the same numbers for the same values


def test_interval_width_matches_normal_theory_for_a_smooth_mean():
    """1000 normal values: the bootstrap interval is mean +- 1.96 s / sqrt(n) to within the
    bootstrap's Monte-Carlo error (a few percent of the width)."""
    v = np.random.default_rng(4).normal(2.0, 3.0, 1000)
    lo, hi = summary.interval(v)["ci95"]
    half = 1.96 * v.std(ddof=1) / np.sqrt(v.size)
    np.testing.assert_allclose([lo, hi], [v.mean() - half, v.mean() + half], atol=0.08 * half)


def test_interval_edge_cases():
    assert summary.interval(np.array([np.nan, np.inf]))["n"] == 0
    assert np.isnan(summary.interval(np.array([1.5]))["ci95"]).all()  # one seed: no interval
    assert summary.interval(np.full(7, 0.25))["ci95"] == [0.25, 0.25]
    big = np.r_[np.zeros(summary.EXACT_UP_TO), np.ones(3)]  # above the exact size: clipped normal
    lo, hi = summary.interval(big)["ci95"]
    assert lo == 0.0 < hi


def test_sweep_reports_its_path_and_speed():
    """``Result`` carries the path (back-end, prox, comparator) and the speed with compile
    time split out; a second call of the same shapes compiles nothing."""
    from jaxbco import plan, problems, simulate
    from jaxbco.runner import validation

    p = problems.make("quadratic-ball", 2)
    first = simulate.sweep(p, 20, seeds=3, checkpoints=np.array([1, 20]))
    again = simulate.sweep(p, 20, seeds=3, checkpoints=np.array([1, 20]))
    for res in (first, again):
        assert (res.engine, res.engine_reason) == ("seeds-minor", "")
        assert res.prox_method.startswith("BallHalfspace (closed form")
        assert res.comparator_method == "projection of the mean theta (quadratic)"
        assert 0.0 <= res.compile_s <= res.wall_s and res.seed_rounds_per_s > 0
        # x*'s pre-pass and certificate timed apart from the rounds (issue 55 item 5)
        assert 0.0 < res.comparator_s and res.compile_s + res.comparator_s <= res.wall_s
        rounds_s = res.wall_s - res.compile_s - res.comparator_s
        np.testing.assert_allclose(res.seed_rounds_per_s, 3 * 20 / rounds_s, rtol=1e-6)
    assert first.compile_s > 0.0 and again.compile_s == 0.0
    said = plan.before(p, validation.validated(p, 20, None, None, "float32")[1], 20)
    assert said[:4] == (
        first.engine,
        first.engine_reason,
        first.prox_method,
        first.comparator_method,
    )
    assert said.comparator_cost == "no pass of its own (from the run's running sums)"
    off = simulate.sweep(p, 20, seeds=3, checkpoints=np.array([1, 20]), comparator=False)
    assert off.comparator_method.startswith("off") and off.comparator_s == 0.0
