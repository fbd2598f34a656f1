"""Lemma 1: the two-point estimator (Eq. 4) is unbiased for the gradient of the smoothed loss
f^(x) = E_{v in unit ball} f(x + delta v), including on the simplex's affine hull.

Test function f(x) = exp(<a, x>): f^(x) = exp(<a, x>) M_k(delta ||a||) with
M_k(s) = E[exp(s v_1)] for v uniform in the k-ball, whose first coordinate has density
proportional to (1 - z^2)^((k-1)/2); so grad f^(x) = a exp(<a, x>) M_k(delta ||a||).  On the
simplex, a is replaced by its component in the hull's direction space and k = d - 1.

Statistics: N i.i.d. estimates, a z-test per coordinate at |z| < 5.5 (two-sided false-alarm
probability 3.8e-8 per coordinate, < 1e-6 over all coordinates and cases here).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import sets
from jaxbco.algorithms import two_point_gradient
from jaxbco.losses import CustomLoss

FLOAT64 = True  # float64 checks against NumPy (tests/conftest.py)

N = 200_000
Z = 5.5


def _mgf_ball_coordinate(s, k):
    z = np.linspace(-1.0, 1.0, 200_001)
    w = (1.0 - z * z) ** ((k - 1) / 2.0)
    return np.trapezoid(np.exp(s * z) * w, z) / np.trapezoid(w, z)


@pytest.mark.parametrize("domain_name", ["ball", "simplex"])
def test_two_point_estimator_unbiased_for_smoothed_gradient(domain_name):
    d = 4
    if domain_name == "ball":
        X = sets.L2Ball(jnp.zeros(d), 1.0)
        x = jnp.asarray([0.1, -0.2, 0.3, 0.0])
        a = np.asarray([1.0, -0.5, 0.8, 0.3])
        a_dir = a
    else:
        X = sets.Simplex(d)
        x = jnp.asarray([0.4, 0.3, 0.2, 0.1])
        a = np.asarray([1.0, -0.5, 0.8, 0.3])
        a_dir = a - a.mean()
    delta = 0.5  # large, so the smoothed gradient differs visibly from the plain one
    k = X.hull_dim
    loss = CustomLoss(lambda z, th: jnp.exp(jnp.dot(th, z)))
    theta = jnp.asarray(a)

    def one(key):
        u = X.sample_direction(key, jnp.float64)
        return two_point_gradient(loss, theta, x, u, jnp.asarray(delta), jnp.asarray(float(k)))

    est = np.asarray(jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(7), N)))
    target = (
        a_dir * np.exp(a @ np.asarray(x)) * _mgf_ball_coordinate(delta * np.linalg.norm(a_dir), k)
    )
    plain = a_dir * np.exp(a @ np.asarray(x))
    mean = est.mean(0)
    se = est.std(0, ddof=1) / np.sqrt(N)
    z = (mean - target) / se
    assert np.all(np.abs(z) < Z), (mean, target, z)
    # the test has power: the unsmoothed gradient is rejected
    assert np.max(np.abs((mean - plain) / se)) > Z
    if domain_name == "simplex":
        np.testing.assert_allclose(est.sum(1), 0.0, atol=1e-9)  # estimates stay in the hull
