"""The accurate prox solver (solvers.Dual) against cvxpy/CLARABEL on a battery of random
subproblems of Eq. (5):  min_{x in (1-xi)X} (alpha/2)||x - y||^2 + beta [g(x, phi)]_+.

The battery (``benchmarks/_battery.py``) covers the 4 sets x {Linear, MultiLinear (m=3),
Ellipsoid, Shifted(Linear), an Ellipsoid with cond(P) = 1e6 and beta/alpha to 1e10}
(+ a CustomConstraint), rounds t in {1, 10, 1e3, 1e5} with
alpha = t^0.5 and beta in {0, t^0.6, t^0.6 t^0.5 U(1,100)}, y near / moderate / far, the
constraint active / inactive.  ``benchmarks/solver_gaps.py`` reports the same gaps for the
naive Subgradient solver too.
"""

import functools
import pathlib
import sys

import jax

FLOAT64 = True  # every test here is a float64 reference check (tests/conftest.py)

import cvxpy  # noqa: E402, F401  (a hard test dependency: missing fails, never skips)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from benchmarks import _battery as B  # noqa: E402
from jaxbco import constraints as C  # noqa: E402
from jaxbco import sets  # noqa: E402
from jaxbco import solvers as S  # noqa: E402

N = 12  # instance i has t = ROUNDS[i % 4], beta mode (i // 4) % 3: 12 cover every (t, beta)
TOL64 = 1e-6
TOL32 = 1e-4
S_TOL64 = 1e-9
COMBOS = [(s, c) for s in B.SETS for c in B.CONSTRAINTS]
ILL = [(s, "IllEllipsoid") for s in B.SETS]  # cond(P) = 1e6, beta/alpha to 1e10


@functools.cache
def battery(set_name, con_name):
    insts = B.make_battery(set_name, con_name, N, seed=0)
    refs = [B.cvx_reference(inst) for inst in insts]
    return insts, refs


@functools.cache
def dual_answers(set_name, con_name, dtype_name):
    insts, _ = battery(set_name, con_name)
    return B.solve_batch(S.Dual(), set_name, con_name, insts, np.dtype(dtype_name))


def _report(rows):
    return "\n".join(rows)


def _check_float64(set_name, con_name):
    insts, refs = battery(set_name, con_name)
    xs = dual_answers(set_name, con_name, "float64")
    bad = []
    for inst, (_, p_ref), x in zip(insts, refs, xs):
        gap = B.rel_gap(B.prox_value(inst, x), p_ref)
        viol = B.s_violation(set_name, inst.xi, x)
        # `not (<=)` so that a NaN answer fails.
        if not (gap <= TOL64) or not (viol <= S_TOL64):
            bad.append(f"{inst.label()}: rel gap {gap:.3e}, distance outside S {viol:.3e}")
    assert not bad, f"Dual (float64) vs cvxpy, tol {TOL64:g}:\n" + _report(bad)


@pytest.mark.parametrize("set_name,con_name", COMBOS + ILL)
def test_dual_float64_matches_cvxpy(set_name, con_name):
    _check_float64(set_name, con_name)


@pytest.mark.parametrize("set_name", B.SETS)
def test_dual_float64_custom_constraint_matches_cvxpy(set_name):
    """CustomConstraint g = ||x - q||^2 - s (curvature_bound=2, interior q) vs cvxpy."""
    _check_float64(set_name, "Custom")


@pytest.mark.parametrize("set_name", ["L2Ball", "Box", "Simplex"])
def test_dual_float64_ball_constraint_matches_cvxpy(set_name):
    """constraints.Ball g = ||x - q||^2 - s vs cvxpy: the closed form on the L2 ball, the
    interior point (``QuadraticIPM``) on a box or simplex.  On the L1 ball Ball takes the
    generic smooth path, tested above with the same g as Custom."""
    _check_float64(set_name, "Ball")


BALLS = [("L2Ball", "Ball"), ("Box", "Ball"), ("Simplex", "Ball")]


@pytest.mark.parametrize("set_name,con_name", COMBOS + BALLS + ILL)
def test_dual_float32_matches_cvxpy(set_name, con_name):
    """float32 inputs (64-bit JAX switched off, the package's float32 default); P of the
    float32 answer evaluated in float64 against the float64 cvxpy optimum.

    Tolerance: (P(x32) - P*) <= 1e-4 max(|P*|, 1e-12) + 16 N(x*), where N is the float32
    round-off scale of P at x* (``_battery.roundoff_noise``: EPS32 [alpha (||x*-y|| + ..)
    (||x*|| + ||y||) + beta sum|terms of g(x*)|]).  The allowance is needed because no float32
    answer can do better: rounding the exact optimum itself to float32 already gives relative
    gaps up to ~1e-1 when beta/alpha ~ 1e5 (a violation of 1e-8 costs beta times it) or when
    P* ~ 0 (y in S).  The naive Subgradient solver exceeds this allowance by 1e3-1e8 on the
    same battery (see ``benchmarks/solver_gaps.py``), so the check still separates accurate
    from inaccurate.
    """
    insts, refs = battery(set_name, con_name)
    xs = dual_answers(set_name, con_name, "float32")
    bad = []
    for inst, (x_ref, p_ref), x in zip(insts, refs, xs):
        excess = B.prox_value(inst, x) - p_ref
        allowed = TOL32 * max(abs(p_ref), 1e-12) + 16.0 * B.roundoff_noise(inst, x_ref)
        if not (excess <= allowed):
            bad.append(
                f"{inst.label()}: P(x32) - P* = {excess:.3e} > allowed {allowed:.3e} "
                f"(rel gap {B.rel_gap(B.prox_value(inst, x), p_ref):.3e})"
            )
    assert not bad, "Dual (float32) vs cvxpy:\n" + _report(bad)


# --- focused reproducers -----------------------------------------------------------------


def test_dual_multilinear_beta_zero_is_finite():
    """beta = 0 (no penalty): the answer is Pi_S(y); the polyhedral dual's nu-set
    {nu >= 0, sum nu <= 0} is {0}, so nothing should divide by beta."""
    dom = sets.L2Ball(jnp.zeros(2), 1.0)
    A = jnp.array([[1.0, 0.0]])
    b = jnp.array([0.0])
    y = jnp.array([0.5, 0.0])
    x = S.Dual().solve(
        dom, jnp.asarray(0.0), C.MultiLinear(), (A, b), y, y, jnp.asarray(1.0), jnp.asarray(0.0)
    )
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), atol=1e-12)


@pytest.mark.parametrize(
    "set_name,con_name",
    [
        ("L2Ball", "Linear"),
        ("Box", "Ellipsoid"),
        ("L2Ball", "MultiLinear"),
        ("Simplex", "Linear"),
        ("L1Ball", "Linear"),
    ],
)
def test_dual_float32_inputs_with_x64_enabled(set_name, con_name):
    """float32 data while 64-bit JAX is on (e.g. simulate(dtype="float32") in a session that
    also runs float64) must run and return float32."""
    inst = battery(set_name, con_name)[0][1]
    dom = B.make_domain(set_name, jnp.float32)
    xi, phi, x0, y, alpha, beta = inst.args(jnp.float32)
    x = S.Dual().solve(dom, xi, B.make_constraint(con_name), phi, x0, y, alpha, beta)
    assert x.dtype == jnp.float32
    assert np.all(np.isfinite(np.asarray(x)))


# --- polyhedral constraints, m in {2, 3, 4, 8} (exact small-m Newton and the m = 8 fallback) ---


def _polyhedral_cases(set_name, m, d=3):
    """(A, b, y, alpha, beta) in float64: random rows with the centre strictly feasible, plus
    degenerate cases: a duplicated (redundant) row, y far away (vertex solutions), y feasible,
    beta/alpha = 1e8 and beta = 0."""
    rng = np.random.default_rng([m, len(set_name)])
    cases = []
    for k in range(10):
        A = rng.normal(size=(m, d))
        b = rng.uniform(0.05, 0.6, size=m)
        if k % 3 == 1:
            A[-1], b[-1] = A[0], b[0]  # redundant row
        y = rng.normal(size=d) * [0.3, 1.5, 20.0][k % 3]
        alpha = float(rng.uniform(0.5, 5.0))
        beta = alpha * [1e8, 3.0, 1e3, 0.0, 1e8][k % 5]
        cases.append((A, b, y, alpha, beta))
    A, b = cases[0][0], cases[0][1]
    cases.append((A, b, np.zeros(d), 1.0, 1e8))  # y feasible
    return cases


def _poly_reference(set_name, A, b, y, alpha, beta, d=3):
    import cvxpy as cp

    x = cp.Variable(d)
    cons = [cp.norm(x) <= 1.0] if set_name == "L2Ball" else [x >= -1.0, x <= 1.0]
    value = lambda v: (
        0.5 * alpha * float((v - y) @ (v - y)) + beta * max(float(np.max(A @ v - b)), 0.0)
    )
    return B._solve_cvx(
        x, 0.5 * alpha * cp.sum_squares(x - y) + beta * cp.pos(cp.max(A @ x - b)), cons, value
    )


@pytest.mark.parametrize("set_name", ["L2Ball", "Box"])
@pytest.mark.parametrize("m", [2, 3, 4, 8])
def test_dual_polyhedral_float64_matches_cvxpy(set_name, m):
    d = 3
    dom = B.make_domain(set_name, jnp.float64, d)
    solve = jax.jit(
        lambda A, b, y, alpha, beta: S.Dual().solve(
            dom, jnp.asarray(0.0), C.MultiLinear(), (A, b), y, y, alpha, beta
        )
    )
    bad = []
    for k, (A, b, y, alpha, beta) in enumerate(_polyhedral_cases(set_name, m, d)):
        x_ref, p_ref = _poly_reference(set_name, A, b, y, alpha, beta, d)
        x = np.asarray(solve(*(jnp.asarray(v, jnp.float64) for v in (A, b, y, alpha, beta))))
        p = 0.5 * alpha * float((x - y) @ (x - y)) + beta * max(float(np.max(A @ x - b)), 0.0)
        gap = B.rel_gap(p, p_ref)
        viol = B.s_violation(set_name, 0.0, x, d)
        # float64 round-off of g at x* (16 ulps of sum |a_i x| + |b_i|), which beta multiplies:
        # at beta/alpha = 1e8 a one-ulp violation alone is a relative gap of ~1e-6.
        noise = (
            16
            * np.finfo(np.float64).eps
            * beta
            * float(np.max(np.abs(A) @ np.abs(x_ref) + np.abs(b)))
        )
        if not (p - p_ref <= TOL64 * max(abs(p_ref), 1e-12) + noise) or not (viol <= S_TOL64):
            bad.append(
                f"case {k} beta/alpha={beta / alpha:g}: rel gap {gap:.3e}, outside S {viol:.3e}"
            )
    assert not bad, f"Dual polyhedral m={m} on {set_name}:\n" + _report(bad)


@pytest.mark.parametrize("set_name", ["L2Ball", "Box"])
@pytest.mark.parametrize("m", [2, 4, 8])
def test_project_feasible_polyhedral_is_feasible_and_closest(set_name, m):
    """Pi_{S n {Ax <= b}}(z): g <= 1e-12 and the cvxpy projection's distance."""
    import cvxpy as cp

    d = 3
    dom = B.make_domain(set_name, jnp.float64, d)
    proj = jax.jit(lambda A, b, z: S.project_feasible(dom, 0.0, C.MultiLinear(), (A, b), z))
    for k, (A, b, y, _, _) in enumerate(_polyhedral_cases(set_name, m, d)):
        x = np.asarray(proj(jnp.asarray(A), jnp.asarray(b), jnp.asarray(y)))
        v = cp.Variable(d)
        cons = [A @ v <= b] + ([cp.norm(v) <= 1.0] if set_name == "L2Ball" else [v >= -1, v <= 1])
        x_ref, _ = B._solve_cvx(v, cp.sum_squares(v - y), cons, lambda u: 0.0)
        assert np.max(A @ x - b) <= 1e-12, (k, np.max(A @ x - b))
        assert B.s_violation(set_name, 0.0, x, d) <= S_TOL64
        dist, dist_ref = np.linalg.norm(x - y), np.linalg.norm(x_ref - y)
        assert dist <= dist_ref + 1e-7 * max(dist_ref, 1.0), (k, dist, dist_ref)


LOW_BOUND = C.CustomConstraint(B.custom_sqdist, curvature_bound=0.05, interior=B.custom_interior)


@pytest.mark.parametrize("set_name", ["Box", "L1Ball"])
def test_custom_constraint_with_a_too_low_curvature_bound_is_still_exact(set_name):
    """g = ||x - q||^2 - s has curvature 2; told 0.05, the smooth method's steps would be 40x
    too long: each lane raises its bound where a step fails its quadratic model (backtracking),
    so the battery's answers still match cvxpy in float64."""
    insts, refs = battery(set_name, "Custom")
    with jax.enable_x64(True):
        args = [inst.args(jnp.float64) for inst in insts]
        stacked = jax.tree_util.tree_map(lambda *v: jnp.stack(v), *args)
        xs = np.asarray(
            B._solve_many(S.Dual(), B.make_domain(set_name, jnp.float64), LOW_BOUND, *stacked)
        )
    gaps = [B.rel_gap(B.prox_value(inst, x), p_ref) for inst, (_, p_ref), x in zip(insts, refs, xs)]
    assert max(gaps) <= TOL64, f"max gap {max(gaps):.3e}"


def _lse(x, phi):
    """g(x) = log sum_i exp(a_i . x) - b: smooth, convex, Hessian norm <= max_i |a_i|^2."""
    A, b = phi
    return jax.scipy.special.logsumexp(A @ x) - b


def _quartic(x, phi):
    """g(x) = sum_i (x_i - c_i)^4 - s: convex, curvature 12 (x_i - c_i)^2 (unbounded)."""
    c, s = phi
    return jnp.sum((x - c) ** 4) - s


@pytest.mark.parametrize("shape", ["log-sum-exp", "quartic"])
def test_custom_constraints_of_other_shapes_match_cvxpy(shape):
    """CustomConstraint of two more shapes, each with the default curvature guess 1.0 (below
    the truth for both), on a box: Eq. (5) answers against cvxpy in float64, binding and
    saturated penalties alike."""
    import cvxpy as cp

    rng = np.random.default_rng(11)
    d = 4
    domain = sets.Box(-np.ones(d), np.ones(d))
    fn = _lse if shape == "log-sum-exp" else _quartic
    worst = 0.0
    with jax.enable_x64(True):
        solve = jax.jit(
            lambda phi, y, a, b: S.Dual().solve(
                domain, jnp.asarray(0.05), C.CustomConstraint(fn), phi, y, y, a, b
            )
        )
        for k in range(6):
            y = rng.uniform(-1.5, 1.5, d)
            alpha, beta = 1.0 + k, [0.5, 5.0, 1e4][k % 3]
            if shape == "log-sum-exp":
                A = 3.0 * rng.normal(size=(3, d))
                phi = (A, float(np.log(3.0) + 0.2))
            else:
                phi = (0.3 * rng.normal(size=d), 0.2)
            x = np.asarray(
                solve(
                    jax.tree_util.tree_map(jnp.asarray, phi),
                    jnp.asarray(y),
                    jnp.asarray(alpha),
                    jnp.asarray(beta),
                )
            )
            v = cp.Variable(d)
            g = (
                cp.log_sum_exp(phi[0] @ v) - phi[1]
                if shape == "log-sum-exp"
                else cp.sum(cp.power(v - phi[0], 4)) - phi[1]
            )
            value = lambda z: (
                0.5 * alpha * np.sum((z - y) ** 2)
                + beta
                * max(float(fn(jnp.asarray(z), jax.tree_util.tree_map(jnp.asarray, phi))), 0.0)
            )
            x_ref, p_ref = B._solve_cvx(
                v,
                0.5 * alpha * cp.sum_squares(v - y) + beta * cp.pos(g),
                [cp.abs(v) <= 0.95],
                value,
            )
            worst = max(worst, B.rel_gap(value(x), p_ref))
            assert np.all(np.abs(x) <= 0.95 + 1e-12)
    assert worst <= TOL64, f"{shape}: max relative gap {worst:.3e}"
