"""The comparator's certificate (``jaxbco.certificate``) against cvxpy/CLARABEL in float64, and
its use by ``sweep`` in float32.

float64 (each test takes the ``x64`` fixture; problems are built inside it, T = 24, d = 5):
  * a battery of (loss, constraint, set) cells: x* = cvxpy's optimum, feasible, certified;
  * soundness of the gap in every cell, kinked custom constraints included: the lower bound
    F(x) - gap * scale never exceeds F*, at x* (feasible or not) and at feasible points y that
    are not optimal (cvxpy's extreme points mixed with its optimum, X's centre), whose gap is
    at least their true relative excess, so a clearly suboptimal y never passes;
  * custom constraints with kinks: an x* that is wrong is flagged, one that passes is right
    (holds whether or not the comparator solves them exactly).
float32 (x64 off, as users run): ``sweep``'s ``x_star_ok`` / ``x_star_certificate`` on the
named problems, on a kinked constraint (flagged exactly when wrong), without a comparator, and
the ``CertificateWarning`` that ``report`` raises.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import NamedTuple

import cvxpy as cp  # a hard test dependency: missing fails, never skips
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbco
import jaxbco.problems
from jaxbco import Problem, certificate, sets
from jaxbco import constraints as C
from jaxbco import losses as L
from jaxbco import sequences as Seq
from jaxbco._src import xla
from jaxbco.certificate import CertificateWarning
from jaxbco.comparator import offline_optimum
from jaxbco.draws import round_data
from jaxbco.keys import seed_keys
from jaxbco.offline import variation

T = 24  # rounds
DIM = 5
TOL64 = 1e-8  # certificate.tolerance(float64)
REL_F = 1e-7  # |F(x*) - F*| / scale: cvxpy's own accuracy is ~1e-9
FEAS = 1e-8  # max_t g_t(x*), set violation
WRONG = 1e-6  # an x* off by more than this (relative) is wrong and must be flagged
N_EXTREME = 2  # extreme points of the feasible set (random linear objectives) behind the y's
CLARABEL = dict(
    solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, max_iter=400
)


# --- the cells -------------------------------------------------------------------------------


class Cell(NamedTuple):
    problem: Problem
    loss_cvx: Callable  # (x, theta) -> cvxpy expression of f_t
    con_cvx: Callable  # (x, phi) -> list of cvxpy constraints g_t(x) <= 0
    per_round: bool  # constraint data vary with t (else one round's constraint stands for all)


def _domain(name):
    d = DIM
    if name == "box":
        return sets.Box(-jnp.ones(d), jnp.ones(d))
    if name == "simplex":
        return sets.Simplex(d)
    if name == "ball":
        return sets.L2Ball(jnp.full(d, 0.1), jnp.asarray(1.0))
    if name == "l1":
        return sets.L1Ball(jnp.full(d, -0.1), jnp.asarray(1.2))
    raise KeyError(name)


def _cvx_domain(domain, x):
    if isinstance(domain, sets.Box):
        return [x >= np.asarray(domain.lower), x <= np.asarray(domain.upper)]
    if isinstance(domain, sets.Simplex):
        return [x >= 0, cp.sum(x) == float(domain.total)]
    if isinstance(domain, sets.L2Ball):
        return [cp.norm(x - np.asarray(domain.center)) <= float(domain.radius)]
    if isinstance(domain, sets.L1Ball):
        return [cp.norm1(x - np.asarray(domain.center)) <= float(domain.radius)]
    raise TypeError(type(domain))


def _centre(domain):
    return np.asarray(domain.inscribed_ball()[0])


def _tangent(domain, u):
    """u within X's affine hull (the simplex's directions sum to 0), normalised."""
    u = np.asarray(u, np.float64)
    if isinstance(domain, sets.Simplex):
        u = u - u.mean()
    return u / np.linalg.norm(u)


def _loss(name, domain, rng):
    """(loss, data, cvxpy f_t, the direction the loss pulls in from X's centre)."""
    d, c = DIM, _centre(domain)
    if name == "quadratic":
        m = rng.uniform(-1.5, 1.5, d)
        return (
            L.Quadratic(),
            Seq.IIDNormal(jnp.asarray(m), jnp.full(d, 0.3)),
            lambda x, th: cp.sum_squares(x - th),
            m - c,
        )
    if name == "linear":
        m = rng.normal(size=d)
        return (
            L.Linear(),
            Seq.IIDNormal(jnp.asarray(m), jnp.full(d, 0.5)),
            lambda x, th: th @ x,
            -m,
        )
    if name == "absolute":
        m = rng.uniform(-1.5, 1.5, d)
        return (
            L.Absolute(),
            Seq.IIDNormal(jnp.asarray(m), jnp.full(d, 0.3)),
            lambda x, th: cp.norm1(x - th),
            m - c,
        )
    if name == "huber":
        m, kappa = rng.uniform(-1.5, 1.5, d), 0.5
        return (
            L.Huber(kappa),
            Seq.IIDNormal(jnp.asarray(m), jnp.full(d, 0.5)),
            lambda x, th: cp.sum(cp.huber(x - th, kappa)) / (2 * kappa),
            m - c,
        )
    if name == "norm":  # ||x - theta||_2, theta fixed: a kink at theta (x* itself when feasible)
        th = c + 0.3 * _tangent(domain, rng.normal(size=d))
        return (
            L.CustomLoss(lambda x, th: jnp.linalg.norm(x - th)),
            Seq.Fixed(jnp.asarray(th)),
            lambda x, th: cp.norm(x - th),
            th - c,
        )
    if name == "norm-far":  # the same loss, theta outside the feasible set: x* on its boundary
        th = c + 2.0 * _tangent(domain, rng.normal(size=d))
        return (
            L.CustomLoss(lambda x, th: jnp.linalg.norm(x - th)),
            Seq.Fixed(jnp.asarray(th)),
            lambda x, th: cp.norm(x - th),
            th - c,
        )
    raise KeyError(name)


def _constraint(name, domain, pull, rng):
    """(constraint, data, cvxpy g_t(x) <= 0, per_round): feasible at X's centre, and cutting
    off the direction the loss pulls in (so that it binds)."""
    d, c = DIM, _centre(domain)
    r = float(domain.inscribed_ball()[1])
    u = _tangent(domain, pull)

    def row(scale=0.3):
        a = _tangent(domain, u + scale * rng.normal(size=d))
        return a, float(a @ c + 0.4 * r)

    if name == "linear":
        a, b = row()
        return (
            C.Linear(),
            Seq.Fixed((jnp.asarray(a), jnp.asarray(b))),
            lambda x, ph: [np.asarray(ph[0]) @ x <= float(ph[1])],
            False,
        )
    if name == "multilinear":
        rows = [row(0.8) for _ in range(3)]
        A, b = np.stack([a for a, _ in rows]), np.asarray([b for _, b in rows])
        return (
            C.MultiLinear(),
            Seq.Fixed((jnp.asarray(A), jnp.asarray(b))),
            lambda x, ph: [np.asarray(ph[0]) @ x <= np.asarray(ph[1])],
            False,
        )
    if name == "replay":
        rows = [row(1.0) for _ in range(T)]
        A = np.stack([a for a, _ in rows])
        b = np.asarray([bb for _, bb in rows]) + rng.uniform(0.0, 0.3 * r, T)
        return (
            C.Linear(),
            Seq.Replay((jnp.asarray(A), jnp.asarray(b))),
            lambda x, ph: [np.asarray(ph[0]) @ x <= float(ph[1])],
            True,
        )
    if name == "slackened":
        a, b = row()
        return (
            C.Shifted(C.Linear()),
            Seq.Slackened((jnp.asarray(a), jnp.asarray(b)), 0.02, 0.3),
            lambda x, ph: [np.asarray(ph[0][0]) @ x - float(ph[0][1]) - float(ph[1]) <= 0],
            True,
        )
    if name == "ball":
        q = c - 0.2 * r * u
        s = (0.7 * r) ** 2
        return (
            C.Ball(),
            Seq.Fixed((jnp.asarray(q), jnp.asarray(s))),
            lambda x, ph: [cp.sum_squares(x - np.asarray(ph[0])) <= float(ph[1])],
            False,
        )
    if name == "ellipsoid":
        B = rng.normal(size=(d, d))
        P = B @ B.T / d + 0.5 * np.eye(d)
        s = 0.3 * r**2 * float(np.linalg.eigvalsh(P)[0])
        return (
            C.Ellipsoid(),
            Seq.Fixed((jnp.asarray(P), jnp.asarray(c), jnp.asarray(s))),
            lambda x, ph: [cp.quad_form(x - np.asarray(ph[1]), np.asarray(ph[0])) <= float(ph[2])],
            False,
        )
    if name == "logsumexp":
        W = jnp.asarray(2.0 * rng.normal(size=(4, d)))
        b = float(jax.nn.logsumexp(W @ jnp.asarray(c))) + 0.25
        g = C.CustomConstraint(lambda x, ph: jax.nn.logsumexp(W @ x) - b)
        return (g, Seq.Fixed(()), lambda x, ph: [cp.log_sum_exp(np.asarray(W) @ x) <= b], False)
    raise KeyError(name)


#: (loss, constraint, set) with x* exact: every loss, constraint kind and set at least twice.
#: (Logistic is left to the float32 sweep below, logistic-ball: its float64 x* compiles for
#: ~10 s.)
EXACT_CELLS = [
    ("quadratic", "multilinear", "simplex"),
    ("quadratic", "replay", "box"),
    ("quadratic", "slackened", "simplex"),
    ("quadratic", "ball", "l1"),
    ("linear", "logsumexp", "simplex"),
    ("linear", "slackened", "l1"),
    ("linear", "ellipsoid", "box"),
    ("absolute", "linear", "box"),
    ("absolute", "ball", "ball"),
    ("huber", "logsumexp", "ball"),
    ("huber", "replay", "simplex"),
    ("norm", "linear", "ball"),  # theta feasible: x* = theta, F's kink
    ("norm-far", "multilinear", "l1"),
]

#: custom constraints with kinks (an undeclared kink: ``CustomConstraint(fn)`` as a user writes
#: it), name -> (fn, cvxpy constraint, takes data c)
KINKED = {
    "l1-budget": (
        lambda x, ph: jnp.sum(jnp.abs(x - ph)) - 0.6,
        lambda x, ph: [cp.norm1(x - np.asarray(ph)) <= 0.6],
        True,
    ),
    "max": (lambda x, ph: jnp.max(x) - 0.2, lambda x, ph: [cp.max(x) <= 0.2], False),
    "sum-abs": (lambda x, ph: jnp.sum(jnp.abs(x)) - 0.3, lambda x, ph: [cp.norm1(x) <= 0.3], False),
    "norm": (
        lambda x, ph: jnp.linalg.norm(x - ph) - 0.3,
        lambda x, ph: [cp.norm(x - np.asarray(ph)) <= 0.3],
        True,
    ),
}
KINKED_CELLS = [
    ("quadratic", "l1-budget", "box"),
    ("quadratic", "max", "l1"),
    ("linear", "sum-abs", "ball"),
    ("quadratic", "norm", "simplex"),
]

ALL_CELLS = EXACT_CELLS + KINKED_CELLS
_ID = lambda cell: "-".join(cell)

_EXACT_PARAMS = [pytest.param(c, id=_ID(c)) for c in EXACT_CELLS]


def _cell(loss_name, con_name, set_name) -> Cell:
    rng = np.random.default_rng([ord(ch) for ch in loss_name + con_name + set_name])
    domain = _domain(set_name)
    loss, loss_data, loss_cvx, pull = _loss(loss_name, domain, rng)
    if con_name in KINKED:
        fn, con_cvx, has_data = KINKED[con_name]
        value = (
            (
                jnp.asarray(rng.uniform(-0.3, 0.3, DIM))
                if set_name != "simplex"
                else jnp.full(DIM, 1.0 / DIM)
            )
            if has_data
            else ()
        )
        con, con_data, per_round = C.CustomConstraint(fn), Seq.Fixed(value), False
    else:
        con, con_data, con_cvx, per_round = _constraint(con_name, domain, pull, rng)
    problem = Problem(
        domain=domain, loss=loss, loss_data=loss_data, constraint=con, constraint_data=con_data
    )
    return Cell(problem, loss_cvx, con_cvx, per_round)


# --- one cell solved: cvxpy's optimum and feasible points, x* and the certificates -----------


def _key():
    return seed_keys(jax.random.key(0), jnp.arange(1))[0]


def _rounds(problem, key, horizon):
    """(thetas, phis): every round's data as the run drew them, stacked over t = 1..T."""
    ts = jnp.arange(1, horizon + 1, dtype=jnp.int32)
    return jax.vmap(lambda t: round_data(problem, key, t))(ts)


def _max_g(problem, phis, points, horizon):
    """max_t g_t at each point (points (n, d))."""
    g_t = lambda p: jax.vmap(lambda ph: problem.constraint.value(p, ph), axis_size=horizon)(phis)
    return jax.vmap(lambda p: jnp.max(g_t(p)))(points)


def _solve_cvx(cell, thetas, phis, objective=None):
    """argmin over X and every g_t <= 0 of F (or of ``objective(x)``), by CLARABEL."""
    x = cp.Variable(DIM)
    tree = lambda data, t: jax.tree_util.tree_map(lambda v: np.asarray(v[t]), data)
    cons = _cvx_domain(cell.problem.domain, x)
    for t in range(T if cell.per_round else 1):
        cons += cell.con_cvx(x, tree(phis, t))
    if objective is None:
        goal = sum(cell.loss_cvx(x, tree(thetas, t)) for t in range(T)) / T
    else:
        goal = objective(x)
    prob = cp.Problem(cp.Minimize(goal), cons)
    with warnings.catch_warnings():
        # at these tolerances CLARABEL may stop short of them ("optimal_inaccurate", "Solution
        # may be inaccurate"), still closer to the optimum than at its defaults (1e-8)
        warnings.simplefilter("ignore", UserWarning)
        prob.solve(**CLARABEL)
    assert prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE), prob.status
    return np.asarray(x.value)


class Reference(NamedTuple):
    cell: Cell
    phis: object
    x_cvx: np.ndarray  # cvxpy's optimum
    g_cvx: float  # max_t g_t there (about 0 when the constraint binds)
    ys: np.ndarray  # feasible points: x_cvx, midpoints and convex combinations of it with
    #                 extreme points of the feasible set, X's centre where feasible


_REFERENCES: dict = {}


def reference(cell_id) -> Reference:
    """The cell and cvxpy's solution (cached)."""
    if cell_id not in _REFERENCES:
        assert jax.config.jax_enable_x64
        cell = _cell(*cell_id)
        thetas, phis = _rounds(cell.problem, _key(), T)
        x_cvx = _solve_cvx(cell, thetas, phis)
        rng = np.random.default_rng([ord(ch) for ch in _ID(cell_id)])
        extremes = [
            _solve_cvx(cell, thetas, phis, lambda x, w=rng.normal(size=DIM): w @ x)  # noqa: B008 (one w each)
            for _ in range(N_EXTREME)
        ]
        ys = [x_cvx] + [0.5 * (x_cvx + e) for e in extremes]
        ys += [w @ np.stack([x_cvx] + extremes) for w in rng.dirichlet(np.ones(N_EXTREME + 1), 1)]
        centre = _centre(cell.problem.domain)
        g = np.asarray(_max_g(cell.problem, phis, jnp.asarray(np.stack([x_cvx, centre])), T))
        if g[1] <= 0:
            ys.append(centre)
        _REFERENCES[cell_id] = Reference(cell, phis, x_cvx, float(g[0]), np.stack(ys))
    return _REFERENCES[cell_id]


def _evaluate_impl(problem, key, points, phis, horizon):
    """x*, and at x* and every point: the certificate, F, the scale the gap is relative to
    (F's variation over the feasible region, as the certificate measures it:
    ``variation.measured``), and max_t g_t."""
    x = offline_optimum(problem, key, horizon)
    pts = jnp.concatenate([x[None], points])
    # one point at a time: the certificate's loops run for as long as each point needs
    cert = jax.lax.map(lambda p: certificate.certify_seed(problem, key, horizon, p), pts)
    none = jnp.zeros((0, pts.shape[1]), pts.dtype)
    F = jax.vmap(lambda p: certificate.loss_cuts(problem, key, horizon, p, none)[0])(pts)
    scale = jax.vmap(lambda p: variation.measured(problem, key, horizon, p))(pts)
    return x, cert, F, scale, _max_g(problem, phis, pts, horizon)


def _evaluate(problem, key, points, phis, horizon):
    """``_evaluate_impl`` as one program, compiled as jaxbco compiles its own
    (``jaxbco._src.xla.options``: YNNPACK fusions off, under which its loops run several times
    slower)."""
    dynamic, static = eqx.partition(problem, eqx.is_array)
    fn = jax.jit(
        lambda dyn, key, points, phis: _evaluate_impl(
            eqx.combine(dyn, static), key, points, phis, horizon
        ),
        compiler_options=dict(xla.options()),
    )
    return fn(dynamic, key, points, phis)


class Solved(NamedTuple):
    x: np.ndarray  # jaxbco's x*
    cert: certificate.Certificate  # of x*
    passes: bool
    F: float  # F(x*)
    scale: float
    g: float  # max_t g_t(x*)
    set_violation: float  # |x* - Pi_X(x*)| / D
    F_star: float  # F at cvxpy's optimum (jaxbco's loss)
    x_cvx: np.ndarray
    ys: np.ndarray  # ``Reference.ys``, x_cvx first
    ys_cert: certificate.Certificate
    ys_passes: np.ndarray
    ys_F: np.ndarray
    ys_scale: np.ndarray


_SOLVED: dict = {}


def solved(cell_id) -> Solved:
    """The cell solved both ways (cached: each cell's program compiles once)."""
    if cell_id not in _SOLVED:
        ref = reference(cell_id)
        problem = ref.cell.problem
        x, cert, F, scale, g = jax.tree_util.tree_map(
            np.asarray, _evaluate(problem, _key(), jnp.asarray(ref.ys), ref.phis, T)
        )
        first = certificate.Certificate(*(v[0] for v in cert))
        rest = certificate.Certificate(*(v[1:] for v in cert))
        dom = problem.domain
        _SOLVED[cell_id] = Solved(
            x=x,
            cert=first,
            passes=bool(certificate.passes(first, jnp.float64)),
            F=float(F[0]),
            scale=float(scale[0]),
            g=float(g[0]),
            set_violation=float(
                jnp.linalg.norm(jnp.asarray(x) - dom.project(jnp.asarray(x))) / dom.diameter()
            ),
            F_star=float(F[1]),
            x_cvx=ref.x_cvx,
            ys=ref.ys,
            ys_cert=rest,
            ys_passes=np.asarray(certificate.passes(rest, jnp.float64)),
            ys_F=F[1:],
            ys_scale=scale[1:],
        )
    return _SOLVED[cell_id]


def _rel_error(s: Solved) -> float:
    return (s.F - s.F_star) / s.scale


def _right(s: Solved) -> bool:
    """x* is the optimum (to WRONG, relative) and feasible (to WRONG)."""
    return abs(_rel_error(s)) <= WRONG and s.g <= WRONG and s.set_violation <= WRONG


# --- float64: the battery --------------------------------------------------------------------


@pytest.mark.parametrize("cell_id", _EXACT_PARAMS)
def test_exact_and_certified(x64, cell_id):
    """x* matches cvxpy's optimum, is feasible, and its certificate passes."""
    s = solved(cell_id)
    assert abs(_rel_error(s)) <= REL_F, (s.F, s.F_star, s.x, s.x_cvx)
    assert s.g <= FEAS, s.g
    assert s.set_violation <= FEAS, s.set_violation
    assert s.passes, s.cert


def test_tolerances():
    assert certificate.tolerance(jnp.float64) == TOL64
    eps32 = float(jnp.finfo(jnp.float32).eps)
    assert certificate.tolerance(jnp.float32) == pytest.approx(eps32**0.5)


def test_cells_bind(x64):
    """The battery is not trivial: the constraint binds at the optimum in every cell but the
    one whose x* is F's kink (a cell with x* interior to {g <= 0} only checks the loss)."""
    loose = [_ID(c) for c in EXACT_CELLS if reference(c).g_cvx < -1e-6]
    assert loose == ["norm-linear-ball"], loose


# --- float64: soundness of the gap -----------------------------------------------------------


@pytest.mark.parametrize("cell_id", ALL_CELLS, ids=_ID)
def test_gap_is_a_lower_bound(x64, cell_id):
    """F(x) - gap * scale <= F*: the certificate never claims more than the truth, at x*
    (feasible or not: the bound is weak duality on cuts of convex functions) and at feasible
    points y that are not optimal; a clearly suboptimal y fails ``passes``."""
    s = solved(cell_id)
    assert np.isfinite(s.cert.gap)
    assert s.F - s.cert.gap * s.scale <= s.F_star + 1e-8 * s.scale, (s.F, s.cert, s.F_star)
    excess = (s.ys_F - s.F_star) / s.ys_scale  # (F(y) - F*) / scale, >= -1e-9 (y feasible)
    assert np.all(excess >= -1e-7), excess
    assert np.all(s.ys_cert.gap >= excess - 1e-9), (s.ys_cert.gap, excess)
    clear = excess > 100 * TOL64
    assert clear.sum() >= 2, excess  # the points are not all optimal
    assert not s.ys_passes[clear].any(), (s.ys_cert.gap[clear], excess[clear])
    assert np.all(s.ys_cert.set_violation <= 1e-8)
    assert np.all(s.ys_cert.constraint_violation <= 1e-7)


# --- float64: kinked custom constraints ------------------------------------------------------


@pytest.mark.parametrize("cell_id", KINKED_CELLS, ids=_ID)
def test_kinked_constraint_flagged_when_wrong(x64, cell_id):
    """A CustomConstraint with kinks gets an x* that the projections (which assume a
    differentiable g) may get wrong; the certificate flags it whenever it is, and passes only
    an x* that is right.  Holds as well once these x* are made exact."""
    s = solved(cell_id)
    if not _right(s):
        assert not s.passes, (s.cert, _rel_error(s), s.g)
    if s.passes:
        assert abs(_rel_error(s)) <= REL_F and s.g <= FEAS and s.set_violation <= FEAS, (
            s.cert,
            _rel_error(s),
            s.g,
        )


# --- float32: sweep ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["quadratic-ball", "yu-neely", "logistic-ball", "time-varying-ball", "simplex-quadratic"],
)
def test_sweep_certifies_x_star(name):
    assert not jax.config.jax_enable_x64
    with warnings.catch_warnings():
        warnings.simplefilter("error", CertificateWarning)
        res = jaxbco.sweep(jaxbco.problems.make(name), 200, seeds=3)
    assert res.x_star_certificate.shape == (3, 3)
    assert res.x_star_ok.shape == (3,) and res.x_star_ok.all(), res.x_star_certificate
    assert np.all(res.x_star_certificate <= certificate.tolerance(jnp.float32))


KINK_C = (0.5, -0.4, 0.3, -0.2)


def _kinked_problem():
    """The L1 budget sum |x - c| <= 0.6 on a box (docs/own-problem.md): binding, with kinks."""
    d = len(KINK_C)
    return Problem(
        domain=sets.Box(-jnp.ones(d), jnp.ones(d)),
        loss=L.Quadratic(),
        loss_data=Seq.IIDNormal(jnp.ones(d), 0.1 * jnp.ones(d)),
        constraint=C.CustomConstraint(lambda x, phi: jnp.sum(jnp.abs(x - phi)) - 0.6),
        constraint_data=Seq.Fixed(jnp.asarray(KINK_C)),
    )


def _kinked_truth(problem, seed_id, horizon, x):
    """For the kinked problem's seed, in float64 against cvxpy: x's relative excess
    (F(x) - F*) / (|F(x)| + |grad F(x)| D) and violation max(g(x), 0) / (|grad g| D), as the
    certificate measures them."""
    key = seed_keys(jax.random.key(0), jnp.asarray([seed_id]))[0]
    thetas, _ = _rounds(problem, key, horizon)
    thetas = np.asarray(thetas, np.float64)
    m, c, d = thetas.mean(axis=0), np.asarray(KINK_C), thetas.shape[1]
    z = cp.Variable(d)
    cp.Problem(cp.Minimize(cp.sum_squares(z - m)), [z >= -1, z <= 1, cp.norm1(z - c) <= 0.6]).solve(
        **CLARABEL
    )
    F = lambda y: np.mean(np.sum((y[None] - thetas) ** 2, axis=1))
    x, D = np.asarray(x, np.float64), 2.0 * np.sqrt(d)
    rel = (F(x) - F(z.value)) / (abs(F(x)) + 2 * np.linalg.norm(x - m) * D)
    return rel, max(np.sum(np.abs(x - c)) - 0.6, 0.0) / (np.sqrt(d) * D)


def test_sweep_kinked_constraint_flagged_when_wrong():
    """A sweep whose g has kinks: each seed's x* is flagged (``x_star_ok`` False) whenever it is
    wrong, passes only when it is right, and a CertificateWarning naming CustomConstraint comes
    exactly when some seed is flagged.  (x* here was wrong before the comparator learned kinks:
    the assertions hold either way.)"""
    problem, T32, S = _kinked_problem(), 100, 2
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", CertificateWarning)
        res = jaxbco.sweep(problem, T32, seeds=S)
    assert res.x_star_certificate.shape == (S, 3) and res.x_star_ok.shape == (S,)
    tol = certificate.tolerance(jnp.float32)
    for i in range(S):
        rel, viol = _kinked_truth(problem, i, T32, res.x_star[i])
        if abs(rel) > 10 * tol or viol > 10 * tol:  # wrong
            assert not res.x_star_ok[i], (i, rel, viol, res.x_star_certificate[i])
        if res.x_star_ok[i]:  # certified: right to the float32 tolerance
            assert abs(rel) <= 2 * tol and viol <= 2 * tol, (i, rel, viol)
    messages = [str(w.message) for w in record if issubclass(w.category, CertificateWarning)]
    assert len(messages) == (0 if res.x_star_ok.all() else 1), messages
    assert all("CustomConstraint" in m for m in messages), messages


def test_certificate_warning_names_components():
    """Wrong points for the kinked problem (float32): the constraint's centre c, feasible but
    far from optimal (gap), and 0, outside sum |x - c| <= 0.6 (constraint violation), are
    flagged, and ``report`` warns naming the seeds, the failed measures and the components."""
    problem, T32 = _kinked_problem(), 100
    keys = seed_keys(jax.random.key(0), jnp.arange(2))
    xs = jnp.stack([jnp.asarray(KINK_C, jnp.float32), jnp.zeros(len(KINK_C), jnp.float32)])
    certify = eqx.filter_jit(jax.vmap(lambda k, x: certificate.certify_seed(problem, k, T32, x)))
    cert = certify(keys, xs)
    assert not np.asarray(certificate.passes(cert, jnp.float32)).any(), cert
    assert float(cert.gap[0]) > 1e-2 and float(cert.constraint_violation[0]) == 0.0, cert
    assert float(cert.constraint_violation[1]) > 1e-2, cert
    with pytest.warns(CertificateWarning, match="CustomConstraint") as record:
        out = certificate.report(cert, 2, np.asarray([7, 9]), jnp.float32, problem, "a test")
    message = str(record[0].message)
    for part in (
        "2 of 2 seeds",
        "7, 9",
        "gap",
        "constraint violation",
        "Quadratic loss",
        "Fixed data",
        "Box",
        "a test",
    ):
        assert part in message, (part, message)
    assert out["x_star_certificate"].shape == (2, 3) and not out["x_star_ok"].any()


def test_sweep_without_comparator():
    problem = jaxbco.problems.make("quadratic-ball")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CertificateWarning)
        res = jaxbco.sweep(problem, 50, seeds=2, comparator=False)
    assert res.x_star_ok.shape == (2,) and res.x_star_ok.all()
    assert res.x_star_certificate.shape == (2, 3)
    assert np.isnan(res.x_star_certificate).all()


def test_g_nan_where_x_lies_fails_the_certificate():
    """g undefined (NaN) at x: the certificate fails, whatever F's gap (issue 57: the NaN cut
    was dropped and x certified).  The same x certified where g is defined there."""
    theta = np.tile(np.asarray([[0.7, 0.0, 0.1]], np.float32), (8, 1))
    theta[::2, 2] -= 0.2  # mean (0.7, 0, 0): the minimiser of F, inside the unit ball
    x = jnp.asarray([0.7, 0.0, 0.0])

    def certified(fn):
        problem = Problem(
            sets.L2Ball(jnp.zeros(3), 1.0),
            L.Quadratic(),
            Seq.Replay(theta),
            C.CustomConstraint(fn),
            Seq.Fixed(jnp.zeros(())),
        )
        cert = certificate.certify_seed(problem, jax.random.key(0), 8, x)
        return bool(certificate.passes(cert, jnp.float32)), float(cert.constraint_violation)

    defined = lambda z, ph: z[0] + z[1] - 10.0 + ph  # inactive, defined everywhere
    nan_right = lambda z, ph: jnp.where(z[0] > 0.5, jnp.nan, z[0] + z[1] - 10.0 + ph)
    assert certified(defined) == (True, 0.0)
    ok, violation = certified(nan_right)
    assert not ok and violation == np.inf


def test_f_nan_at_a_probe_fails_the_certificate():
    """f undefined (NaN) beside x, where the certificate probes a kinked loss: x is not
    certified (issue 57), though F and its gradient at x are finite."""
    theta = np.tile(np.asarray([[0.3, 0.0, 0.0]], np.float32), (6, 1))
    x = jnp.asarray([0.3, 0.0, 0.0])  # the minimiser of F, inside the unit ball

    def certified(fn):
        problem = Problem(
            sets.L2Ball(jnp.zeros(3), 1.0),
            L.CustomLoss(fn),  # smooth unknown: the certificate probes x +- h e_i
            Seq.Replay(theta),
            C.Linear(),
            Seq.Fixed((jnp.asarray([1.0, 0.0, 0.0]), jnp.asarray(0.9))),
        )
        cert = certificate._full(problem, jax.random.key(0), 6, x)
        return bool(certificate.passes(cert, jnp.float32)), float(cert.gap)

    sq = lambda z, th: jnp.sum((z - th) ** 2)
    assert certified(sq)[0]
    right = lambda z, th: jnp.where(z[0] > 0.3, jnp.nan, sq(z, th))  # NaN just beside x
    ok, gap = certified(right)
    assert not ok and gap == np.inf
