"""The offline comparator x* = argmin_{x in X} sum_t f_t(x) s.t. g_t(x) <= 0 for all t, against
cvxpy/CLARABEL (float64) on the same data, regenerated round by round from ``round_keys``."""

import jax

FLOAT64 = True  # every test here is a float64 reference check (tests/conftest.py)

import cvxpy as cp  # noqa: E402  (a hard test dependency: missing fails, never skips)
import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jaxbco import constraints as C  # noqa: E402
from jaxbco import losses, sequences, sets  # noqa: E402
from jaxbco.comparator import offline_optimum  # noqa: E402
from jaxbco.keys import round_keys  # noqa: E402
from jaxbco.problem import Problem  # noqa: E402

D = 5
T = 100
REL_TOL = 1e-6
FEAS_TOL = 1e-8
SEED_KEY = jax.random.fold_in(jax.random.key(0), 7)

f64 = lambda v: jnp.asarray(v, jnp.float64)


# --- the data the run saw, regenerated -----------------------------------------------------


def round_data(problem, seed_key, horizon):
    """(thetas, phis): every round's loss and constraint data, stacked over t = 1..T."""
    ts = jnp.arange(1, horizon + 1, dtype=jnp.int32)

    def one(t):
        k_loss, _, k_con = round_keys(seed_key, t)
        return problem.loss_data.sample(k_loss, t), problem.constraint_data.sample(k_con, t)

    return jax.vmap(one)(ts)


def mean_loss(problem, thetas, x):
    """F(x) = (1/T) sum_t f(x, theta_t), in float64."""
    vals = jax.vmap(lambda th: problem.loss.value(f64(x), th))(thetas)
    return float(jnp.mean(vals))


def max_violation(problem, phis, x):
    return float(jnp.max(jax.vmap(lambda ph: problem.constraint.value(f64(x), ph))(phis)))


# --- the same problem in cvxpy -------------------------------------------------------------


def cvx_domain(domain, x):
    if isinstance(domain, sets.L2Ball):
        return [cp.norm(x - np.asarray(domain.center)) <= float(domain.radius)]
    if isinstance(domain, sets.Box):
        return [x >= np.asarray(domain.lower), x <= np.asarray(domain.upper)]
    if isinstance(domain, sets.Simplex):
        return [x >= 0, cp.sum(x) == float(domain.total)]
    if isinstance(domain, sets.L1Ball):
        return [cp.norm1(x - np.asarray(domain.center)) <= float(domain.radius)]
    raise TypeError(type(domain))


def cvx_constraints(family, phis, x):
    """One cvxpy constraint per round (all T of them; the rounds' data are stacked)."""
    phis = jax.tree_util.tree_map(np.asarray, phis)
    if isinstance(family, C.Linear):
        a, b = phis
        return [a @ x - b <= 0]
    if isinstance(family, C.MultiLinear):
        A, b = phis  # (T, m, d), (T, m)
        return [A.reshape(-1, A.shape[-1]) @ x - b.reshape(-1) <= 0]
    if isinstance(family, C.Ellipsoid):
        P, q, s = phis
        return [cp.quad_form(x - q[t], cp.psd_wrap(P[t])) - s[t] <= 0 for t in range(P.shape[0])]
    if isinstance(family, C.Shifted) and isinstance(family.base, C.Linear):
        (a, b), s = phis
        return [a @ x - b - s <= 0]
    raise TypeError(type(family))


def cvx_mean_loss(loss, thetas, x):
    thetas = jax.tree_util.tree_map(np.asarray, thetas)
    if isinstance(loss, losses.Quadratic):
        n = thetas.shape[0]
        return (
            float(loss.scale)
            * cp.sum_squares(np.ones((n, 1)) @ cp.reshape(x, (1, D), order="C") - thetas)
            / n
        )
    if isinstance(loss, losses.Linear):
        return thetas.mean(axis=0) @ x
    if isinstance(loss, losses.Huber):
        kappa = float(loss.kappa)
        n = thetas.shape[0]
        r = np.ones((n, 1)) @ cp.reshape(x, (1, D), order="C") - thetas
        # H_kappa(r) = huber(r, kappa) / (2 kappa) with cvxpy's huber(r, M) = r^2 or 2M|r| - M^2.
        return cp.sum(cp.huber(r, kappa)) / (2.0 * kappa * n)
    if isinstance(loss, losses.Absolute):
        n = thetas.shape[0]
        return cp.sum(cp.abs(np.ones((n, 1)) @ cp.reshape(x, (1, D), order="C") - thetas)) / n
    if isinstance(loss, losses.Logistic):
        w, y = thetas
        return cp.sum(cp.logistic(cp.multiply(-y, w @ x))) / w.shape[0]
    if isinstance(loss, losses.CustomLoss):
        return loss.fn.cvx(x, thetas)  # the test's own cvxpy form of the user's function
    raise TypeError(type(loss))


def cvx_optimum(problem, thetas, phis):
    x = cp.Variable(D)
    prob = cp.Problem(
        cp.Minimize(cvx_mean_loss(problem.loss, thetas, x)),
        cvx_domain(problem.domain, x) + cvx_constraints(problem.constraint, phis, x),
    )
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert x.value is not None, prob.status
    return np.asarray(x.value)


_offline = eqx.filter_jit(offline_optimum)


def compare(problem, horizon=T):
    """(x_jax, x_cvx, F(x_jax), F(x_cvx), max_t g_t(x_jax), relative error)."""
    x_jax = np.asarray(_offline(problem, SEED_KEY, horizon))
    thetas, phis = round_data(problem, SEED_KEY, horizon)
    x_cvx = cvx_optimum(problem, thetas, phis)
    f_jax, f_cvx = mean_loss(problem, thetas, x_jax), mean_loss(problem, thetas, x_cvx)
    rel = (f_jax - f_cvx) / max(abs(f_cvx), 1e-12)
    return x_jax, x_cvx, f_jax, f_cvx, max_violation(problem, phis, x_jax), rel


def in_domain(domain, x, tol=1e-9):
    x = f64(x)
    return float(jnp.linalg.norm(domain.project(x) - x)) <= tol


def assert_matches(problem, horizon=T):
    x_jax, x_cvx, f_jax, f_cvx, viol, rel = compare(problem, horizon)
    msg = (
        f"F(x_jax)={f_jax:.12g} F(x_cvx)={f_cvx:.12g} rel={rel:.3e} max_t g_t(x_jax)={viol:.3e} "
        f"|x_jax - x_cvx|={np.linalg.norm(x_jax - x_cvx):.3e}"
    )
    assert rel <= REL_TOL, msg
    assert viol <= FEAS_TOL, msg
    assert in_domain(problem.domain, x_jax), msg
    return x_jax, x_cvx


# --- problems ----------------------------------------------------------------------------


def unit_ball():
    return sets.L2Ball(f64(np.zeros(D)), f64(1.0))


def box():
    return sets.Box(f64(-np.ones(D)), f64(np.ones(D)))


def simplex():
    return sets.Simplex(D, f64(1.0))


def l1_ball():
    return sets.L1Ball(f64(np.zeros(D)), f64(1.5))


def linear_cut(a, b):
    return C.Linear(), sequences.Fixed((f64(a), f64(b)))


A_CUT = np.array([1.0, 1.0, 0.5, 0.0, -0.5])


def uniform():
    return sequences.IIDUniform(f64(np.full(D, 0.2)), f64(np.array([0.9, 0.9, 0.9, 0.6, 0.3])))


def test_quadratic_l2ball_linear_constraint_cuts_unconstrained_optimum():
    con, data = linear_cut(A_CUT, 0.4)
    prob = Problem(unit_ball(), losses.Quadratic(), uniform(), con, data)
    x_jax, _ = assert_matches(prob)
    # The constraint matters: the optimum over X alone violates it.
    thetas, _ = round_data(prob, SEED_KEY, T)
    x_free = np.asarray(prob.domain.project(jnp.mean(thetas, axis=0)))
    assert A_CUT @ x_free - 0.4 > 0.1
    assert abs(A_CUT @ x_jax - 0.4) < 1e-8  # active at x*


@pytest.mark.parametrize(
    "domain_fn,b", [(box, 0.5), (simplex, 0.3), (l1_ball, 0.3)], ids=["box", "simplex", "l1ball"]
)
def test_quadratic_other_sets(domain_fn, b):
    con, data = linear_cut(A_CUT, b)
    assert_matches(Problem(domain_fn(), losses.Quadratic(), uniform(), con, data))


@pytest.mark.parametrize("domain_fn", [unit_ball, box, simplex], ids=["l2ball", "box", "simplex"])
def test_linear_loss(domain_fn):
    normal = sequences.IIDNormal(f64(np.array([-1.0, 0.5, -0.3, 0.8, 0.2])), f64(1.0))
    con, data = linear_cut(A_CUT, 0.2)
    assert_matches(Problem(domain_fn(), losses.Linear(), normal, con, data))


def test_multilinear_constraint():
    A = np.array([[1.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.5, 1.0, 0.0, 0.0], [0.3, 0.0, 0.0, 1.0, 1.0]])
    b = np.array([0.5, 0.4, 0.3])
    prob = Problem(
        unit_ball(),
        losses.Quadratic(),
        uniform(),
        C.MultiLinear(),
        sequences.Fixed((f64(A), f64(b))),
    )
    assert_matches(prob)


def test_ellipsoid_constraint():
    rng = np.random.default_rng(1)
    M = rng.normal(size=(D, D))
    P = M @ M.T / D + 0.2 * np.eye(D)
    q = np.array([-0.2, 0.1, 0.0, -0.1, 0.2])
    prob = Problem(
        box(),
        losses.Quadratic(),
        uniform(),
        C.Ellipsoid(),
        sequences.Fixed((f64(P), f64(q), f64(0.3))),
    )
    assert_matches(prob)


def test_shifted_slackened_time_varying_linear():
    data = sequences.Slackened((f64(A_CUT), f64(0.2)), f64(0.05), f64(0.5))
    prob = Problem(unit_ball(), losses.Quadratic(), uniform(), C.Shifted(C.Linear()), data)
    x_jax, _ = assert_matches(prob)
    # Active at the tightest round: a.x* = b + min_t s_t.
    _, phis = round_data(prob, SEED_KEY, T)
    s_min = float(jnp.min(phis[1]))
    assert abs(A_CUT @ x_jax - 0.2 - s_min) < 1e-8


def test_huber_loss():
    normal = sequences.IIDNormal(f64(np.array([0.8, 0.6, -0.4, 0.2, 0.9])), f64(0.5))
    con, data = linear_cut(A_CUT, 0.3)
    assert_matches(Problem(unit_ball(), losses.Huber(0.3), normal, con, data))


def test_logistic_loss():
    w_true = f64(np.array([2.0, -1.0, 0.5, 1.5, -0.5]))
    con, data = linear_cut(A_CUT, 0.2)
    prob = Problem(
        sets.L2Ball(f64(np.zeros(D)), f64(2.0)),
        losses.Logistic(),
        sequences.Classification(w_true, f64(0.3)),
        con,
        data,
    )
    assert_matches(prob, horizon=200)


def test_absolute_loss_within_documented_smoothing_error():
    """comparator.py: |x - theta|_1 is minimised through its Huber smoothing with
    kappa = 1e-6 D, objective error <= kappa d / 2 (absolute, on the mean loss)."""
    con, data = linear_cut(A_CUT, 0.3)
    prob = Problem(box(), losses.Absolute(), uniform(), con, data)
    x_jax, x_cvx, f_jax, f_cvx, viol, _ = compare(prob)
    kappa = 1e-6 * float(prob.domain.diameter())
    msg = (
        f"F(x_jax)={f_jax:.12g} F(x_cvx)={f_cvx:.12g} diff={f_jax - f_cvx:.3e} "
        f"promised {kappa * D / 2:.3e}; max_t g_t={viol:.3e}"
    )
    assert f_jax - f_cvx <= kappa * D / 2, msg
    assert viol <= FEAS_TOL, msg


# --- a researcher's own loss: x* right whatever curvature bound it comes with ---------------

WEIGHTS = np.array([1.0, 4.0, 9.0, 2.0, 0.5])


def _stack(x, n):
    return np.ones((n, 1)) @ cp.reshape(x, (1, D), order="C")


def weighted_squares(x, th):  # curvature 2 max(w) = 18
    return jnp.sum(WEIGHTS * (x - th) ** 2)


weighted_squares.cvx = lambda x, th: (
    cp.sum(cp.multiply(np.ones((th.shape[0], 1)) * WEIGHTS, cp.square(_stack(x, th.shape[0]) - th)))
    / th.shape[0]
)


def huber_by_hand(x, th, k=0.2):  # curvature 1/k = 5
    r = jnp.abs(x - th)
    return jnp.sum(jnp.where(r <= k, 0.5 * r * r / k, r - 0.5 * k))


huber_by_hand.cvx = lambda x, th: (
    cp.sum(cp.huber(_stack(x, th.shape[0]) - th, 0.2)) / (0.4 * th.shape[0])
)


def softplus_ridge(x, th):  # curvature <= |theta|^2 / 4 + 1
    return jnp.logaddexp(0.0, 3.0 * jnp.sum(th * x)) + 0.5 * jnp.sum(x * x)


softplus_ridge.cvx = lambda x, th: (
    cp.sum(cp.logistic(3.0 * th @ x)) / th.shape[0] + 0.5 * cp.sum_squares(x)
)


@pytest.mark.parametrize(
    "fn",
    [weighted_squares, huber_by_hand, softplus_ridge],
    ids=["weighted-squares", "huber", "softplus-ridge"],
)
@pytest.mark.parametrize("bound", [None, 0.1, 1000.0], ids=["no-bound", "too-small", "loose"])
def test_custom_loss_whatever_its_curvature_bound(fn, bound):
    """CustomLoss with no curvature bound (the default), one far below the truth, or a loose
    one: the comparator's FISTA backtracks, so x* matches cvxpy (before: with no bound or a
    low one it took steps for curvature 1 and returned a point ~0.7 away)."""
    con, data = linear_cut(A_CUT, 0.3)
    prob = Problem(box(), losses.CustomLoss(fn, curvature_bound=bound), uniform(), con, data)
    assert_matches(prob, horizon=60)
