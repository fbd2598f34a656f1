"""Published problem presets: Yu-Neely's 2-D example (its c_t regimes checked at given rounds),
Hutchinson-Alizadeh's toy, online logistic regression; every preset builds and runs."""

import jax

FLOAT64 = True  # every test here is a float64 reference check (tests/conftest.py)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jaxbco import constraints as C  # noqa: E402
from jaxbco import losses as L  # noqa: E402
from jaxbco import problems, published, sets, simulate  # noqa: E402
from jaxbco.compare import default_hyper, make_algorithm  # noqa: E402
from jaxbco.problem import validate  # noqa: E402

PRESETS = ("yu-neely", "hutchinson-toy", "online-logistic", "nyse-portfolio")

NEGATIVE = (1, 2, 1499, 1500, 2000, 2001, 3500, 4000, 4500, 5000)  # c2 ~ U[-1, 0]^2
POSITIVE = (1501, 1700, 1999, 3501, 3800, 3999)  # c2 ~ U[0, 1]^2


def test_yu_neely_regimes_at_given_rounds():
    seq = published.YuNeelyCost(published.yu_neely_signs(5000))
    for t in NEGATIVE:
        assert bool(seq.negative(jnp.asarray(t, jnp.int32))), t
    for t in POSITIVE:
        assert not bool(seq.negative(jnp.asarray(t, jnp.int32))), t


@pytest.mark.parametrize("t", NEGATIVE[::3] + POSITIVE[::2])
def test_yu_neely_cost_is_c1_plus_c2_plus_c3(t):
    """c_t - c3_t = c1 + c2 with c1 in [-t^0.1, t^0.1]^2 and c2 in the round's regime; over
    many keys the mean of c_t - c3_t is the regime's mean (-1/2 or +1/2 per coordinate)."""
    signs = published.yu_neely_signs(5000)
    seq = published.YuNeelyCost(jnp.asarray(signs))
    tt = jnp.asarray(t, jnp.int32)
    keys = jax.random.split(jax.random.key(t), 4000)
    c = np.asarray(jax.vmap(lambda k: seq.sample(k, tt))(keys))
    assert c.shape == (4000, 2)
    rest = c - signs[t - 1]  # c3 = (-1)^mu(t) on both coordinates
    neg = t in NEGATIVE
    lo, hi = (-(t**0.1) - 1, t**0.1) if neg else (-(t**0.1), t**0.1 + 1)
    assert rest.min() >= lo - 1e-12 and rest.max() <= hi + 1e-12
    se = np.sqrt((t**0.2) / 3 + 1 / 12) / np.sqrt(4000)
    np.testing.assert_allclose(rest.mean(0), -0.5 if neg else 0.5, atol=5 * se)


def test_yu_neely_signs_and_windows():
    s = published.yu_neely_signs(5000)
    assert s.shape == (5000,) and set(np.unique(s)) == {-1.0, 1.0}
    assert (s == 1).sum() == 2500  # mu a permutation of 1..T: half even, half odd
    np.testing.assert_array_equal(s, published.yu_neely_signs(5000))  # fixed seed
    np.testing.assert_array_equal(published.yu_neely_windows(5000), published.YU_NEELY_WINDOWS)
    np.testing.assert_array_equal(
        published.yu_neely_windows(1000), [[1, 300], [401, 700], [801, 1000]]
    )


def test_yu_neely_preset():
    problem = problems.make("yu-neely")
    assert not problem.strongly_convex and problem.dim == 2 and isinstance(problem.domain, sets.Box)
    A, b = problem.constraint_data.value
    assert A.shape == (3, 2) and np.all((0 <= A) & (A <= 1)) and np.all((0 <= b) & (b <= 2))
    assert isinstance(problem.loss, L.Linear) and isinstance(problem.constraint, C.MultiLinear)
    assert problem.loss_data.signs.shape == (5000,)
    assert problems.make("yu-neely", horizon=300).loss_data.signs.shape == (300,)
    with pytest.raises(ValueError, match="2-dimensional"):
        problems.make("yu-neely", dim=3)


def test_hutchinson_and_logistic_presets():
    toy = problems.make("hutchinson-toy")
    assert toy.strongly_convex and float(toy.loss.strong_convexity()) == 6.0
    A, b = toy.constraint_data.value
    x = jnp.asarray([0.5, -0.5])
    assert float(toy.constraint.value(x, (A, b))) == pytest.approx(0.0)
    assert float(toy.constraint.value(jnp.asarray([0.6, 0.0]), (A, b))) == pytest.approx(0.1)
    logi = problems.make("online-logistic")
    assert logi.dim == 20 and float(logi.domain.radius) == 5.0
    phi = logi.constraint_data.value
    w = jnp.full(20, 2.0 / np.sqrt(20))  # ||w|| = B = 2: on the boundary
    assert float(logi.constraint.value(w, phi)) == pytest.approx(0.0, abs=1e-12)
    assert float(jnp.linalg.norm(logi.loss_data.w_true)) == pytest.approx(3.0)
    assert problems.make("online-logistic", dim=5).dim == 5


def test_registry_keeps_old_signature():
    problem = problems.make("quadratic-ball", 4)
    assert problem.dim == 4
    assert problems.make("quadratic-ball", horizon=100).dim == 10  # horizon ignored there
    with pytest.raises(ValueError, match="unknown problem"):
        problems.make("nope")


def _run(name, algorithm_name, problem, T=12):
    algorithm = make_algorithm(algorithm_name, problem)
    hyper = default_hyper(algorithm, problem, T)
    # comparator=False: x* is not under test here (and costs a compile)
    res = simulate.sweep(
        problem,
        T,
        hyper,
        seeds=1,
        algorithm=algorithm,
        checkpoints=np.arange(1, T + 1),
        dtype="float64",
        comparator=False,
        record_decisions=True,
    )
    assert not res.failed.any(), (name, algorithm_name)
    for m in ("regret", "hard_violation", "soft_violation"):
        assert np.all(np.isfinite(getattr(res, m))), (name, algorithm_name, m)
    return res


@pytest.mark.parametrize("name", PRESETS[1:])
def test_other_presets_run(name):
    """The paper's method on each other preset, nyse-portfolio in d = 4 (every algorithm runs on
    every named problem in the matrix, tests/_matrix.py, its x_T and x* checked in X)."""
    kwargs = {"dim": 4, "horizon": 12} if name == "nyse-portfolio" else {}
    problem = problems.make(name, **kwargs)
    validate(problem, 12)
    res = _run(name, "rectified-bco", problem)
    assert not res.failed.any() and res.rounds[-1] == 12
