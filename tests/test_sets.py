"""Projections (inside / on / outside), inscribed balls, shrinkage and directions."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import sets

FLOAT64 = True  # float64 checks against NumPy (tests/conftest.py)

D = 5


@functools.cache
def _sets():
    """The sets in float64 (built inside the module's x64 context, not at import)."""
    return {
        "l2": sets.L2Ball(jnp.full(D, 0.3), 2.0),
        "box": sets.Box(jnp.linspace(-1.0, 0.0, D), jnp.linspace(1.0, 3.0, D)),
        "simplex": sets.Simplex(D),
        "l1": sets.L1Ball(jnp.full(D, -0.2), 1.5),
    }


NAMES = ["l2", "box", "simplex", "l1"]


def _in_set(name, X, x, tol=1e-9):
    x = np.asarray(x)
    if name == "l2":
        return np.linalg.norm(x - np.asarray(X.center)) <= float(X.radius) + tol
    if name == "box":
        return np.all(x >= np.asarray(X.lower) - tol) and np.all(x <= np.asarray(X.upper) + tol)
    if name == "simplex":
        return np.all(x >= -tol) and abs(x.sum() - 1.0) <= tol
    return np.abs(x - np.asarray(X.center)).sum() <= float(X.radius) + tol


def _proj_reference(name, X, z):
    """Independent projections: closed forms, or a sort-based formula for simplex / L1."""
    z = np.asarray(z, dtype=np.float64)
    if name == "l2":
        c, r = np.asarray(X.center), float(X.radius)
        v = z - c
        n = np.linalg.norm(v)
        return c + (v if n <= r else v * r / n)
    if name == "box":
        return np.clip(z, np.asarray(X.lower), np.asarray(X.upper))

    def simplex(v, s):
        u = np.sort(v)[::-1]
        css = np.cumsum(u) - s
        k = np.nonzero(u - css / np.arange(1, v.size + 1) > 0)[0][-1]
        return np.maximum(v - css[k] / (k + 1), 0.0)

    if name == "simplex":
        return simplex(z, 1.0)
    c, r = np.asarray(X.center), float(X.radius)
    v = z - c
    if np.abs(v).sum() <= r:
        return z
    return c + np.sign(v) * simplex(np.abs(v), r)


@pytest.mark.parametrize("name", NAMES)
def test_projection_inside_on_outside(name):
    X = _sets()[name]
    project = jax.jit(lambda z: X.project(z))
    rng = np.random.default_rng(0)
    c, r = (np.asarray(v) for v in X.inscribed_ball())
    for scale in (0.0, 0.5, 3.0, 50.0):
        for _ in range(20):
            z = c + scale * rng.normal(size=D)
            p = np.asarray(project(jnp.asarray(z)))
            assert _in_set(name, X, p)
            np.testing.assert_allclose(p, _proj_reference(name, X, z), atol=1e-10)
            if _in_set(name, X, z, tol=0.0):  # a point inside is its own projection
                np.testing.assert_allclose(p, z, atol=1e-12)
            # a projected point (on the boundary) is a fixed point
            np.testing.assert_allclose(np.asarray(project(jnp.asarray(p))), p, atol=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_inscribed_ball_inside(name):
    X = _sets()[name]
    c, r = (np.asarray(v) for v in X.inscribed_ball())
    key = jax.random.key(1)
    for k in jax.random.split(key, 200):
        u = np.asarray(X.sample_direction(k, jnp.float64))
        assert _in_set(name, X, c + float(r) * u, tol=1e-9)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("xi", [0.01, 0.3, 0.9])
def test_shrinkage_keeps_perturbed_points_in_X(name, xi):
    """For x in (1-xi)X and delta = xi r: x +- delta u in X (Flaxman et al. 2004)."""
    X = _sets()[name]
    _, r = X.inscribed_ball()
    delta = xi * float(r)
    rng = np.random.default_rng(2)
    z = np.asarray(X.inscribed_ball()[0]) + 5.0 * rng.normal(size=(100, D))
    x_all = np.asarray(jax.jit(jax.vmap(lambda v: sets.project_shrunk(X, v, jnp.asarray(xi))))(z))
    u_all = np.asarray(
        jax.vmap(lambda k: X.sample_direction(k, jnp.float64))(
            jax.random.split(jax.random.key(3), 100)
        )
    )
    for x, u in zip(x_all, u_all):
        assert _in_set(name, X, x + delta * u)
        assert _in_set(name, X, x - delta * u)


def test_directions_unit_and_in_hull():
    for name, X in _sets().items():
        us = jax.vmap(lambda k: X.sample_direction(k, jnp.float64))(
            jax.random.split(jax.random.key(4), 500)
        )
        np.testing.assert_allclose(np.linalg.norm(us, axis=1), 1.0, atol=1e-12)
        if name == "simplex":
            np.testing.assert_allclose(np.asarray(us).sum(axis=1), 0.0, atol=1e-12)
            assert X.hull_dim == D - 1
        else:
            assert X.hull_dim == D


@pytest.mark.parametrize(
    "bad",
    [
        lambda: sets.L2Ball(jnp.zeros(3), 0.0),
        lambda: sets.L2Ball(jnp.zeros(3), -1.0),
        lambda: sets.Box(jnp.ones(3), jnp.zeros(3)),
        lambda: sets.Simplex(1),
        lambda: sets.L1Ball(jnp.zeros(3), -2.0),
    ],
)
def test_bad_sets_raise(bad):
    with pytest.raises(ValueError, match="radius|upper|size"):
        bad()
