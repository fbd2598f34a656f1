"""The engine: batch-size independence, no recompilation, failure flags, metric definitions."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _traces import traces  # tests/_traces.py

import jaxbco
from jaxbco import constraints, losses, sequences, sets, simulate
from jaxbco.hyper import Hyper
from jaxbco.problem import Problem

D, T = 4, 60
A = jnp.ones(D) / np.sqrt(D)


def _problem(loss=None):
    return Problem(
        sets.L2Ball(jnp.zeros(D), 1.0),
        loss or losses.Quadratic(),
        sequences.IIDNormal(0.6 * A, jnp.full(D, 0.3)),
        constraints.Linear(),
        sequences.Fixed((A, jnp.asarray(0.3))),
    )


HYPER = Hyper(c=0.5, eps=0.1, xi=0.02, delta=0.02)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_seed_result_independent_of_batch(dtype):
    with jax.enable_x64(dtype == "float64"):
        alone = simulate.sweep(_problem(), T, HYPER, seeds=np.asarray([5]), dtype=dtype)
        small = simulate.sweep(_problem(), T, HYPER, seeds=np.arange(8), dtype=dtype)
        large = simulate.sweep(
            _problem(), T, HYPER, seeds=np.arange(3, 40)[::-1].copy(), dtype=dtype
        )
    j = list(large.seed_ids).index(5)
    for m in simulate.METRICS:
        np.testing.assert_array_equal(getattr(alone, m)[0, 0], getattr(small, m)[0, 5])
        np.testing.assert_array_equal(getattr(alone, m)[0, 0], getattr(large, m)[0, j])
    np.testing.assert_array_equal(alone.x_final[0, 0], large.x_final[0, j])


def test_new_hyperparameter_values_do_not_recompile():
    with traces() as counts:
        simulate.sweep(_problem(), T, HYPER, seeds=3)
        before = dict(counts)
        r1 = simulate.sweep(
            _problem(), T, Hyper(c=0.7, eps=0.3, xi=0.05, delta=0.03, alpha_scale=2.0), seeds=3
        )
        r2 = simulate.sweep(
            _problem(),
            T,
            Hyper(c=0.55, eps=1.0, xi=0.02, delta=0.01, gamma_scale=0.5, eta_scale=3.0),
            seeds=3,
        )
    assert counts == before  # neither the start nor the round scan was traced again
    with traces() as fresh:  # the counters do see a program traced: a horizon no test ran
        simulate.sweep(_problem(), T + 13, HYPER, seeds=3)
    assert fresh["simulate"] == 1 and fresh["rounds"] >= 1
    assert not np.array_equal(r1.regret, r2.regret)  # the values really changed the run


def test_grid_matches_individual_runs():
    grid = jaxbco.grid(c=[0.5, 0.8], eps=[0.1, 0.7], xi=[0.02], delta=[0.02])
    res = simulate.sweep(_problem(), T, grid, seeds=4)
    assert res.regret.shape[:2] == (4, 4)
    for g, (c, e) in enumerate([(0.5, 0.1), (0.5, 0.7), (0.8, 0.1), (0.8, 0.7)]):
        single = simulate.sweep(_problem(), T, Hyper(c=c, eps=e, xi=0.02, delta=0.02), seeds=4)
        np.testing.assert_allclose(res.regret[g], single.regret[0], rtol=1e-5, atol=1e-6)


def test_non_finite_seed_is_flagged_and_others_kept():
    def nan_loss(x, theta):  # blows up on a rare data draw
        value = jnp.sum((x - theta) ** 2)
        return jnp.where(theta[0] > 0.6 * A[0] + 0.55, jnp.nan, value)

    res = simulate.sweep(
        _problem(losses.CustomLoss(nan_loss)),
        T,
        HYPER,
        seeds=40,
        comparator=False,
        record_decisions=True,
    )
    failed = res.failed[0]
    assert failed.any() and (~failed).any()
    # the healthy seeds are exactly what they are when run without the failing ones
    healthy = simulate.sweep(
        _problem(losses.CustomLoss(nan_loss)),
        T,
        HYPER,
        seeds=np.nonzero(~failed)[0],
        comparator=False,
    )
    assert not healthy.failed.any()
    np.testing.assert_array_equal(res.regret[0, ~failed], healthy.regret[0])
    np.testing.assert_array_equal(res.x_final[0, ~failed], healthy.x_final[0])
    for s in np.nonzero(failed)[0]:
        t_fail = res.failed_round[0, s]
        assert 1 <= t_fail <= T
        after = res.rounds >= t_fail
        assert np.all(np.isnan(res.regret[0, s, after]))
        assert np.all(np.isfinite(res.regret[0, s, ~after]))
        # its stale state is reported as NaN, never as a decision (issue 57)
        assert np.all(np.isnan(res.x_final[0, s]))
        assert np.all(np.isnan(res.decisions[0, s, after]))
        assert np.all(np.isfinite(res.decisions[0, s, ~after]))
    assert np.all(np.isfinite(res.x_final[0, ~failed]))
    assert np.all(np.isfinite(res.decisions[0, ~failed]))


def test_metrics_match_recomputation_from_the_trajectory(x64):
    rng = np.random.default_rng(0)
    theta = rng.normal(0.5, 0.3, size=(T, D))
    prob = Problem(
        sets.L2Ball(jnp.zeros(D), 1.0),
        losses.Quadratic(),
        sequences.Replay(theta),
        constraints.Linear(),
        sequences.Fixed((A, jnp.asarray(0.2))),
    )
    res = simulate.run(
        prob, T, HYPER, checkpoints=np.arange(1, T + 1), record_decisions=True, dtype="float64"
    )
    x = res.decisions
    f = np.sum((x - theta) ** 2, axis=1)
    f_star = np.sum((res.x_star - theta) ** 2, axis=1)
    g = x @ np.asarray(A) - 0.2
    np.testing.assert_allclose(res.regret, np.cumsum(f - f_star), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(res.hard_violation, np.cumsum(np.maximum(g, 0)), atol=1e-12)
    np.testing.assert_allclose(res.soft_violation, np.cumsum(g), atol=1e-12)
    np.testing.assert_allclose(res.loss, f, atol=1e-12)
    assert res.lam[0] == 0.0 and np.all(res.lam[1:] >= np.arange(2, T + 1) ** 0.5 - 1e-12)


def test_guo_alternating_example_soft_zero_hard_half(x64):
    """Guo et al. 2023: g_t = -1, +1, -1, ...: soft violation 0, hard violation T/2 = 500;
    the empty even rounds are flagged up front (a FeasibilityWarning naming them)."""
    from jaxbco.problem import FeasibilityWarning

    prob = Problem(
        sets.L2Ball(jnp.zeros(2), 1.0),
        losses.Quadratic(),
        sequences.IIDNormal(jnp.zeros(2), jnp.ones(2)),
        constraints.Linear(),
        sequences.Alternating((jnp.zeros((2, 2)), jnp.asarray([1.0, -1.0]))),
    )
    with pytest.warns(FeasibilityWarning, match=r"rounds t = 2, 4, .*empty feasible set"):
        res = simulate.run(prob, 1000, comparator=False, dtype="float64")
    assert res.soft_violation[-1] == 0.0
    assert res.hard_violation[-1] == 500.0


def test_checkpoint_curves_are_a_subsample_of_the_full_curve(x64):
    full = simulate.run(_problem(), T, HYPER, checkpoints=np.arange(1, T + 1), dtype="float64")
    cps = np.asarray([1, 2, 7, 30, T])
    part = simulate.run(_problem(), T, HYPER, checkpoints=cps, dtype="float64")
    for m in simulate.METRICS:
        np.testing.assert_array_equal(getattr(part, m), getattr(full, m)[cps - 1])


def test_polyhedral_seed_result_independent_of_batch():
    """The polyhedral prox (Newton on the m-dim dual, a while-loop per lane) keeps a seed's
    result bitwise independent of the other seeds in its batch."""
    from jaxbco import problems

    problem = problems.make("yu-neely", horizon=12)
    alone = simulate.sweep(problem, 12, seeds=np.asarray([5]), checkpoints=np.array([4, 12]))
    # 16 seeds: the same padded shape as one seed, so one compile serves both.
    batch = simulate.sweep(
        problem, 12, seeds=np.arange(16)[::-1].copy(), checkpoints=np.array([4, 12])
    )
    j = list(batch.seed_ids).index(5)
    for m in simulate.METRICS + ("x_final",):
        np.testing.assert_array_equal(getattr(alone, m)[0, 0], getattr(batch, m)[0, j], err_msg=m)


class _Unprojected(jaxbco.algorithms.RectifiedBCO):
    """A user's mistake: its last decision is pushed out of X (no projection)."""

    def decision(self, state):
        return super().decision(state) + 3.0


def test_an_algorithm_ending_outside_x_is_warned_about():
    """Issue 57: an algorithm that plays outside X ran without a warning."""

    def said(**kw):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            simulate.sweep(_problem(), T, HYPER, seeds=3, comparator=False, **kw)
        kind = jaxbco.runner.run_result.OutsideWarning
        return [str(w.message) for w in caught if w.category is kind]

    (line,) = said(algorithm=_Unprojected())
    assert "_Unprojected's last decision x_(T+1) lies outside X on 3 of 3 runs" in line
    assert said() == []  # the built-in projects: no word
