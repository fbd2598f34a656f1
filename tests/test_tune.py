"""jaxbco.tune: gradients through whole runs, parameterisations, seeds, tuning, the CLI.

Tiny sizes (d = 3, T = 30, a handful of seeds) so the file runs in about a minute on 2 cores;
each test compiles its function once.
"""

import os

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _traces import traces  # tests/_traces.py

from jaxbco import constraints, losses, sequences, sets, simulate, tune
from jaxbco.algorithms import AgarwalHyper, AgarwalTwoPoint, RectifiedBCO
from jaxbco.hyper import Hyper
from jaxbco.problem import Problem
from jaxbco.tune.objective import _evaluation
from jaxbco.tune.result import _said

D, T = 3, 30
A = jnp.ones(D) / np.sqrt(D)
# The constraint <A, x> <= 0.3 cuts off the losses' mean 0.6 A: line 9 and the penalty act.
PROBLEM = Problem(
    sets.L2Ball(jnp.zeros(D), 1.0),
    losses.Quadratic(),
    sequences.IIDNormal(0.6 * A, jnp.full(D, 0.2)),
    constraints.Linear(),
    sequences.Fixed((A, jnp.asarray(0.3))),
)
START = Hyper(c=0.6, eps=0.2, xi=0.05, delta=0.03, alpha_scale=0.7, gamma_scale=1.5)
IDS = jnp.arange(6, dtype=jnp.uint32)


def test_gradients_forward_and_reverse_match_central_differences(x64):
    """Smoothed instance (tau = 0.05), float64, small eta and gamma scales so the penalty
    saturates and every free parameter acts: jacfwd and grad (checkpointed) of the objective
    in z agree with central differences (step 1e-6) to a relative 1e-6 per component
    (measured: 2.5e-8; the prox solver's branches stay piecewise, the step stays on a piece)."""
    free = ("c", "eps", "alpha_scale", "gamma_scale", "eta_scale")
    start = Hyper(
        c=0.6, eps=0.2, xi=0.05, delta=0.03, alpha_scale=0.7, gamma_scale=0.05, eta_scale=0.05
    )
    space = tune.make_space(PROBLEM, start, free)
    kw = dict(kappa=3.0, dtype="float64", smoothing=0.05, comparator=False)
    obj = tune.make_objective(PROBLEM, T, space, **kw)
    obj_remat = tune.make_objective(PROBLEM, T, space, remat=True, **kw)
    z0 = jnp.asarray(space.encode(start))
    mu = jnp.asarray(3.0)
    value = lambda z: obj(z, mu, IDS)[0]
    fwd = jax.jit(jax.jacfwd(lambda z: (value(z), value(z)), has_aux=True))  # aux: the value
    rev = jax.jit(jax.grad(lambda z: obj_remat(z, mu, IDS)[0]))(z0)
    g_fwd, _ = fwd(z0)
    h = 1e-6
    fd = np.array(
        [(fwd(z0.at[i].add(h))[1] - fwd(z0.at[i].add(-h))[1]) / (2 * h) for i in range(len(free))]
    )
    scale = np.max(np.abs(fd))
    assert scale > 0 and np.all(np.isfinite(g_fwd)) and np.all(np.isfinite(rev))
    assert np.all(np.abs(fd) > 1e-4 * scale)  # every parameter acts here
    np.testing.assert_allclose(g_fwd, fd, rtol=1e-6)
    np.testing.assert_allclose(rev, fd, rtol=1e-6)
    np.testing.assert_allclose(g_fwd, rev, rtol=1e-9, atol=1e-12 * scale)


def test_parameterisations_map_into_ranges_and_round_trip(x64):
    free = ("c", "eps", "xi", "delta", "alpha_scale", "gamma_scale", "eta_scale")
    space = tune.make_space(PROBLEM, START, free)
    z = space.encode(START)
    back = space.decode(jnp.asarray(z))
    for name in free:
        np.testing.assert_allclose(
            float(getattr(back, name)), float(getattr(START, name)), rtol=1e-10
        )
    r = float(PROBLEM.domain.inscribed_ball()[1])
    rng = np.random.default_rng(0)
    for zz in np.concatenate(
        [
            rng.normal(0, 8, (200, len(free))),
            np.full((1, len(free)), 50.0),
            np.full((1, len(free)), -50.0),
        ]
    ):
        h = space.decode(jnp.asarray(zz, jnp.float32))  # float32: the edges must not round over
        c, xi, delta = float(h.c), float(h.xi), float(h.delta)
        assert 0.5 <= c < 1.0 and 0.0 < xi < 1.0 and 0.0 < delta <= xi * r * (1 + 1e-6)
        assert float(h.eps) > 0 and all(float(getattr(h, n)) > 0 for n in free[4:])
    lo, hi = space.box()
    assert np.all(lo < hi)
    # c = 1/2 (the theorem value) is the range's edge: tuning starts just inside it.
    z_edge = tune.make_space(PROBLEM, START, ("c",)).start(
        Hyper(c=0.5, eps=0.1, xi=0.05, delta=0.03)
    )
    assert 0.5 < 0.5 + 0.5 / (1 + np.exp(-z_edge[0])) < 0.51


def test_bad_free_names_and_missing_transforms_are_errors():
    with pytest.raises(ValueError, match="not a field"):
        tune.make_space(PROBLEM, START, ("nope",))

    class Custom(eqx.Module):
        w: jax.Array

    with pytest.raises(ValueError, match="no parameterisation"):
        tune.make_space(PROBLEM, Custom(jnp.asarray(1.0)), ("w",))
    space = tune.make_space(
        PROBLEM, Custom(jnp.asarray(2.0)), ("w",), transforms={"w": tune.positive_log()}
    )
    z = jnp.asarray(space.encode(Custom(jnp.asarray(2.0))))
    np.testing.assert_allclose(float(space.decode(z).w), 2.0, rtol=1e-12)
    with pytest.raises(ValueError, match="at least one"):
        tune.make_space(PROBLEM, START, ())


def test_heldout_seeds_are_disjoint_from_training_seeds():
    held = set(tune.heldout_ids(64).tolist())
    for fresh in (False, True):
        train = set(np.concatenate([tune.training_ids(s, 16, fresh) for s in range(50)]).tolist())
        assert not held & train
    assert (
        len(set(np.concatenate([tune.training_ids(s, 4, True) for s in range(3)]).tolist())) == 12
    )
    np.testing.assert_array_equal(tune.training_ids(5, 4, False), np.arange(4))
    assert min(held) >= tune.HELDOUT_OFFSET > 10**9 and max(held) < 2**32


def test_smoothing_none_is_bitwise_the_default_algorithm(x64):
    assert RectifiedBCO(smoothing=None) == RectifiedBCO()
    fn_default = simulate.make_run(PROBLEM, T, checkpoints=np.asarray([10, T]), dtype="float64")
    fn_none = simulate.make_run(
        PROBLEM,
        T,
        algorithm=RectifiedBCO(smoothing=None),
        checkpoints=np.asarray([10, T]),
        dtype="float64",
    )
    fn_smooth = simulate.make_run(
        PROBLEM,
        T,
        algorithm=RectifiedBCO(smoothing=1e-9),
        checkpoints=np.asarray([10, T]),
        dtype="float64",
    )
    key = jax.random.key(0)
    a, b, s = fn_default(key, START, IDS), fn_none(key, START, IDS), fn_smooth(key, START, IDS)
    for m in simulate.METRICS:
        np.testing.assert_array_equal(np.asarray(a[m]), np.asarray(b[m]))
        # tau -> 0 recovers the exact kinks (softplus(g / tau) tau -> [g]_+).
        np.testing.assert_allclose(np.asarray(s[m]), np.asarray(a[m]), rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="smoothing"):
        RectifiedBCO(smoothing=-1.0)


def test_a_few_forward_steps_decrease_J_on_the_training_seeds(x64):
    """Common random numbers: J on the same 8 training seeds falls along the trajectory."""
    res = tune.tune(
        PROBLEM,
        T,
        init=START,
        free=("c", "alpha_scale", "eta_scale"),
        kappa=3.0,
        steps=6,
        seeds=8,
        heldout=None,
        dtype="float64",
    )
    J = res.trajectory["J"]
    assert np.all(np.isfinite(J)) and J[-1] < J[0]
    assert res.runs_per_step == 32 and res.step_runs == 6 * 32
    # one check (step 0: 2 x 8 runs) and the defaults + 7 points on max(4, 8 // 2) seeds
    assert (res.check_runs, res.validation_runs) == (16, 8 * 4)
    assert res.runs == res.step_runs + res.check_runs + res.validation_runs
    assert res.estimator_used == "pathwise" and not res.checks[0].disagree
    assert res.trajectory["z"].shape == (7, 3) and res.trajectory["grad"].shape == (6, 3)
    assert isinstance(res.hyper, Hyper) and res.heldout_end is None
    assert float(np.asarray(res.hyper.c)) != 0.6


def test_baseline_with_its_own_hyper_class_tunes_eta(x64):
    """agarwal-2pt's AgarwalHyper: eta by the default exp parameterisation, reverse mode."""
    init = AgarwalHyper(eta=0.01, delta=0.03, xi=0.05)
    res = tune.tune(
        PROBLEM,
        T,
        algorithm=AgarwalTwoPoint(),
        init=init,
        free=("eta",),
        kappa=3.0,
        steps=4,
        seeds=8,
        heldout=16,
        mode="reverse",
        dtype="float64",
        budget=0.5,
    )
    assert isinstance(res.hyper, AgarwalHyper)
    assert res.trajectory["J"][-1] < res.trajectory["J"][0]
    assert float(np.asarray(res.hyper.eta)) > 0.01  # a too-small step: tuning raises it
    assert res.heldout_end.J < res.heldout_start.J and res.eval_runs == 32
    # It projects onto the known constraint: V_T = 0 <= budget, so the multiplier only falls.
    assert np.all(res.trajectory["violation"] == 0.0)
    assert (
        np.all(np.diff(res.trajectory["multiplier"]) < 0) and res.trajectory["multiplier"][0] == 3.0
    )
    with pytest.raises(ValueError, match="smoothing"):
        tune.tune(
            PROBLEM,
            T,
            algorithm=AgarwalTwoPoint(),
            init=init,
            free=("eta",),
            smoothing=0.1,
            steps=1,
            seeds=1,
            heldout=None,
        )


def test_grid_search_is_one_call_over_all_settings(x64):
    import warnings

    from jaxbco.tune.search import EdgeWarning

    with warnings.catch_warnings(record=True) as seen, traces() as counts:
        warnings.simplefilter("always")
        res = tune.grid_search(
            PROBLEM,
            T,
            init=START,
            free=("c", "alpha_scale"),
            points=3,
            seeds=4,
            heldout=None,
            kappa=3.0,
            dtype="float64",
        )
    assert counts["simulate"] == 1
    assert res.train.shape == (9,) and res.best == int(np.argmin(res.train)) and res.runs == 36
    assert len(set(np.round(res.values["alpha_scale"], 8))) == 3
    # a best value on the box's edge is said (one EdgeWarning naming it), an inner one is not
    for name in ("c", "alpha_scale"):
        grid_values = np.unique(np.round(res.values[name], 10))
        best = np.round(res.values[name][res.best], 10)
        assert (name in res.on_edge) == (best in (grid_values[0], grid_values[-1])), name
    edge_messages = [str(w.message) for w in seen if w.category is EdgeWarning]
    assert len(edge_messages) == len(res.on_edge)
    for name, message in zip(res.on_edge, edge_messages):
        assert f"the best {name} = " in message and "widen bounds=" in message


def test_cli_errors_are_one_line_and_exit_2(capsys, tmp_path):
    from jaxbco.cli import main

    for argv in (
        ["tune", "--free", "c,bogus", "--horizon", "10"],
        ["tune", "--seeds", "0"],
        ["tune", "--algorithm", "nope"],
    ):
        assert main(argv + ["--out", str(tmp_path / "out"), "--no-compile-cache"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("jaxbco: error: ") and err.count("\n") == 1
    assert not (tmp_path / "out").exists()  # a refused command leaves no folder behind


def test_cli_writes_json_and_figure(capsys, tmp_path):
    """`jaxbco tune --out DIR`: tune.json (rows, tuned hyperparameters, trajectory) and
    tune.png; a second call needs --overwrite."""
    import json

    from jaxbco.cli import main

    out = tmp_path / "out"
    argv = [
        "tune",
        "--horizon",
        "20",
        "--dim",
        "2",
        "--steps",
        "2",
        "--seeds",
        "2",
        "--heldout",
        "4",
        "--free",
        "c,eps",
        "--out",
        str(out),
        "--compile-cache",
        str(tmp_path / "cache"),
    ]
    assert main(argv) == 0
    assert "wrote " in capsys.readouterr().out
    data = json.loads((out / "tune.json").read_text())
    assert [r["method"] for r in data["rows"]][0] == "defaults (start)"
    assert np.isfinite(data["rows"][1]["heldout"]["J"]) and len(data["trajectory"]["J"]) == 2
    assert set(data["trajectory"]["values"]) == {"c", "eps"} and "c" in data["tuned_hyper"]
    assert (out / "tune.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(os.listdir(out)) == ["tune.json", "tune.png"]
    assert main(argv) == 2 and "--overwrite" in capsys.readouterr().err
    assert main(argv + ["--overwrite"]) == 0


def test_a_held_out_j_says_its_failed_seeds():
    """``TuneResult``'s line names failed held-out seeds: "inf (3 of 3 seeds failed)", never a
    bare "inf -> inf" (issue 57)."""
    r, v = np.asarray([0.1, 0.2, 0.3]), np.zeros(3)
    assert _said(_evaluation(r, v, np.ones(3, bool), 1.0, 10)) == "inf (3 of 3 seeds failed)"
    assert _said(_evaluation(r, v, np.asarray([0, 1, 0], bool), 1.0, 10)).endswith(
        "(1 of 3 seeds failed)"
    )
    assert _said(_evaluation(r, v, np.zeros(3, bool), 1.0, 10)) == "0.2"
