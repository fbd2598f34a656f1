"""Warm-started prox solves (``Dual.solve_warm``, the polyhedral dual Newton started from last
round's multiplier) against cvxpy, float64, on sequences of consecutive subproblems:

  * the subproblems of a real run of Algorithm 1 (hutchinson-toy: disk with 4 rows), each
    solved from the multiplier the previous round returned;
  * a synthetic chain (hutchinson-toy's and yu-neely's rows) whose rounds jump from t = 1 to t = 1e7 with beta/alpha up to 1e10, so
    the warm start is far from the new answer and the penalty is huge.
Tolerance as in the cold polyhedral battery: 1e-6 relative plus 16 ulps of g times beta (at
beta/alpha = 1e10 one ulp of violation is itself a relative gap of ~1e-4)."""

import dataclasses

import jax

FLOAT64 = True  # every test here is a float64 reference check (tests/conftest.py)

import cvxpy as cp  # noqa: E402  (a hard test dependency: missing fails, never skips)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jaxbco import problems  # noqa: E402
from jaxbco import solvers as S  # noqa: E402
from jaxbco._src.shaping import cast as _cast  # noqa: E402
from jaxbco.algorithms import RectifiedBCO  # noqa: E402
from jaxbco.algorithms.rectified_bco import two_point_gradient  # noqa: E402
from jaxbco.constraints import MultiLinear  # noqa: E402
from jaxbco.hyper import schedule  # noqa: E402
from jaxbco.keys import round_keys  # noqa: E402
from jaxbco.sets import L2Ball  # noqa: E402

TOL64 = 1e-6


def _reference(domain, xi, A, b, y, alpha, beta):
    """The penalised problem; for beta/alpha > 1e6 (where interior-point solvers lose the
    scale) the projection onto S n {Ax <= b}, which is the same point whenever the rows'
    multipliers sum to at most beta (exact penalty; asserted)."""
    d = y.shape[0]
    x = cp.Variable(d)
    if isinstance(domain, L2Ball):
        cons = [cp.norm(x) <= (1.0 - xi) * float(domain.radius)]
    else:
        cons = [x >= -(1.0 - xi), x <= 1.0 - xi]
    opts = dict(solver=cp.CLARABEL, tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13)
    if beta <= 1e6 * alpha:
        cp.Problem(
            cp.Minimize(0.5 * alpha * cp.sum_squares(x - y) + beta * cp.pos(cp.max(A @ x - b))),
            cons,
        ).solve(**opts)
        return x.value
    rows = A @ x <= b
    cp.Problem(cp.Minimize(0.5 * alpha * cp.sum_squares(x - y)), cons + [rows]).solve(**opts)
    assert float(np.sum(rows.dual_value)) <= beta
    return x.value


def _gaps_over_tolerance(domain, xi, A, b, seq, solve):
    """The rounds whose warm-started answer misses cvxpy's objective by more than the
    tolerance; seq: (y, alpha, beta) per round; solve: jitted (y, alpha, beta, nu) -> (x, nu)."""
    P = lambda v, y, a, be: (
        0.5 * a * float((v - y) @ (v - y)) + be * max(float(np.max(A @ v - b)), 0.0)
    )
    nu = jnp.zeros(A.shape[0])
    bad = []
    for k, (y, alpha, beta) in enumerate(seq):
        x, nu = solve(jnp.asarray(y), jnp.asarray(alpha), jnp.asarray(beta), nu)
        x = np.asarray(x)
        x_ref = _reference(domain, xi, A, b, y, alpha, beta)
        p, p_ref = P(x, y, alpha, beta), P(x_ref, y, alpha, beta)
        noise = (
            16
            * np.finfo(np.float64).eps
            * beta
            * float(np.max(np.abs(A) @ np.abs(x_ref) + np.abs(b)))
        )
        if not (p - p_ref <= TOL64 * max(abs(p_ref), 1e-12) + noise):
            bad.append(f"round {k}: beta/alpha={beta / alpha:.3g} P={p:.12g} P*={p_ref:.12g}")
    return bad


def _solver(domain, xi, A, b):
    return jax.jit(
        lambda y, alpha, beta, nu: S.Dual().solve_warm(
            domain,
            jnp.asarray(xi),
            MultiLinear(),
            (jnp.asarray(A), jnp.asarray(b)),
            y,
            y,
            alpha,
            beta,
            nu,
        )
    )


@pytest.mark.parametrize("name", ["hutchinson-toy"])  # disk + 4 rows: the slower Newton case
def test_warm_started_run_subproblems_match_cvxpy(name):
    T = 80
    problem = problems.make(name)
    strongly = problem.strongly_convex
    problem = _cast(problem, jnp.float64)
    alg = RectifiedBCO(strongly_convex=strongly)
    # sigma = 1, not the loss's modulus 6 (the default): alpha_t = sigma t stays small enough
    # that the penalty beta = lambda_t gamma_t outweighs alpha_t in some rounds (asserted below)
    hyper = _cast(dataclasses.replace(alg.default_hyper(problem, T), sigma=1.0), jnp.float64)
    A, b = (jnp.asarray(v) for v in problem.constraint_data.value)
    key = jax.random.key(7)
    d_hull = float(problem.domain.hull_dim)

    @jax.jit
    def round_(x, lam, t):
        """Algorithm 1's round t (lines 3-9, as in rectified_bco.py), cold-started prox;
        returns the subproblem (y, alpha, beta) it solved and the next (x, lambda)."""
        kl, kd, _ = round_keys(key, t)
        theta = problem.loss_data.sample(kl, t)
        u = problem.domain.sample_direction(kd, jnp.float64)
        alpha, gamma, _ = schedule(hyper, t, strongly)
        _, gamma_next, eta_next = schedule(hyper, t + 1, strongly)
        y = x - two_point_gradient(problem.loss, theta, x, u, hyper.delta, d_hull) / alpha
        x_new = S.Dual().solve(
            problem.domain, hyper.xi, problem.constraint, (A, b), x, y, alpha, lam * gamma
        )
        lam_new = jnp.maximum(lam + gamma_next * jnp.maximum(jnp.max(A @ x - b), 0.0), eta_next)
        return y, alpha, lam * gamma, x_new, lam_new

    x, lam, seq = problem.initial_point(), jnp.zeros(()), []
    for t in range(1, T + 1):
        y, alpha, beta, x, lam = round_(x, lam, jnp.asarray(t, jnp.int32))
        seq.append((np.asarray(y), float(alpha), float(beta)))
    assert max(s[2] / s[1] for s in seq) > 1.0  # the penalty mattered in some rounds
    A, b = np.asarray(A), np.asarray(b)
    bad = _gaps_over_tolerance(
        problem.domain, float(hyper.xi), A, b, seq, _solver(problem.domain, float(hyper.xi), A, b)
    )
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("name", ["hutchinson-toy", "yu-neely"])
def test_warm_started_late_rounds_huge_penalty(name):
    problem = problems.make(name)
    problem = _cast(problem, jnp.float64)
    A, b = (np.asarray(v) for v in problem.constraint_data.value)
    rng = np.random.default_rng(3)
    ts = np.geomspace(1.0, 1e7, 40)
    xi = 1e-4
    seq, x = [], np.zeros(2)
    for k, t in enumerate(ts):
        alpha = t**0.5
        beta = alpha * [0.0, 1.0, 1e3, 1e10][k % 4] if k > 0 else 0.0
        y = x + rng.normal(size=2) * [0.05, 0.5, 3.0][k % 3]
        seq.append((y, alpha, beta))
        x = np.clip(y, -0.9, 0.9)
    assert sum(be / al > 0.99e10 for _, al, be in seq) >= 9  # the huge-penalty rounds are there
    bad = _gaps_over_tolerance(problem.domain, xi, A, b, seq, _solver(problem.domain, xi, A, b))
    assert not bad, "\n".join(bad)
