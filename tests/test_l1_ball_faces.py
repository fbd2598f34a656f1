"""x* on an L1 ball past its 2^10 facets, and on its lower-dimensional faces, against CLARABEL in
float64 (one float32 sweep): many replayed rows at d = 12 and 16 (the barrier method on the
lifted ball |x_i - c_i| < t_i, sum t < r: ``jaxbco.offline.barrier.Lifted``), and the absolute
loss with the ball binding at d = 8 and 12 (the local LPs on the lifted ball; the certificate's
far steered cuts across the ball's kinks ~1e-10 beside an LP's x*).

Measured before (benchmarks/NOTES.md, session 28): 200 rows at d = 12, x* 1.4e-5 off and
infeasible by 1.5e-6, certificate gap 0.23, a false "no common point" FeasibilityWarning;
1000 rows at d = 16, 1.2e-3 off; the absolute loss at d = 12, F 0.018 above F* (flagged), and
at d = 8 an exact x* (F within 7e-12) flagged with a gap of 2.4e-3."""

import warnings

import cvxpy as cp
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbco
from jaxbco import constraints as C
from jaxbco import losses as L
from jaxbco import sequences as Seq
from jaxbco import sets
from jaxbco.certificate import certify_seed, tolerance
from jaxbco.comparator import offline_optimum
from jaxbco.keys import seed_keys
from jaxbco.problem import FeasibilityWarning, check_feasible

_CLARABEL = dict(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
_OPTIMUM = eqx.filter_jit(lambda problem, k, T: offline_optimum(problem, k, T))
_CERTIFY = eqx.filter_jit(lambda problem, k, T, x: certify_seed(problem, k, T, x))
_KEY = lambda: seed_keys(jax.random.key(0), jnp.arange(1))[0]


def _rows_problem(d, T, loss, dtype=jnp.float64):
    rng = np.random.default_rng(3)
    A = rng.normal(size=(T, d))
    A /= np.linalg.norm(A, axis=1, keepdims=True)
    b = A @ np.full(d, 0.05) + rng.uniform(0.005, 0.1, T)  # X's centre violates some rows
    thetas = rng.normal(size=(T, d)) + 0.5
    problem = jaxbco.Problem(
        sets.L1Ball(jnp.zeros(d, dtype), jnp.asarray(1.0, dtype)),
        {"linear": L.Linear(), "quadratic": L.Quadratic()}[loss],
        Seq.Replay(jnp.asarray(thetas, dtype)),
        C.Linear(),
        Seq.Replay((jnp.asarray(A, dtype), jnp.asarray(b, dtype))),
    )
    z = cp.Variable(d)
    mean = thetas.mean(0)
    objective = mean @ z if loss == "linear" else cp.sum_squares(z - mean)
    cp.Problem(cp.Minimize(objective), [A @ z <= b, cp.norm1(z) <= 1]).solve(**_CLARABEL)
    return problem, z.value, A, b


@pytest.mark.parametrize(("d", "T", "loss"), [(12, 200, "linear"), (16, 1000, "quadratic")])
def test_many_rows_on_a_large_l1_ball_exact(x64, d, T, loss):
    problem, x_cvx, A, b = _rows_problem(d, T, loss)
    x = np.asarray(_OPTIMUM(problem, _KEY(), T))
    assert np.abs(x - x_cvx).max() <= 1e-9  # measured 1.5e-13, 2.3e-12
    assert (A @ x - b).max() <= 1e-12 and np.abs(x).sum() <= 1 + 1e-12
    assert max(float(v) for v in _CERTIFY(problem, _KEY(), T, jnp.asarray(x))) <= tolerance(
        jnp.float64
    )
    with warnings.catch_warnings():  # phase I on the lifted ball finds the rows' common point
        warnings.simplefilter("error", FeasibilityWarning)
        assert not check_feasible(problem, T)


def _absolute_problem(d, dtype):
    T = 200
    rng = np.random.default_rng(3)
    thetas = 0.3 * rng.normal(size=(T, d)) + np.linspace(-0.6, 0.6, d)  # pulls past the ball
    a = np.ones(d) / np.sqrt(d)
    problem = jaxbco.Problem(
        sets.L1Ball(jnp.zeros(d, dtype), jnp.asarray(1.0, dtype)),
        L.Absolute(),
        Seq.Replay(jnp.asarray(thetas, dtype)),
        C.Linear(),
        Seq.Fixed((jnp.asarray(a, dtype), jnp.asarray(0.1, dtype))),
    )
    th = np.asarray(jnp.asarray(thetas, dtype), np.float64)
    z = cp.Variable(d)
    F = lambda x: cp.sum(cp.abs(x[None, :] - th)) / T
    best = cp.Problem(cp.Minimize(F(z)), [a @ z <= 0.1, cp.norm1(z) <= 1]).solve(**_CLARABEL)
    return problem, T, lambda x: np.abs(x[None] - th).sum() / T, best


@pytest.mark.parametrize("d", [8, 12])
def test_absolute_loss_on_an_l1_ball_face_exact_and_certified(x64, d):
    problem, T, F, best = _absolute_problem(d, jnp.float64)
    x = _OPTIMUM(problem, _KEY(), T)
    xn = np.asarray(x)
    assert np.abs(xn).sum() <= 1 + 1e-12
    assert np.abs(xn).sum() >= 1 - 1e-8  # the ball binds
    assert F(xn) - best <= 1e-8 * abs(best)  # measured 7e-12 (d = 8) and 1.3e-9 (d = 12)
    cert = _CERTIFY(problem, _KEY(), T, x)
    assert max(float(v) for v in cert) <= tolerance(jnp.float64)  # measured 1.2e-12, 1.6e-10


def test_absolute_loss_on_an_l1_ball_face_float32_sweep():
    problem, T, F, best = _absolute_problem(12, jnp.float32)
    res = jaxbco.sweep(problem, T, seeds=2)
    assert np.asarray(res.x_star_ok).all()
    for x in np.asarray(res.x_star, np.float64).reshape(-1, 12):
        assert F(x) - best <= 1e-5 * abs(best)  # measured 2.1e-5 absolute on seed 0 (F* 3.9)
