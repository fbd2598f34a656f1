"""The Newton finish of ``ProximalPoint`` for a user's smooth g on a box
(``jaxbco.offline.newton_finish``): x* = argmin ⟨θ̄, x⟩ over X ∩ {g ≤ 0} against cvxpy, and
the certificate's gap well inside float32's tolerance (the proximal point steps alone sat at
it, so the comparator solved and certified every batch a second way)."""

import cvxpy as cp
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import certificate, comparator, constraints, losses, sequences, sets
from jaxbco.comparator.mean_theta import ProximalPoint
from jaxbco.keys import seed_keys
from jaxbco.offline import newton_finish
from jaxbco.problem import Problem

D = 5


def _data(seed):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(D, D)))
    P = (Q * np.geomspace(0.1, 10.0, D)) @ Q.T
    return 0.5 * (P + P.T), rng.normal(size=D) / np.sqrt(D) - 1.0 / np.sqrt(D)


def _fn(x, phi):
    P, q, s = phi
    return (x - q) @ P @ (x - q) - s


def _cvxpy(P, theta):
    x = cp.Variable(D)
    cp.Problem(cp.Minimize(theta @ x), [cp.abs(x) <= 1, cp.quad_form(x, P) <= 2.0]).solve(
        solver=cp.CLARABEL
    )
    return x.value


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_x_star_is_cvxpys(x64, seed):
    P, theta = _data(seed)
    X = sets.Box(-jnp.ones(D), jnp.ones(D))
    g = constraints.CustomConstraint(_fn)
    phi = (jnp.asarray(P), jnp.zeros(D), jnp.asarray(2.0))
    theta_seq = sequences.IIDNormal(jnp.zeros(D), 1.0)
    problem = Problem(X, losses.Linear(), theta_seq, g, sequences.Fixed(phi))
    x = ProximalPoint(constant_data=True).from_mean(problem, g, phi, jnp.asarray(theta))
    x_cvx = _cvxpy(P, theta)
    # feasible (box and g to round-off), no worse than cvxpy's objective, and near its point
    # (an LP's optimum on a curved set moves as the square root of its objective's error)
    assert np.all(np.abs(np.asarray(x)) <= 1.0) and float(_fn(x, phi)) <= 1e-13
    assert float(theta @ np.asarray(x)) <= float(theta @ x_cvx) + 1e-9
    np.testing.assert_allclose(np.asarray(x), x_cvx, atol=1e-4)


def test_a_wrong_start_is_left_as_it_was(x64):
    """A start whose face is wrong (a free coordinate of x* held at its bound, where its
    multiplier has the wrong sign) fails the finish's check: the start comes back."""
    X = sets.Box(-jnp.ones(2), jnp.ones(2))
    g = constraints.CustomConstraint(lambda x, r: jnp.sum(x * x) - r)
    start = jnp.array([0.3, 1.0])  # x* of min -x_1 over the disc of radius 1/2 is (0.5, 0)
    x = newton_finish.finish(X, g, jnp.asarray(0.25), jnp.array([-1.0, 0.0]), start)
    np.testing.assert_array_equal(x, start)


def test_the_certificate_passes_well_inside_float32s_tolerance():
    """The own box + dense ellipsoid written as a user's g (``benchmarks/problems.py``'s
    box-custom, d = 10): the proximal point steps alone left gaps of 2.6e-4 to 3.9e-4 against
    the tolerance 3.45e-4; finished, every seed's gap is below a tenth of it."""
    d, T = 10, 50
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    P = (Q * np.geomspace(0.1, 10.0, d)) @ Q.T
    problem = Problem(
        sets.Box(-jnp.ones(d), jnp.ones(d)),
        losses.Linear(),
        sequences.IIDNormal(jnp.full(d, -1.0 / np.sqrt(d)), 1.0 / np.sqrt(d)),
        constraints.CustomConstraint(_fn, interior=lambda phi: phi[1]),
        sequences.Fixed((jnp.asarray(0.5 * (P + P.T)), jnp.zeros(d), jnp.asarray(2.0))),
    )
    keys = seed_keys(jax.random.key(0), jnp.arange(16))
    method = comparator.select(problem, T)
    x = method.first.solve_batch(problem, keys, T)
    cert = certificate.certify_quick(problem, keys, T, x, None)
    worst = np.maximum(np.asarray(cert.gap), np.asarray(cert.constraint_violation))
    assert np.all(worst < 0.1 * certificate.tolerance(jnp.float32)), worst
