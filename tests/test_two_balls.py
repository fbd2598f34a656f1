"""Closed-form prox on a ball with a ball constraint (solvers.two_balls) vs cvxpy, float64,
on instances chosen so that every branch occurs: slack, saturated, active with the answer on
one sphere, and active on the intersection of both spheres (neither single projection lies in
the other ball)."""

FLOAT64 = True  # every test here is a float64 reference check (tests/conftest.py)

import cvxpy as cp  # noqa: E402  (a hard test dependency: missing fails, never skips)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxbco.solvers.two_balls import project_two_balls, prox_ball_ball  # noqa: E402


def _cases(n=48, d=5, seed=0):
    rng = np.random.default_rng(seed)
    for i in range(n):
        c = rng.normal(size=d) * 0.3
        R = rng.uniform(0.5, 2.0)
        # constraint ball: centre at a random distance, radius so the balls intersect
        u = rng.normal(size=d)
        u /= np.linalg.norm(u)
        dist = rng.uniform(0.0, 1.5) * R
        q = c + dist * u
        r2 = rng.uniform(max(dist - R, 0.0) + 0.05, dist + R + 0.5)
        y = c + rng.normal(size=d) * rng.choice([0.3, 1.0, 5.0])
        alpha = 10.0 ** rng.uniform(-1, 2)
        beta = [0.0, alpha * 10.0 ** rng.uniform(-2, 1), alpha * 1e6][i % 3]
        yield c, R, q, r2 * r2, y, alpha, beta


def _cvx(c, R, q, s, y, alpha, beta):
    x = cp.Variable(c.shape[0])
    obj = 0.5 * alpha * cp.sum_squares(x - y) + beta * cp.pos(cp.sum_squares(x - q) - s)
    cp.Problem(cp.Minimize(obj), [cp.norm(x - c) <= R]).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12
    )
    return x.value


def _P(c, R, q, s, y, alpha, beta, x):
    return 0.5 * alpha * np.sum((x - y) ** 2) + beta * max(np.sum((x - q) ** 2) - s, 0.0)


def test_prox_ball_ball_matches_cvxpy():
    bad, circle_cases = [], 0
    for c, R, q, s, y, alpha, beta in _cases():
        x = np.asarray(
            prox_ball_ball(jnp.asarray(c), R, jnp.asarray(q), s, jnp.asarray(y), alpha, beta)
        )
        x_ref = _cvx(c, R, q, s, y, alpha, beta)
        # Clip the reference into the ball (CLARABEL is feasible to ~1e-12 only).
        x_ref = c + (x_ref - c) * min(1.0, R / np.linalg.norm(x_ref - c))
        p, p_ref = _P(c, R, q, s, y, alpha, beta, x), _P(c, R, q, s, y, alpha, beta, x_ref)
        on_both = abs(np.linalg.norm(x - c) - R) < 1e-9 and abs(np.sum((x - q) ** 2) - s) < 1e-8
        circle_cases += bool(on_both)
        if not (p - p_ref <= 1e-6 * max(abs(p_ref), 1e-12)) or np.linalg.norm(x - c) > R * (
            1 + 1e-12
        ):
            bad.append((p, p_ref))
    assert not bad, bad
    assert circle_cases >= 3  # the two-sphere branch was exercised


def test_project_two_balls_is_feasible_and_closest():
    rng = np.random.default_rng(1)
    for _ in range(20):
        c1, c2 = rng.normal(size=3), rng.normal(size=3)
        dist = np.linalg.norm(c1 - c2)
        r1, r2 = dist * rng.uniform(0.6, 1.0), dist * rng.uniform(0.6, 1.0)
        y = rng.normal(size=3) * 3
        x = np.asarray(project_two_balls(jnp.asarray(c1), r1, jnp.asarray(c2), r2, jnp.asarray(y)))
        v = cp.Variable(3)
        cp.Problem(
            cp.Minimize(cp.sum_squares(v - y)), [cp.norm(v - c1) <= r1, cp.norm(v - c2) <= r2]
        ).solve(solver=cp.CLARABEL)
        assert np.linalg.norm(x - c1) <= r1 * (1 + 1e-12) and np.linalg.norm(x - c2) <= r2 * (
            1 + 1e-12
        )
        assert np.sum((x - y) ** 2) <= np.sum((v.value - y) ** 2) * (1 + 1e-7) + 1e-12
