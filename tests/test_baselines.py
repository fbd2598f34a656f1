"""The six baselines against independent NumPy float64 references (tests/reference_baselines.py),
hyperparameter validation, sweeps, and feasibility of the projection-only methods.

Trajectory setting: X = unit ball in R^4, f_t = ||x - theta_t||^2 with theta_t around 0.6 a,
fixed constraint a.x <= 0.1 (a unit) cutting off the optimum; loss data and directions are
replayed, so the played points x_1..x_T must agree to 1e-8.
"""

import functools
import os
import sys

import jax

FLOAT64 = True  # every test here is a float64 reference check (tests/conftest.py)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jaxbco import constraints, losses, sequences, sets, simulate  # noqa: E402
from jaxbco.algorithms import (  # noqa: E402
    ALGORITHMS,
    RECOO,
    AgarwalHyper,
    AgarwalTwoPoint,
    AgarwalTwoPointXOnly,
    FlaxmanBGD,
    FlaxmanBGDXOnly,
    FlaxmanHyper,
    MahdaviHyper,
    MahdaviPrimalDual,
    RecooHyper,
    RoundInput,
    YuanLamperski,
    YuanLamperskiHyper,
    YuNeely,
    YuNeelyHyper,
)
from jaxbco.problem import Problem  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import reference_baselines as ref  # noqa: E402

D, T = 4, 100
ATOL = 1e-8
A = np.ones(D) / np.sqrt(D)
B = 0.1


def _data():
    rng = np.random.default_rng(11)
    theta = 0.6 * A + 0.1 * rng.normal(size=(T, D))
    U = rng.normal(size=(T, D))
    return theta, U / np.linalg.norm(U, axis=1, keepdims=True)


THETA, U = _data()


def _problem(loss_data):
    return Problem(
        sets.L2Ball(jnp.zeros(D), 1.0),
        losses.Quadratic(),
        loss_data,
        constraints.Linear(),
        sequences.Fixed((jnp.asarray(A), jnp.asarray(B))),
    )


@functools.cache
def replay():
    """The replayed problem, built in float64 (inside the module's x64 context)."""
    return _problem(sequences.Replay(jnp.asarray(THETA)))


SETUP = ref.Setup(np.zeros(D), 1.0, A, B, THETA, U)

# name -> (algorithm, hyper, reference run, kind of constraint handling)
CASES = {
    "flaxman": (
        FlaxmanBGD(),
        dict(nu=0.01, delta=0.1, xi=0.1),
        lambda h: ref.flaxman(SETUP, **h),
        "projection",
    ),
    "agarwal": (
        AgarwalTwoPoint(),
        dict(eta=0.05, delta=0.01, xi=0.05),
        lambda h: ref.agarwal(SETUP, **h),
        "projection",
    ),
    "flaxman-xonly": (
        FlaxmanBGDXOnly(),
        dict(nu=0.01, delta=0.1, xi=0.1),
        lambda h: ref.flaxman(SETUP, **h, known=False),
        "none",
    ),
    "agarwal-xonly": (
        AgarwalTwoPointXOnly(),
        dict(eta=0.05, delta=0.01, xi=0.05),
        lambda h: ref.agarwal(SETUP, **h, known=False),
        "none",
    ),
    "agarwal-strong": (
        AgarwalTwoPoint(strongly_convex=True),
        dict(eta=0.05, delta=0.01, xi=0.05, sigma=2.0),
        lambda h: ref.agarwal(SETUP, **h, mode="strong"),
        "projection",
    ),
    "mahdavi": (
        MahdaviPrimalDual(),
        dict(eta=0.1, delta_m=2.0, delta=0.01, xi=0.05),
        lambda h: ref.mahdavi(SETUP, **h),
        "multiplier",
    ),
    "recoo": (
        RECOO(),
        dict(c=0.5, eps=0.1, gamma_scale=0.3, eta_scale=0.1),
        lambda h: ref.recoo(SETUP, **h),
        "multiplier",
    ),
    "yuan-lamperski": (
        YuanLamperski(),
        dict(eta=0.05, sigma=2.0, delta=0.01, xi=0.05),
        lambda h: ref.yuan_lamperski(SETUP, **h),
        "multiplier",
    ),
    "yu-neely": (
        YuNeely(),
        dict(V=1.0, alpha=2.0, gamma=1.0, delta=0.01, xi=0.05),
        lambda h: ref.yu_neely(SETUP, **h),
        "multiplier",
    ),
    "yu-neely-full": (
        YuNeely(bandit=False),
        dict(V=1.0, alpha=2.0, gamma=1.0, delta=0.01, xi=0.05),
        lambda h: ref.yu_neely(SETUP, **h, bandit=False),
        "multiplier",
    ),
}

HYPERS = {
    FlaxmanBGD: FlaxmanHyper,
    AgarwalTwoPoint: AgarwalHyper,
    FlaxmanBGDXOnly: FlaxmanHyper,
    AgarwalTwoPointXOnly: AgarwalHyper,
    MahdaviPrimalDual: MahdaviHyper,
    RECOO: RecooHyper,
    YuanLamperski: YuanLamperskiHyper,
    YuNeely: YuNeelyHyper,
}


@functools.cache
def _runs(name):
    alg, kw, ref_fn, _ = CASES[name]
    res = simulate.run(
        replay(),
        T,
        HYPERS[type(alg)](**kw),
        algorithm=alg,
        directions=U,
        checkpoints=np.arange(1, T + 1),
        record_decisions=True,
        dtype="float64",
        comparator=False,
    )
    return res, ref_fn(kw)


@pytest.mark.parametrize("name", list(CASES))
def test_trajectory_matches_reference(name):
    res, out = _runs(name)
    xs_ref, x_next_ref = out[0], out[1]
    assert not bool(res.failed)
    xs = np.asarray(res.decisions)
    print(f"\n{name}: max|dx| = {np.max(np.abs(xs - xs_ref)):.2e}")
    np.testing.assert_allclose(xs, xs_ref, atol=ATOL, rtol=0)
    np.testing.assert_allclose(res.x_final, x_next_ref, atol=ATOL, rtol=0)
    if len(out) == 3:  # the multiplier (lambda or Q) as recorded at rounds 1..T
        np.testing.assert_allclose(
            res.lam, out[2], atol=ATOL * max(1.0, np.abs(out[2]).max()), rtol=0
        )
    # the constraint matters: unconstrained, the iterates would settle near a.x - b = 0.5
    if CASES[name][3] == "projection":  # many iterates projected onto a.x = b
        y = xs_ref - CASES[name][1]["delta"] * U if name == "flaxman" else xs_ref
        assert np.sum(np.abs(y @ A - B) < 1e-9) >= 20, "a.x <= b is not active"
    elif CASES[name][3] == "none":  # g not known (X-only variants): a.x <= b is violated
        assert np.sum(xs_ref @ A - B > 0.1) >= 20, "the X-only variant does not violate a.x <= b"
    else:  # violations occur, and the multiplier pulls the iterates back
        g = xs_ref @ A - B
        assert np.sum(g > 1e-3) >= 5 and np.mean(g[T // 2 :]) < 0.25, "a.x <= b is not exercised"


@pytest.mark.parametrize("name", ["flaxman", "agarwal", "agarwal-strong"])
def test_projection_methods_stay_feasible_with_fixed_constraint(name):
    """Iterates (y_t for Flaxman, x_t for Agarwal) lie in (1-xi)X n {g <= 0}."""
    res, _ = _runs(name)
    kw = CASES[name][1]
    xs = np.asarray(res.decisions)
    iterates = xs - kw["delta"] * U if name == "flaxman" else xs
    iterates = np.concatenate([iterates, np.asarray(res.x_final)[None]])
    assert np.max(np.linalg.norm(iterates, axis=1)) <= 1.0 - kw["xi"] + 1e-9
    assert np.max(iterates @ A - B) <= 1e-9


def test_closed_form_projection_matches_bisection():
    rng = np.random.default_rng(0)
    for _ in range(300):
        c, R = rng.normal(size=D), rng.uniform(0.5, 2.0)
        a = rng.normal(size=D)
        b = np.dot(a, c) + rng.uniform(-0.9, 0.9) * R * np.linalg.norm(a)
        z = c + 3.0 * rng.normal(size=D)
        x = ref.project_ball_halfspace(z, c, R, a, b)
        np.testing.assert_allclose(x, ref.project_ball_halfspace_bisect(z, c, R, a, b), atol=1e-9)
        assert np.linalg.norm(x - c) <= R + 1e-12 and np.dot(a, x) <= b + 1e-12


BAD = [
    (FlaxmanHyper, dict(nu=-1.0, delta=0.1, xi=0.1), "nu"),
    (FlaxmanHyper, dict(nu=0.1, delta=0.1, xi=1.0), "xi"),
    (AgarwalHyper, dict(eta=0.1, delta=0.0, xi=0.1), "delta"),
    (AgarwalHyper, dict(eta=0.1, delta=0.01, xi=0.1, sigma=-2.0), "sigma"),
    (MahdaviHyper, dict(eta=0.1, delta_m=0.0, delta=0.01, xi=0.1), "delta_m"),
    (MahdaviHyper, dict(eta=-0.1, delta_m=1.0, delta=0.01, xi=0.1), "eta"),
    (RecooHyper, dict(c=0.3), "c"),
    (RecooHyper, dict(eta_scale=0.0), "eta_scale"),
    (YuanLamperskiHyper, dict(eta=0.1, sigma=-1.0, delta=0.01, xi=0.1), "sigma"),
    (YuNeelyHyper, dict(V=1.0, alpha=1.0, gamma=0.0, delta=0.01, xi=0.1), "gamma"),
    (YuNeelyHyper, dict(V=1.0, alpha=-1.0, gamma=1.0, delta=0.01, xi=0.1), "alpha"),
]


@pytest.mark.parametrize("cls,kw,name", BAD, ids=[f"{c.__name__}-{n}" for c, _, n in BAD])
def test_hyper_rejects_out_of_range(cls, kw, name):
    with pytest.raises(ValueError, match=rf"^{name} must lie in"):
        cls(**kw)


@pytest.mark.parametrize("key", [k for k in ALGORITHMS if k != "rectified-bco"])
def test_defaults_valid_and_check_hyper(key):
    alg = ALGORITHMS[key]()
    hyper = alg.default_hyper(replay(), 1000)
    alg.check_hyper(hyper, replay())
    for leaf in jax.tree_util.tree_leaves(hyper):
        assert isinstance(leaf, jax.Array) and np.isfinite(leaf)
    with pytest.raises(ValueError, match="hyperparameters"):
        alg.check_hyper(object(), replay())
    if hasattr(hyper, "delta"):  # queries x +- delta u must stay in X: delta <= xi r
        bad = type(hyper)(
            **{
                **{f: getattr(hyper, f) for f in hyper.__dataclass_fields__},
                "delta": 0.5,
                "xi": 0.1,
            }
        )
        with pytest.raises(ValueError, match="delta must lie in"):
            alg.check_hyper(bad, replay())


# one hyperparameter of each, on a 2-value grid
SWEEP_FIELD = {
    "flaxman-bgd": "nu",
    "agarwal-2pt": "eta",
    "mahdavi-pd": "delta_m",
    "recoo": "c",
    "yuan-lamperski": "sigma",
    "yu-neely": "gamma",
    "agarwal-2pt-xonly": "eta",
}
T_SWEEP = 60


@pytest.mark.parametrize("key", list(SWEEP_FIELD))
def test_sweep_two_seeds_two_settings(key):
    problem = _problem(sequences.IIDNormal(jnp.asarray(0.6 * A), jnp.full(D, 0.3)))
    alg = ALGORITHMS[key]()
    hyper = alg.default_hyper(problem, T_SWEEP)
    field = SWEEP_FIELD[key]
    value = float(getattr(hyper, field))
    values = [value, 0.75] if key == "recoo" else [value, 2.0 * value]
    kw = {f: getattr(hyper, f) for f in hyper.__dataclass_fields__}
    grid = type(hyper)(**{**kw, field: jnp.asarray(values)})
    res = simulate.sweep(
        problem,
        T_SWEEP,
        grid,
        seeds=2,
        algorithm=alg,
        checkpoints=np.asarray([1, 10, T_SWEEP]),
        comparator=False,
    )
    assert res.regret.shape == (2, 2, 3)
    assert not res.failed.any()
    assert np.all(np.isfinite(res.regret)) and np.all(np.isfinite(res.x_final))
    assert not np.allclose(res.x_final[0], res.x_final[1])  # the grid values matter
    assert not np.allclose(res.x_final[:, 0], res.x_final[:, 1])  # so do the seeds


def test_knows_constraint_labels():
    """Oracle rows (g given in advance) are labelled at class level; their X-only variants not.
    Each pair is two final classes of one abstract class (no concrete class subclassed)."""
    known = {k for k, cls in ALGORITHMS.items() if cls.knows_constraint}
    assert known == {"flaxman-bgd", "agarwal-2pt"}
    for oracle, xonly in (
        (FlaxmanBGD, "flaxman-bgd-xonly"),
        (AgarwalTwoPoint, "agarwal-2pt-xonly"),
    ):
        base = oracle.__mro__[1]
        assert ALGORITHMS[xonly].__mro__[1] is base and base.__name__.startswith("Abstract")


def test_time_varying_constraint_is_not_projected_onto():
    """With g_t not known in advance, Flaxman/Agarwal project onto (1-xi)X only (eager step)."""
    phis = (jnp.asarray(np.tile(A, (T, 1))), jnp.full(T, B))
    problem = Problem(
        sets.L2Ball(jnp.zeros(D), 1.0),
        losses.Quadratic(),
        sequences.Replay(jnp.asarray(THETA)),
        constraints.Linear(),
        sequences.Replay(phis),
    )
    phi = (jnp.asarray(A), jnp.asarray(B))
    inp = RoundInput(
        jnp.asarray(1, jnp.int32),
        jnp.asarray(THETA[0]),
        phi,
        phi,
        jnp.asarray(A),
        jax.random.key(0),
    )
    for alg, hyper in [
        (FlaxmanBGD(), FlaxmanHyper(nu=0.01, delta=0.1, xi=0.1)),
        (AgarwalTwoPoint(), AgarwalHyper(eta=0.5, delta=0.01, xi=0.05)),
    ]:
        for prob, feasible in [(problem, False), (replay(), True)]:
            state = alg.init(prob, hyper, jnp.asarray(0.2 * A))
            x = np.asarray(alg.decision(alg.step(state, prob, hyper, inp)))
            assert (x @ A - B <= 1e-12) == feasible
            assert np.linalg.norm(x) <= 1.0 - float(hyper.xi) + 1e-12


# Two constraints (rows of a MultiLinear), both active at times: Mahdavi et al. keep one
# multiplier per constraint (BASELINES.md); the earlier reading kept one on max_k g_k.
ROWS_A = np.stack([A, np.roll(A * np.array([1.0, -1.0, 1.0, -1.0]), 1)])
ROWS_B = np.array([B, 0.05])


def test_mahdavi_one_multiplier_per_constraint():
    problem = Problem(
        sets.L2Ball(jnp.zeros(D), 1.0),
        losses.Quadratic(),
        sequences.Replay(jnp.asarray(THETA)),
        constraints.MultiLinear(),
        sequences.Fixed((jnp.asarray(ROWS_A), jnp.asarray(ROWS_B))),
    )
    kw = dict(eta=0.1, delta_m=2.0, delta=0.01, xi=0.05)
    xs_ref, x_next_ref, lam_ref = ref.mahdavi_rows(SETUP, ROWS_A, ROWS_B, **kw)
    res = simulate.run(
        problem,
        T,
        MahdaviHyper(**kw),
        algorithm=MahdaviPrimalDual(),
        directions=U,
        checkpoints=np.arange(1, T + 1),
        record_decisions=True,
        dtype="float64",
        comparator=False,
    )
    np.testing.assert_allclose(np.asarray(res.decisions), xs_ref, atol=ATOL, rtol=0)
    np.testing.assert_allclose(res.x_final, x_next_ref, atol=ATOL, rtol=0)
    np.testing.assert_allclose(res.lam, lam_ref, atol=ATOL * max(1.0, lam_ref.max()), rtol=0)
    g = xs_ref @ ROWS_A.T - ROWS_B
    assert (g > 1e-3).any(axis=0).all(), "each row is violated at some round"
    # the max-row reading (per_constraint=False) is a different algorithm on two rows
    old = simulate.run(
        problem,
        T,
        MahdaviHyper(**kw),
        algorithm=MahdaviPrimalDual(per_constraint=False),
        directions=U,
        checkpoints=np.arange(1, T + 1),
        record_decisions=True,
        dtype="float64",
        comparator=False,
    )
    assert np.max(np.abs(np.asarray(old.decisions) - xs_ref)) > 1e-4
