"""The comparator's certificate cannot be fooled by scale (``jaxbco.offline.variation``,
``jaxbco.offline.curved``): its verdict on a point is the same when a constant is added to f
or X is grown around a fixed feasible region, in float64 and in float32; a right point passes,
a feasible point that is measurably worse fails, at every scale.  Where float32 cannot resolve
the gap (a constant that dominates F), the point is reported as not certified, never as
certified, and the warning says float64 resolves it.

The optima are independent references: the linear loss's on a ball in closed form (-m / |m|),
the others by cvxpy/CLARABEL in float64.  Data are recorded (``Replay``), so that float32 and
float64 see the same rounds; each problem structure compiles once (its arrays are arguments).
"""

from __future__ import annotations

import warnings

import cvxpy as cp  # a hard test dependency: missing fails, never skips
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbco
from jaxbco import Problem, certificate, sets
from jaxbco import constraints as C
from jaxbco import losses as L
from jaxbco import sequences as Seq
from jaxbco.certificate import CertificateWarning
from jaxbco.keys import seed_keys

T, D = 40, 4
RNG = np.random.default_rng(57)
THETA = np.array([1.0, -2.0, 0.5, 3.0]) + 0.3 * RNG.normal(size=(T, D))
WORSE = (1e-3, 0.05, 0.5)  # feasible points x* + w (X's centre - x*): measurably worse


@eqx.filter_jit
def _verdicts(problem, points):
    """(passes, gap) of ``certificate.certify_seed`` at each point, one program per structure."""
    key = seed_keys(jax.random.key(0), jnp.arange(1))[0]
    cert = jax.lax.map(lambda p: certificate.certify_seed(problem, key, T, p), points)
    return certificate.passes(cert, points.dtype), cert.gap


def _check(problem, x_star, dtype):
    """The verdicts at x* and at the worse points, and their gaps."""
    centre = np.zeros(D)
    pts = [x_star] + [x_star + w * (centre - x_star) for w in WORSE]
    ok, gap = _verdicts(problem, jnp.asarray(np.stack(pts), dtype))
    return np.asarray(ok), np.asarray(gap)


def _linear_ball(B, dtype):
    """Linear loss, the unit ball as a fixed constraint, on the box [-B, B]^d."""
    return Problem(
        sets.Box(-B * jnp.ones(D, dtype), B * jnp.ones(D, dtype)),
        L.Linear(),
        Seq.Replay(jnp.asarray(THETA, dtype)),
        C.Ball(),
        Seq.Fixed((jnp.zeros(D, dtype), jnp.asarray(1.0, dtype))),
    )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_growing_X_around_a_fixed_region_changes_no_verdict(dtype):
    """Linear loss, unit ball constraint, X a box of half-width 2 to 1e4: x* (closed form)
    passes and the worse points fail at every size (the certificate's tolerance used to grow
    with X's diameter: a point 0.14 from x* passed on the box of 1e4 in float32)."""
    with jax.enable_x64(dtype == "float64"):
        m = THETA.mean(axis=0)
        x_star = -m / np.linalg.norm(m)
        seen = {}
        for B in (2.0, 1e2, 1e4):
            seen[B] = _check(_linear_ball(B, dtype), x_star, dtype)
    for B, (ok, gap) in seen.items():
        assert ok[0] and not ok[1:].any(), (B, gap)
        assert np.all(np.diff(gap[1:]) > 0), (B, gap)  # worse points, larger gaps


def _ellipsoid_problem(R, dtype):
    P = np.diag([1.0, 2.0, 3.0, 4.0])
    return Problem(
        sets.L2Ball(jnp.zeros(D, dtype), jnp.asarray(R, dtype)),
        L.Quadratic(),
        Seq.Replay(jnp.asarray(THETA, dtype)),
        C.Ellipsoid(),
        Seq.Fixed((jnp.asarray(P, dtype), jnp.zeros(D, dtype), jnp.asarray(1.0, dtype))),
    )


def _ellipsoid_optimum():
    z = cp.Variable(D)
    P = np.diag([1.0, 2.0, 3.0, 4.0])
    goal = cp.sum_squares(z - THETA.mean(axis=0))  # F up to a constant
    cp.Problem(cp.Minimize(goal), [cp.quad_form(z, P) <= 1.0]).solve(
        solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12
    )
    return np.asarray(z.value)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_ellipsoid_on_growing_balls_changes_no_verdict(dtype):
    """Quadratic loss, a fixed ellipsoid diag(1, 2, 3, 4), X a ball of radius 1 to 1e4."""
    x_star = _ellipsoid_optimum()
    with jax.enable_x64(dtype == "float64"):
        seen = {R: _check(_ellipsoid_problem(R, dtype), x_star, dtype) for R in (1.0, 1e2, 1e4)}
    for R, (ok, gap) in seen.items():
        assert ok[0] and not ok[1:].any(), (R, gap)


def _offset_problem(offset, dtype):
    """f(x, (c, theta)) = c + |x - theta|^2 (a user's loss), c the same every round; the
    unit ball, a linear constraint that binds at the optimum."""
    data = np.concatenate([np.full((T, 1), offset), THETA - 1.5], axis=1)
    return Problem(
        sets.L2Ball(jnp.zeros(D, dtype), jnp.asarray(1.0, dtype)),
        L.CustomLoss(lambda x, th: th[0] + jnp.sum((x - th[1:]) ** 2)),
        Seq.Replay(jnp.asarray(data, dtype)),
        C.Linear(),
        Seq.Fixed((jnp.ones(D, dtype), jnp.asarray(0.1, dtype))),
    )


def _offset_optimum():
    z = cp.Variable(D)
    goal = cp.sum_squares(z - (THETA - 1.5).mean(axis=0))
    cp.Problem(cp.Minimize(goal), [cp.norm(z) <= 1.0, cp.sum(z) <= 0.1]).solve(
        solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12
    )
    return np.asarray(z.value)


@pytest.mark.parametrize("dtype, offsets", [("float64", (0.0, 1e3, 1e6)), ("float32", (0.0, 10.0))])
def test_constant_added_to_f_changes_no_verdict(dtype, offsets):
    """c + |x - theta|^2 for constants c float64 resolves (to 1e6) and float32 resolves (to 10):
    the same verdicts (the gap used to be judged against |F|: with c = 1e6 a point 1.2 from
    x* passed in float32)."""
    x_star = _offset_optimum()
    with jax.enable_x64(dtype == "float64"):
        seen = {c: _check(_offset_problem(c, dtype), x_star, dtype) for c in offsets}
    for c, (ok, gap) in seen.items():
        assert ok[0] and not ok[1:].any(), (c, gap)


def test_float32_cannot_resolve_a_dominating_constant():
    """c = 1e6 in float32: F's round-off (~0.1) is far above tolerance x F's variation (~5),
    so no point is certified, the right one included, and the sweep's warning says so."""
    x_star = _offset_optimum()
    ok, gap = _check(_offset_problem(1e6, "float32"), x_star, "float32")
    assert not ok.any(), gap
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = jaxbco.sweep(_offset_problem(1e6, "float32"), T, seeds=2)
    assert not np.asarray(res.x_star_ok).any()
    text = " ".join(str(w.message) for w in seen if issubclass(w.category, CertificateWarning))
    assert "dtype='float64'" in text, text


def test_float32_sweep_on_a_large_box_never_certifies_a_wrong_x_star():
    """The issue's case: linear loss, unit ball constraint, the box of 1e4, float32: x* is
    either right (within float32's resolution of F) or flagged."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CertificateWarning)  # flagged: the test reads x_star_ok
        res = jaxbco.sweep(_linear_ball(1e4, "float32"), T, seeds=2, key=3)
    m = THETA.mean(axis=0)
    excess = (np.asarray(res.x_star, np.float64) @ m + np.linalg.norm(m)) / (2 * np.linalg.norm(m))
    ok = np.asarray(res.x_star_ok)
    assert np.all(~ok | (excess <= 1e-4)), (ok, excess)


def _max_loss_problem():
    a = np.ones(3) / np.sqrt(3)
    return Problem(
        sets.Box(-jnp.ones(3), jnp.ones(3)),
        L.CustomLoss(lambda x, th: jnp.max(jnp.abs(x - th))),
        Seq.Replay(jnp.asarray(0.5 + 0.2 * RNG.normal(size=(T, 3)), jnp.float32)),
        C.Linear(),
        Seq.Fixed((jnp.asarray(a, jnp.float32), jnp.asarray(0.3, jnp.float32))),
    )


def test_a_right_x_star_of_a_max_loss_is_certified():
    """f = max_i |x_i - theta_i| (a user's piecewise-linear loss, kinks wherever two
    coordinates tie in some round), float32: x* is right (cvxpy) and certified; it was flagged
    (gap 0.017), the certificate's probes at x +- h e_i missing the tied rounds' subgradients."""
    problem = _max_loss_problem()
    thetas = np.asarray(problem.loss_data.values, np.float64)
    a = np.ones(3) / np.sqrt(3)
    z = cp.Variable(3)
    goal = sum(cp.max(cp.abs(z - th)) for th in thetas) / T
    cp.Problem(cp.Minimize(goal), [cp.abs(z) <= 1, a @ z <= 0.3]).solve(solver="CLARABEL")
    F = lambda x: np.mean(np.max(np.abs(x[None] - thetas), axis=1))
    res = jaxbco.sweep(problem, T, seeds=2)
    for x in np.asarray(res.x_star, np.float64):
        assert F(x) - F(z.value) <= 1e-5, (x, z.value)
    assert np.asarray(res.x_star_ok).all(), res.x_star_certificate
