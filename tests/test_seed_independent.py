"""Data every seed shares (both sequences ``shared``): x* is one point, solved once and
broadcast to every seed, equal to each seed's own pre-pass; drawn data keep one x* per seed."""

import jax
import jax.numpy as jnp
import numpy as np

import jaxbco
from jaxbco import constraints, engine, losses, problems, sequences, sets
from jaxbco.keys import seed_keys

FLOAT64 = True  # a float64 reference check (tests/conftest.py)
T = 30


def _replayed_logistic(d=3):
    rng = np.random.default_rng(0)
    w = rng.normal(size=(T, d))
    y = np.where(w @ np.array([1.0, -0.5, 0.3]) + 0.3 * rng.normal(size=T) >= 0, 1.0, -1.0)
    return jaxbco.Problem(
        sets.L2Ball(jnp.zeros(d), 1.0),
        losses.Logistic(),
        sequences.Replay((jnp.asarray(w), jnp.asarray(y))),
        constraints.Ball(),
        sequences.Fixed((jnp.full(d, 0.2), jnp.asarray(0.5))),
    )


def test_shared_data_one_x_star_for_every_seed():
    problem = _replayed_logistic()
    assert engine.seed_independent(problem)
    res = jaxbco.sweep(problem, T, seeds=5, dtype="float64", checkpoints=[T])
    per_seed = jax.vmap(jaxbco.offline_optimum, (None, 0, None))(
        jaxbco.simulate._cast(problem, "float64"), seed_keys(jax.random.key(0), jnp.arange(5)), T
    )
    assert np.all(res.x_star == res.x_star[0])  # one point, bitwise, for every seed
    np.testing.assert_allclose(res.x_star, np.asarray(per_seed), rtol=0, atol=1e-12)
    assert np.all(res.x_star_ok)
    assert np.all(res.x_star_certificate == res.x_star_certificate[0])  # certified once


def test_drawn_data_keep_one_x_star_per_seed():
    problem = problems.make("logistic-ball", 3)
    assert not engine.seed_independent(problem)
    res = jaxbco.sweep(problem, T, seeds=3, checkpoints=[T])
    assert not np.allclose(res.x_star[0], res.x_star[1])
