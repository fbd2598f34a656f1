"""The gradient estimators of tuning and the check that chooses between them (issue 56):
pure NumPy properties first, then the whole choice on a non-smooth toy problem where the
right direction is known, the never-worse rule, and declared ranges."""

from __future__ import annotations

import warnings
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxbco
from jaxbco import constraints, losses, sequences, sets, tune
from jaxbco.algorithms import AgarwalTwoPoint, toolkit
from jaxbco.tune import estimators, transforms


def test_directions_are_orthogonal_frames_of_length_sqrt_k():
    rng = np.random.default_rng(0)
    e = estimators.directions(rng, 4, 8)
    assert e.shape == (8, 4)
    for block in (e[:4], e[4:]):
        np.testing.assert_allclose(block @ block.T, 4 * np.eye(4), atol=1e-12)
    big = estimators.directions(np.random.default_rng(1), 3, 30000)
    np.testing.assert_allclose(np.cov(big.T), np.eye(3), atol=0.03)  # E e e^T = I


def test_smoothed_gradient_is_exact_on_a_quadratic_with_seed_offsets():
    """L_s(z) = a . z + |z|^2 / 2 + c_s at z = 0: antithetic pairs on common seeds cancel c_s
    and the quadratic term, and a full orthogonal frame recovers a exactly (zero se)."""
    rng = np.random.default_rng(2)
    a, s = np.array([0.3, -2.0, 5.0]), 0.1
    c = rng.normal(size=16) * 100
    for pairs in (3, 6):
        e = estimators.directions(rng, 3, pairs)
        L = lambda Z: (Z @ a + 0.5 * (Z**2).sum(-1))[:, None] + c
        g, se = estimators.smoothed_gradient(L(s * e), L(-s * e), np.ones((pairs, 16), bool), e, s)
        np.testing.assert_allclose(g, a, rtol=1e-9)
        np.testing.assert_allclose(se, 0.0, atol=1e-9)


def test_smoothed_gradient_is_unbiased_over_directions_with_a_partial_frame():
    a, s = np.array([1.0, -3.0]), 0.2
    rng = np.random.default_rng(3)
    L = lambda Z: (Z @ a + np.sin(Z).sum(-1))[:, None]  # gradient a + 1 at 0, to O(s^2)
    gs = []
    for _ in range(4000):
        e = estimators.directions(rng, 2, 1)  # one direction: the frame's variance shows
        g, _ = estimators.smoothed_gradient(L(s * e), L(-s * e), np.ones((1, 1), bool), e, s)
        gs.append(g)
    np.testing.assert_allclose(np.mean(gs, axis=0), a + 1.0, atol=0.15)


def _check(path, fd):
    e = np.ones(1)
    grads = np.asarray(path, float)[:, None] * np.ones((1, e.size))
    ok = np.ones(len(path), bool)
    plus, minus = np.asarray(fd) * 0.2, np.zeros(len(fd))  # difference quotient = fd
    return estimators.compare(0, grads / e.size, ok, plus, minus, ok, e, 0.1, 1)


def test_check_agrees_where_the_paths_derivative_matches_its_differences():
    rng = np.random.default_rng(4)
    fd = rng.normal(0.5, 0.2, size=8)
    chk = _check(fd + rng.normal(0, 1e-3, size=8), fd)
    assert not chk.disagree and abs(chk.t) < chk.t_crit and 0.9 < chk.spread_ratio < 1.1


def test_check_disagrees_on_a_wrong_sign_and_on_an_exploding_spread():
    rng = np.random.default_rng(5)
    fd = rng.normal(0.5, 0.05, size=8)
    wrong = _check(-fd + rng.normal(0, 0.01, size=8), fd)
    assert wrong.disagree and abs(wrong.t) > wrong.t_crit
    exploding = _check(rng.normal(0, 1e6, size=8), fd)  # not significant, but uninformative
    assert exploding.disagree and exploding.spread_ratio > estimators.SPREAD
    flat = _check(np.zeros(8), np.zeros(8))  # J does not depend on z: both zero, agree
    assert not flat.disagree


# ---- the whole loop on a non-smooth toy problem -------------------------------------------

T = 200


def _toy():
    """X = [-1, 1]^2, f = ||x - theta||_1, theta ~ N(0.4, 0.3^2); a binding budget."""
    return jaxbco.Problem(
        sets.Box(-jnp.ones(2), jnp.ones(2)),
        losses.Absolute(),
        sequences.IIDNormal(jnp.full(2, 0.4), jnp.full(2, 0.3)),
        constraints.Linear(),
        sequences.Fixed((jnp.ones(2), jnp.asarray(0.5))),
    )


def _toy_options(alg, h, **more):
    """4 steps x 8 seeds on eta, 32 held-out seeds, regret against x_1 (less to compile)."""
    return dict(
        algorithm=alg, init=h, free=("eta",), steps=4, seeds=8, heldout=32, comparator=False, **more
    )


def _start(eta):
    problem, alg = _toy(), AgarwalTwoPoint()
    h = alg.default_hyper(problem, T)
    return problem, alg, eqx.tree_at(lambda m: m.eta, h, jnp.asarray(eta, jnp.float32))


def test_auto_switches_where_the_path_derivative_is_wrong_and_tuning_improves():
    """At eta = 0.1 the toy's J rises with eta (central differences on 8 seeds: +0.11 per
    unit of log eta; J at eta = 1 is 0.62, at 0.01 -0.28), while the pathwise mean is about
    -70 with a spread thousands of times the differences': auto must switch at step 0 and
    move eta down."""
    problem, alg, h = _start(0.1)
    res = tune.tune(problem, T, **_toy_options(alg, h))
    assert res.switched_at == 0 and res.checks[0].disagree
    assert res.estimator_used == "pathwise, smoothed from step 0"
    assert res.trajectory["estimator"] == ["smoothed"] * 4
    assert float(res.hyper.eta) < 0.1 and not res.kept_defaults
    assert res.heldout_end.J < res.heldout_start.J
    assert res.runs == res.step_runs + res.check_runs + res.validation_runs
    # 8 seeds x (k + 1) for the pathwise step that was checked and rejected, then 2P x 8 per
    # smoothed step (P = k = 1); the check's 2 x 8; (4 + 2) points x 4 validation seeds
    assert (res.step_runs, res.check_runs, res.validation_runs) == (16 + 4 * 16, 16, 24)


def test_the_defaults_are_kept_where_tuning_makes_things_worse():
    """Forced pathwise from eta = 0.1 climbs in eta, where J rises: validation keeps the
    defaults; without validation the held-out comparison rejects the last point, warns and
    returns the defaults."""
    problem, alg, h = _start(0.1)
    kw = _toy_options(alg, h, estimator="pathwise")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = tune.tune(problem, T, **kw)
    assert res.checks == () and res.switched_at is None
    assert res.trajectory["values"]["eta"][-1] > 0.1  # the wrong way
    J = res.trajectory["validation"]
    # index 0: the defaults; 1: the same eta decoded from z (round-off apart, which this
    # chaotic run amplifies to 4e-4 in J); every later point is worse
    assert res.best_step == int(np.argmin(J)) in (0, 1) and np.all(J[2:] > J[:2].max())
    assert float(res.hyper.eta) == pytest.approx(0.1)
    said = [w for w in caught if issubclass(w.category, tune.TuningWarning)]
    assert res.kept_defaults == (res.best_step == 0) == bool(said)
    if said:
        assert "no point of the 4 steps beat the defaults on 4 validation seeds" in str(
            said[0].message
        )
    with pytest.warns(tune.TuningWarning, match="worse.*defaults are returned"):
        res0 = tune.tune(problem, T, validation=0, **kw)
    assert res0.kept_defaults and res0.validation_runs == 0
    assert float(res0.hyper.eta) == pytest.approx(0.1)
    assert res0.tuned_heldout.J > res0.heldout_start.J == res0.heldout_end.J
    assert float(res0.candidate.eta) > 0.1


def test_auto_stays_pathwise_on_a_smooth_problem():
    problem = jaxbco.problems.make("quadratic-ball", 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", tune.TuningWarning)
        res = tune.tune(
            problem, 100, free=("alpha_scale",), steps=3, seeds=8, heldout=16, check_every=2
        )
    assert [c.step for c in res.checks] == [0, 2] and not any(c.disagree for c in res.checks)
    assert res.switched_at is None and res.estimator_used == "pathwise"
    assert res.heldout_end.J < res.heldout_start.J


def test_seed_sets_are_disjoint():
    assert tune.training_ids(10, 5, True).max() < tune.HELDOUT_OFFSET
    assert tune.heldout_ids(1)[0] + 2**30 <= tune.VALIDATION_OFFSET  # at most 2^30 held out
    assert tune.validation_ids(4).min() == tune.VALIDATION_OFFSET
    with pytest.raises(ValueError, match="validation seeds"):
        tune.validation_ids(2**30 + 1)
    problem, alg, h = _start(0.1)
    with pytest.raises(ValueError, match="estimator must be one of auto, pathwise, smoothed"):
        tune.tune(problem, T, algorithm=alg, init=h, free=("eta",), estimator="es")
    with pytest.raises(ValueError, match="heldout"):
        tune.tune(problem, T, algorithm=alg, init=h, free=("eta",), heldout=2**30 + 1)


# ---- ranges declared on a hyperparameter class ---------------------------------------------


class RhoHyper(eqx.Module):
    eta: jax.Array = eqx.field(converter=toolkit.real)
    rho: jax.Array = eqx.field(converter=toolkit.real)
    shift: jax.Array = eqx.field(converter=toolkit.real, metadata={"range": (None, None)})
    mix: jax.Array = eqx.field(converter=toolkit.real, metadata={"range": (0.2, 0.8)})
    ranges: ClassVar[dict] = {"rho": "positive", "eta": (1e-3, None)}


def test_a_declared_range_gives_the_transform():
    h = RhoHyper(eta=0.05, rho=2.0, shift=-0.3, mix=0.5)
    space = tune.make_space(_toy(), h, ("eta", "rho", "shift", "mix"))
    z = space.encode(h)
    back = space.values(space.decode(jnp.asarray(z, jnp.float32)))
    assert back == pytest.approx({"eta": 0.05, "rho": 2.0, "shift": -0.3, "mix": 0.5}, rel=1e-5)
    far = space.values(space.decode(jnp.asarray([-30.0, -30.0, -30.0, 30.0])))
    assert far["eta"] > 1e-3 and far["rho"] > 0 and far["shift"] == -30.0
    assert 0.2 < far["mix"] <= 0.8
    assert transforms.declared_range(RhoHyper, "mix") == (0.2, 0.8)

    class Bare(eqx.Module):
        omega: jax.Array = eqx.field(converter=toolkit.real)

    with pytest.raises(ValueError, match=r"declare its range on Bare.*ranges = \{'omega'"):
        tune.make_space(_toy(), Bare(omega=1.0), ("omega",))
    with pytest.raises(ValueError, match="a declared range must be one of"):
        transforms.from_range("sometimes")


def test_cli_tunes_an_own_algorithms_declared_parameter(capsys, tmp_path, monkeypatch):
    """`jaxbco tune --algorithm mod:Name --free rho`: PolyakHyper declares rho positive, so
    the command needs no transform; the estimator, its checks and the validation's choice
    are printed and written."""
    import json

    from jaxbco.cli import main

    (tmp_path / "polyak_mod.py").write_text(
        "from benchmarks._nonsmooth import PolyakTwoPoint, PolyakHyper  # noqa: F401\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    argv = [
        "tune",
        "--problem",
        "quadratic-ball",
        "--dim",
        "2",
        "--horizon",
        "30",
        "--algorithm",
        "polyak_mod:PolyakTwoPoint",
        "--free",
        "rho,eta",
        "--steps",
        "2",
        "--seeds",
        "4",
        "--heldout",
        "4",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "gradient: pathwise" in printed and "check step 0" in printed
    assert "validation (4 seeds, 4 points)" in printed
    data = json.loads((out / "tune.json").read_text())
    assert set(data["trajectory"]["values"]) == {"rho", "eta"}
    assert data["estimator"]["asked"] == "auto" and len(data["estimator"]["checks"]) == 1
    assert data["runs"]["validation"] == 16 and len(data["validation_J"]) == 4
    assert data["returned"] in ("tuned", "defaults")


def test_validation_returns_the_defaults_when_no_step_beats_them():
    """An optimiser that climbs (sgd with a negative rate) makes every point worse: the
    validation keeps the defaults (index 0; index 1 decodes to the same alpha_scale = 1
    exactly, and ties go to the defaults) and says so."""
    problem = jaxbco.problems.make("quadratic-ball", 3)
    with pytest.warns(tune.TuningWarning, match="no point of the 3 steps beat the defaults"):
        res = tune.tune(
            problem,
            100,
            free=("alpha_scale",),
            steps=3,
            seeds=4,
            heldout=8,
            optimizer=optax.sgd(-3.0),
            estimator="pathwise",
        )
    J = res.trajectory["validation"]
    assert res.best_step == 0 and J[1] == J[0] and np.all(J[2:] > J[0])
    assert res.kept_defaults and float(res.hyper.alpha_scale) == 1.0
    assert res.heldout_end.J == res.heldout_start.J
    assert "no step's point beat the defaults" in "\n".join(res.notes())
