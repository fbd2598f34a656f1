"""Trajectory-level check of jaxbco against an independent NumPy float64 implementation of
Algorithm 1 (tests/reference_numpy.py, written from the paper).

Both sides replay the same loss data theta_t and the same unit directions u_t, so the
trajectories x_1..x_T, the penalties lambda_1..lambda_T and x_{T+1} must agree to ~1e-8.
"""

import os
import sys

FLOAT64 = True  # every test here is a float64 reference check (tests/conftest.py)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jaxbco import constraints, losses, sequences, sets, simulate  # noqa: E402
from jaxbco.hyper import Hyper  # noqa: E402
from jaxbco.problem import Problem  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import reference_numpy as ref  # noqa: E402

D, T = 5, 200
ATOL = 1e-8

# constraint a.x <= b with unit normal a
A = np.ones(D) / np.sqrt(D)
B = 0.1

BOX_LO = -np.array([1.0, 0.8, 1.2, 1.0, 0.9])
BOX_HI = np.array([1.1, 1.0, 0.9, 1.3, 1.0])  # midpoint != 0, inscribed radius r = 0.9


def _directions(seed):
    rng = np.random.default_rng(seed)
    U = rng.normal(size=(T, D))
    return U / np.linalg.norm(U, axis=1, keepdims=True)


def _ball_quadratic_data(seed=1):
    """theta_t scattered around 0.6 a: the unconstrained optimum has a.x ~ 0.6 > b = 0.1."""
    rng = np.random.default_rng(seed)
    return 0.6 * A + 0.1 * rng.normal(size=(T, D))


def _box_linear_data(seed=2):
    """theta_t ~ -(1, ..., 1) + noise: the unconstrained optimum is the corner hi, a.hi >> b."""
    rng = np.random.default_rng(seed)
    return -np.ones(D) + 0.3 * rng.normal(size=(T, D))


def _jax_run(kind, theta, U, hyper_kw):
    if kind == "ball":
        domain = sets.L2Ball(jnp.zeros(D), 1.0)
        loss = losses.Quadratic(scale=1.0)
    else:
        domain = sets.Box(jnp.asarray(BOX_LO), jnp.asarray(BOX_HI))
        loss = losses.Linear()
    prob = Problem(
        domain=domain,
        loss=loss,
        loss_data=sequences.Replay(jnp.asarray(theta)),
        constraint=constraints.Linear(),
        constraint_data=sequences.Fixed((jnp.asarray(A), jnp.asarray(B))),
    )
    res = simulate.run(
        prob,
        T,
        Hyper(**hyper_kw),
        directions=jnp.asarray(U),
        checkpoints=np.arange(1, T + 1),
        record_decisions=True,
        dtype="float64",
        comparator=False,
    )
    return np.asarray(res.decisions), np.asarray(res.lam), np.asarray(res.x_final), res


def _ref_run(kind, theta, U, hyper_kw):
    if kind == "ball":
        X, f = ref.Ball(np.zeros(D), 1.0), ref.quadratic_loss(1.0)
    else:
        X, f = ref.BoxSet(BOX_LO, BOX_HI), ref.linear_loss()
    return ref.run_reference(X, f, theta, U, A, B, **hyper_kw)


def _hyper(c, eps, xi=0.05, delta=0.01, alpha_scale=1.0, gamma_scale=1.0, eta_scale=1.0):
    return dict(
        c=c,
        eps=eps,
        xi=xi,
        delta=delta,
        alpha_scale=alpha_scale,
        gamma_scale=gamma_scale,
        eta_scale=eta_scale,
    )


CASES = [
    # (id, kind, hyper)
    ("ball-c0.5-eps0.1", "ball", _hyper(0.5, 0.1)),
    ("ball-c0.75-eps0.5", "ball", _hyper(0.75, 0.5)),
    (
        "ball-c0.5-eps0.5-scaled",
        "ball",
        _hyper(0.5, 0.5, alpha_scale=2.0, gamma_scale=0.5, eta_scale=0.3),
    ),
    ("ball-large-xi-delta", "ball", _hyper(0.5, 0.1, xi=0.3, delta=0.25)),
    ("box-c0.5-eps0.1", "box", _hyper(0.5, 0.1)),
    ("box-c0.75-eps0.5", "box", _hyper(0.75, 0.5)),
    (
        "box-c0.75-eps0.1-scaled",
        "box",
        _hyper(0.75, 0.1, alpha_scale=0.5, gamma_scale=2.0, eta_scale=1.5),
    ),
    ("box-large-xi-delta", "box", _hyper(0.5, 0.1, xi=0.3, delta=0.25)),
    # weak penalty (small gamma and eta scales): the iterates overshoot a.x = b by more than
    # round-off, so lambda accumulates gamma_{t+1} [g(x_t)]_+ above its floor eta_{t+1} and the
    # penalty-capped branch (mu = beta) of the subproblem occurs.  These cases distinguish
    # g(x_t) from g(x_{t+1}) in line 9 (the two readings differ by ~0.1 in x here).
    ("ball-weak-c0.5-eps0.1", "ball", _hyper(0.5, 0.1, gamma_scale=0.1, eta_scale=0.01)),
    ("ball-weak-c0.75-eps0.5", "ball", _hyper(0.75, 0.5, gamma_scale=0.05, eta_scale=0.01)),
    (
        "ball-weak-large-xi-delta",
        "ball",
        _hyper(0.5, 0.1, xi=0.3, delta=0.25, gamma_scale=0.1, eta_scale=0.01),
    ),
    ("box-weak-c0.5-eps0.1", "box", _hyper(0.5, 0.1, gamma_scale=0.1, eta_scale=0.01)),
    ("box-weak-c0.75-eps0.5", "box", _hyper(0.75, 0.5, gamma_scale=0.05, eta_scale=0.01)),
    (
        "box-weak-large-xi-delta",
        "box",
        _hyper(0.5, 0.1, xi=0.3, delta=0.25, gamma_scale=0.1, eta_scale=0.01),
    ),
]


@pytest.mark.parametrize("kind,hyper_kw", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_trajectory_matches_reference(kind, hyper_kw):
    theta = _ball_quadratic_data() if kind == "ball" else _box_linear_data()
    U = _directions(3 if kind == "ball" else 4)

    xs_ref, lam_ref, xnext_ref = _ref_run(kind, theta, U, hyper_kw)
    xs, lam, xnext, res = _jax_run(kind, theta, U, hyper_kw)

    assert not bool(res.failed)
    assert xs.shape == (T, D) and lam.shape == (T,)

    # the constraint really is active: many iterates sit exactly on a.x = b (the bisection
    # branch of the subproblem), which the unconstrained problem would not produce
    g_ref = xs_ref @ A - B
    assert np.sum(np.abs(g_ref) < 1e-9) >= T // 4, "constraint a.x <= b is not active"
    if hyper_kw["eta_scale"] < 0.1:
        # weak penalty: real violations, and lambda leaves its floor eta_t
        t = np.arange(1, T + 1)
        eta = hyper_kw["eta_scale"] * t ** hyper_kw["c"]
        assert np.sum(g_ref > 1e-3) >= 5
        assert np.sum(lam_ref > eta * (1 + 1e-9)) >= T // 2

    dx = np.max(np.abs(xs - xs_ref))
    dlam = np.max(np.abs(lam - lam_ref))
    dnext = np.max(np.abs(xnext - xnext_ref))
    print(f"\n{kind} {hyper_kw}: max|dx|={dx:.3e} max|dlam|={dlam:.3e} |dx_T+1|={dnext:.3e}")

    np.testing.assert_allclose(xs, xs_ref, atol=ATOL, rtol=0)
    np.testing.assert_allclose(xnext, xnext_ref, atol=ATOL, rtol=0)
    # lambda grows like t^(c+eps); compare relative to its size as well as absolutely
    np.testing.assert_allclose(lam, lam_ref, atol=ATOL * max(1.0, np.abs(lam_ref).max()), rtol=0)


def test_reference_solver_kkt():
    """The reference subproblem solver returns a point of S satisfying the prox KKT conditions:
    x = Pi_S(y - mu a / alpha) with mu in beta * subdiff [a.x - b]_+ (checked by optimality of
    the objective against random feasible perturbations)."""
    rng = np.random.default_rng(0)
    for k in range(200):
        S = ref.Ball(np.zeros(D), 0.9) if k % 2 else ref.BoxSet(BOX_LO * 0.9, BOX_HI * 0.9)
        y = 1.5 * rng.normal(size=D)
        a = rng.normal(size=D)
        b = 0.3 * rng.normal()
        alpha = rng.uniform(0.5, 5.0)
        beta = [0.0, rng.uniform(0, 0.5), rng.uniform(0, 5.0)][k % 3]
        x = ref.solve_subproblem(y, alpha, beta, a, b, S)
        assert S.contains(x, 1e-14)
        F = lambda v: 0.5 * alpha * np.dot(v - y, v - y) + beta * max(np.dot(a, v) - b, 0.0)
        Fx = F(x)
        for _ in range(20):
            z = S.project(x + 0.05 * rng.normal(size=D))
            # strong convexity: F(z) >= F(x) + alpha/2 ||z - x||^2 at the minimiser
            assert F(z) >= Fx + 0.5 * alpha * np.dot(z - x, z - x) - 1e-10
