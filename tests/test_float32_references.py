"""float32 end to end, with 64-bit JAX off (the users' configuration), against the independent
float64 references: Algorithm 1's trajectories against the NumPy implementation
(tests/reference_numpy.py) and the offline comparator x* against cvxpy.

float32's unit round-off is eps = 1.2e-7.  The trajectories replay float32 data (the reference
gets the same numbers in float64) and must agree to 10 eps / delta = 1000 eps (delta = 0.01)
relative to the iterates' scale over T = 200 rounds: the two-point difference
f(x + delta u) - f(x - delta u) carries eps |f| of round-off into a gradient of size |f| / delta
(the README's float32 note: log10(1/delta) digits lost), each round's prox is 1-Lipschitz and
its step 1/alpha_t shrinks, so the rounds' errors stay near that level (measured: 230 eps).  x* must be feasible to
64 eps (relative to the constraint's scale) and within 1e-5 of cvxpy's objective (relative):
a float32 iterative solve stops at its round-off level, ~sqrt(eps) in x where g binds, and the
objective is first-order in that only through the multiplier.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import constraints, losses, sequences, sets, simulate
from jaxbco.hyper import Hyper
from jaxbco.problem import Problem

sys.path.insert(0, os.path.dirname(__file__))
import reference_numpy as ref  # noqa: E402
import test_comparator as oracle  # noqa: E402  (its cvxpy forms of the problems)

EPS32 = float(np.finfo(np.float32).eps)
D, T = 5, 200
A = np.ones(D) / np.sqrt(D)
B = 0.1
BOX_LO = -np.array([1.0, 0.8, 1.2, 1.0, 0.9])
BOX_HI = np.array([1.1, 1.0, 0.9, 1.3, 1.0])


def _f32(v):
    return np.asarray(v, np.float32).astype(np.float64)  # float32 numbers, held in float64


def _case(kind, seed):
    rng = np.random.default_rng(seed)
    U = rng.normal(size=(T, D))
    U = _f32(U / np.linalg.norm(U, axis=1, keepdims=True))
    if kind == "ball":
        theta = _f32(0.6 * A + 0.1 * rng.normal(size=(T, D)))
        domain, loss = sets.L2Ball(jnp.zeros(D), 1.0), losses.Quadratic(scale=1.0)
        X, f = ref.Ball(np.zeros(D), 1.0), ref.quadratic_loss(1.0)
    else:
        theta = _f32(-np.ones(D) + 0.3 * rng.normal(size=(T, D)))
        domain, loss = sets.Box(jnp.asarray(BOX_LO), jnp.asarray(BOX_HI)), losses.Linear()
        X, f = ref.BoxSet(_f32(BOX_LO), _f32(BOX_HI)), ref.linear_loss()
    problem = Problem(
        domain=domain,
        loss=loss,
        loss_data=sequences.Replay(jnp.asarray(theta)),
        constraint=constraints.Linear(),
        constraint_data=sequences.Fixed((jnp.asarray(A), jnp.asarray(B))),
    )
    return problem, theta, U, X, f


HYPERS = {
    "c0.5-eps0.1": dict(c=0.5, eps=0.1, xi=0.05, delta=0.01),
    "c0.75-eps0.5": dict(c=0.75, eps=0.5, xi=0.05, delta=0.01),
    "weak": dict(c=0.5, eps=0.1, xi=0.05, delta=0.01, gamma_scale=0.1, eta_scale=0.01),
}


@pytest.mark.parametrize("kind", ["ball", "box"])
@pytest.mark.parametrize("hyper_id", list(HYPERS))
def test_float32_trajectory_matches_the_float64_reference(kind, hyper_id):
    assert not jax.config.jax_enable_x64
    problem, theta, U, X, f = _case(kind, 3 if kind == "ball" else 4)
    kw = HYPERS[hyper_id]
    full = {**dict(alpha_scale=1.0, gamma_scale=1.0, eta_scale=1.0), **kw}
    xs_ref, lam_ref, xnext_ref = ref.run_reference(X, f, theta, U, _f32(A), _f32(B), **full)
    res = simulate.run(
        problem,
        T,
        Hyper(**kw),
        directions=jnp.asarray(U, jnp.float32),
        checkpoints=np.arange(1, T + 1),
        record_decisions=True,
        comparator=False,
    )
    assert res.dtype == "float32" and not bool(res.failed)
    xs = np.asarray(res.decisions, float)
    tol = 10 / kw["delta"] * EPS32
    scale = max(1.0, float(np.max(np.abs(xs_ref))))
    err = float(np.max(np.abs(xs - xs_ref)))
    assert err <= tol * scale, f"max |x_t - x_t(ref)| = {err:.3e} ({err / EPS32:.0f} eps)"
    np.testing.assert_allclose(res.x_final, xnext_ref, rtol=0, atol=tol * scale)
    lam_scale = max(1.0, float(np.max(np.abs(lam_ref))))
    np.testing.assert_allclose(res.lam, lam_ref, rtol=0, atol=tol * lam_scale)
    # the constraint is exercised: the unconstrained iterates would sit well above a.x = b
    assert np.sum(np.abs(xs_ref @ A - B) < 1e-3) >= 20


def _problem32(domain_fn, loss, data, con, con_data):
    return Problem(domain_fn(), loss, data, con, con_data)


def _uniform():
    return sequences.IIDUniform(jnp.full(D, 0.2), jnp.asarray([0.9, 0.9, 0.9, 0.6, 0.3]))


def _cut(b):
    return constraints.Linear(), sequences.Fixed((jnp.asarray(oracle.A_CUT), jnp.asarray(b)))


COMPARATOR_CASES = {
    "l2ball-quadratic": lambda: _problem32(
        lambda: sets.L2Ball(jnp.zeros(D), 1.0), losses.Quadratic(), _uniform(), *_cut(0.4)
    ),
    "box-quadratic": lambda: _problem32(
        lambda: sets.Box(-jnp.ones(D), jnp.ones(D)), losses.Quadratic(), _uniform(), *_cut(0.5)
    ),
    "simplex-quadratic": lambda: _problem32(
        lambda: sets.Simplex(D, 1.0), losses.Quadratic(), _uniform(), *_cut(0.3)
    ),
    "l1ball-quadratic": lambda: _problem32(
        lambda: sets.L1Ball(jnp.zeros(D), 1.5), losses.Quadratic(), _uniform(), *_cut(0.3)
    ),
    "box-linear": lambda: _problem32(
        lambda: sets.Box(-jnp.ones(D), jnp.ones(D)),
        losses.Linear(),
        sequences.IIDNormal(jnp.asarray([-1.0, 0.5, -0.3, 0.8, 0.2]), jnp.asarray(1.0)),
        *_cut(0.2),
    ),
    "box-multilinear": lambda: _problem32(
        lambda: sets.Box(-jnp.ones(D), jnp.ones(D)),
        losses.Quadratic(),
        _uniform(),
        constraints.MultiLinear(),
        sequences.Fixed(
            (
                jnp.asarray(
                    [
                        [1.0, 1.0, 0.0, 0.0, 0.0],
                        [0.0, 0.5, 1.0, 0.0, 0.0],
                        [0.3, 0.0, 0.0, 1.0, 1.0],
                    ]
                ),
                jnp.asarray([0.5, 0.4, 0.3]),
            )
        ),
    ),
}


@pytest.mark.parametrize("name", list(COMPARATOR_CASES))
def test_float32_comparator_matches_cvxpy(name):
    assert not jax.config.jax_enable_x64
    problem = COMPARATOR_CASES[name]()
    x32 = np.asarray(oracle._offline(problem, oracle.SEED_KEY, oracle.T))
    assert x32.dtype == np.float32
    thetas, phis = oracle.round_data(problem, oracle.SEED_KEY, oracle.T)  # float32 data
    thetas64 = jax.tree_util.tree_map(lambda v: np.asarray(v, np.float64), thetas)
    phis64 = jax.tree_util.tree_map(lambda v: np.asarray(v, np.float64), phis)
    x_cvx = oracle.cvx_optimum(problem, thetas64, phis64)  # the float32 data's exact optimum
    x = x32.astype(np.float64)
    f, f_cvx = (_mean_loss(problem, thetas64, v) for v in (x, x_cvx))
    viol = _max_violation(problem, phis64, x)
    con_scale = max(
        1.0,
        float(
            np.max(np.abs(np.concatenate([np.ravel(v) for v in jax.tree_util.tree_leaves(phis64)])))
        ),
    )
    msg = (
        f"F={f:.9g} F(cvx)={f_cvx:.9g} max g={viol:.3e} |x - x_cvx|={np.linalg.norm(x - x_cvx):.2e}"
    )
    assert (f - f_cvx) / max(abs(f_cvx), 1e-12) <= 1e-5, msg
    assert viol <= 64 * EPS32 * con_scale, msg


def _mean_loss(problem, thetas, x):
    """(1/T) sum_t f(x, theta_t) in NumPy float64 (the losses of COMPARATOR_CASES)."""
    if isinstance(problem.loss, losses.Linear):
        return float(np.mean(thetas @ x))
    return float(np.mean(np.sum((x - thetas) ** 2, axis=-1)))


def _max_violation(problem, phis, x):
    A, b = phis
    A, b = np.atleast_2d(A), np.atleast_1d(b)
    return float(np.max(A.reshape(-1, D) @ x - b.reshape(-1)))
