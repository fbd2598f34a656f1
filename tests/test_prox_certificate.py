"""The prox step's certificate (``jaxbco.solvers.gap``), checked in float64 against cvxpy
(CLARABEL): it passes the exact prox (the solver's answer, which cvxpy confirms), it fails a
point off the prox, its gap bounds P(x) - min P from above (a rigorous bound), and a run
carries each run's worst step (``Result.prox_certificate``, ``prox_ok``) with a
``ProxWarning`` when an inexact solver's step fails it."""

import warnings
import zlib

import cvxpy as cp
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbco
from jaxbco import constraints as C
from jaxbco import problems, sets
from jaxbco._src import blocks
from jaxbco.algorithms import RectifiedBCO
from jaxbco.solvers import Dual, Subgradient, gap

FLOAT64 = True
D = 5
N = 8  # instances per cell, one compiled call each
XI = 0.01


def _domain(name):
    one = jnp.ones(D)
    return {
        "box": sets.Box(-one, one),
        "simplex": sets.Simplex(D, 1.0),
        "l2": sets.L2Ball(jnp.zeros(D), 1.0),
        "l1": sets.L1Ball(jnp.zeros(D), 1.0),
    }[name]


def _instances(seed, constraint):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(N, D)) * 1.5
    beta = 10.0 ** rng.uniform(-2, 5, size=N)
    if constraint == "linear":
        phi = (rng.normal(size=(N, D)), np.full(N, 0.05))
    elif constraint == "rows":  # three halfspaces: g = max of rows, kinks where rows tie
        phi = (rng.normal(size=(N, 3, D)), np.full((N, 3), 0.05))
    else:
        phi = (rng.normal(size=(N, D)) * 0.3, np.full(N, 0.4))
    return y, beta, phi


CONSTRAINTS = {"linear": C.Linear(), "rows": C.MultiLinear(), "ball": C.Ball()}


@eqx.filter_jit
def _solve_and_certify(domain, constraint, y, beta, phi, push):
    """Per instance: the Dual solver's x, its certificate, and those of x moved by ``push``
    (then projected back onto S)."""
    solver = Dual()

    def one(y, beta, phi, push):
        alpha = jnp.ones(())
        nu = solver.init_warm(_Problem(domain, constraint, phi), y.dtype)
        x, warm = solver.solve_warm(domain, XI, constraint, phi, y, y, alpha, beta, nu)
        cut = solver.cut(domain, constraint, phi, x, warm)
        off = sets.project_shrunk(domain, x + push, XI)
        return (
            x,
            gap.certificate(domain, XI, constraint, phi, y, alpha, beta, x, cut),
            off,
            gap.certificate(domain, XI, constraint, phi, y, alpha, beta, off),
        )

    return jax.vmap(one)(y, beta, phi, push)


class _Problem(eqx.Module):
    """What ``init_warm`` reads: the constraint and one round's data."""

    domain: object
    constraint: object
    data: object

    @property
    def constraint_data(self):
        return _Fixed(self.data)


class _Fixed(eqx.Module):
    data: object

    def sample(self, key, t):
        return self.data


def _cvxpy_value(domain_name, constraint_name, y, beta, phi):
    z = cp.Variable(D)
    if constraint_name == "linear":
        g = phi[0] @ z - phi[1]
    elif constraint_name == "rows":
        g = cp.max(phi[0] @ z - phi[1])
    else:
        g = cp.sum_squares(z - phi[0]) - phi[1]
    s = 1.0 - XI  # the shrunk set about X's centre c
    if domain_name == "box":
        cons = [cp.abs(z) <= s]
    elif domain_name == "simplex":
        cons = [z >= XI / D, cp.sum(z) == 1.0]
    elif domain_name == "l2":
        cons = [cp.norm(z, 2) <= s]
    else:
        cons = [cp.norm(z, 1) <= s]
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(z - y) + beta * cp.pos(g)), cons)
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return problem.value


def _prox_value(constraint, phi, y, beta, x):
    return 0.5 * np.sum((x - y) ** 2) + beta * max(
        float(constraint.value(jnp.asarray(x), phi)), 0.0
    )


@pytest.mark.parametrize("constraint_name", sorted(CONSTRAINTS))
@pytest.mark.parametrize("domain_name", ["box", "simplex", "l2", "l1"])
def test_exact_prox_certified_and_an_off_point_not(domain_name, constraint_name):
    domain, constraint = _domain(domain_name), CONSTRAINTS[constraint_name]
    # a fixed seed per cell (Python's hash() of a str changes from process to process)
    y, beta, phi = _instances(
        zlib.crc32(f"{domain_name}-{constraint_name}".encode()), constraint_name
    )
    push = 2e-3 * np.random.default_rng(1).normal(size=(N, D))
    x, cert, off, cert_off = (
        np.asarray(a)
        for a in _solve_and_certify(
            domain,
            constraint,
            jnp.asarray(y),
            jnp.asarray(beta),
            jax.tree_util.tree_map(jnp.asarray, phi),
            jnp.asarray(push),
        )
    )
    assert cert.max() <= gap.tolerance(jnp.float64), cert
    for i in range(N):
        phi_i = jax.tree_util.tree_map(lambda a, i=i: a[i], phi)
        best = _cvxpy_value(domain_name, constraint_name, y[i], beta[i], phi_i)
        p_x = _prox_value(constraint, phi_i, y[i], beta[i], x[i])
        p_off = _prox_value(constraint, phi_i, y[i], beta[i], off[i])
        # the certified x is cvxpy's optimum to its accuracy
        assert p_x <= best + 1e-7 * (1.0 + abs(best)), (i, p_x, best)
        # a point measurably worse than the optimum is flagged
        if p_off - best > 1e-6 * (1.0 + abs(best)):
            assert cert_off[i] > gap.tolerance(jnp.float64), (i, p_off - best, cert_off[i])


@pytest.mark.xfail(
    strict=True, reason="known: the polyhedral dual Newton stalls (benchmarks/NOTES.md)"
)
def test_simplex_with_three_rows_and_a_large_penalty_is_solved_exactly():
    """Instance set 45 of three rows on the simplex (beta ~ 5e3): the dual Newton's x has
    P(x) 65% above cvxpy's optimum (and its certificate, rightly, fails: 0.39).  Found when
    the cell above drew its instances from hash(); about 7% of instance sets have such a
    case (23860ab too).  Kept failing on purpose until the solver is fixed."""
    domain, constraint = _domain("simplex"), CONSTRAINTS["rows"]
    y, beta, phi = _instances(45, "rows")
    zero = jnp.zeros((N, D))
    args = (jnp.asarray(y), jnp.asarray(beta), jax.tree_util.tree_map(jnp.asarray, phi), zero)
    x, cert, _, _ = (np.asarray(a) for a in _solve_and_certify(domain, constraint, *args))
    phi_7 = jax.tree_util.tree_map(lambda a: a[7], phi)
    best = _cvxpy_value("simplex", "rows", y[7], beta[7], phi_7)
    assert _prox_value(constraint, phi_7, y[7], beta[7], x[7]) <= best + 1e-7 * (1.0 + abs(best))
    assert cert.max() <= gap.tolerance(jnp.float64)


def test_the_gap_bounds_the_suboptimality():
    """The certificate times its size is an upper bound on P(x) - min P (weak duality): on
    points off the optimum, gap >= P(x) - P* from cvxpy, however loose."""
    domain, constraint = _domain("box"), C.Ball()
    y, beta, phi = _instances(7, "ball")
    rng = np.random.default_rng(2)
    for scale in (1e-3, 1e-1):
        push = scale * rng.normal(size=(N, D))
        _, _, off, cert_off = (
            np.asarray(a)
            for a in _solve_and_certify(
                domain,
                constraint,
                jnp.asarray(y),
                jnp.asarray(beta),
                jax.tree_util.tree_map(jnp.asarray, phi),
                jnp.asarray(push),
            )
        )
        for i in range(N):
            phi_i = jax.tree_util.tree_map(lambda a, i=i: a[i], phi)
            best = _cvxpy_value("box", "ball", y[i], beta[i], phi_i)
            p_off = _prox_value(constraint, phi_i, y[i], beta[i], off[i])
            # the certificate is relative to P(x) + round-off terms >= P(x): so a point whose
            # certificate is c has P(x) - P* <= c * size, and size >= P(x) here
            assert cert_off[i] >= (p_off - best) / (p_off + 1.0) - 1e-9, (
                i,
                cert_off[i],
                p_off,
                best,
            )


def test_a_lane_keeps_its_value_when_its_block_needs_newton():
    """On a seeds-minor block (x (d, runs)) the Newton on theta runs for every lane once one
    lane fails the first bound; each lane still reports its own value, bitwise that of a block
    where none fails, and the failing lane that of a block of its own."""
    domain, constraint = _domain("simplex"), C.Ball()
    laid = blocks.expand(domain)  # X's arrays (d, 1), shared by the block's runs
    y, beta, phi = _instances(3, "ball")
    args = (jnp.asarray(y), jnp.asarray(beta), jax.tree_util.tree_map(jnp.asarray, phi))
    push = jnp.asarray(0.1 * np.random.default_rng(4).normal(size=(N, D)))
    x, _, off, _ = _solve_and_certify(domain, constraint, *args, push)
    q, s = args[2]

    @jax.jit
    def block(xs, lanes):
        return gap.certificate(
            laid,
            XI,
            constraint,
            (q[lanes].T, s[lanes]),
            args[0][lanes].T,
            jnp.ones(lanes.shape[0]),
            args[1][lanes],
            xs[lanes].T,
        )

    every = jnp.arange(N)
    exact, mixed = block(x, every), block(x.at[0].set(off[0]), every)
    alone = block(off, jnp.zeros(N, jnp.int32))
    tol = gap.tolerance(jnp.float64)
    assert (exact <= tol).all() and mixed[0] > tol
    np.testing.assert_array_equal(mixed[1:], exact[1:])
    np.testing.assert_array_equal(mixed[0], alone[0])


@pytest.fixture(scope="module")
def quadratic_ball():
    return problems.make("quadratic-ball", 4)


def test_a_run_carries_its_worst_prox_certificate(quadratic_ball):
    res = jaxbco.sweep(quadratic_ball, 60, seeds=3, dtype="float64")
    assert res.prox_certificate.shape == (1, 3) and res.prox_ok.shape == (1, 3)
    assert res.prox_ok.all() and (res.prox_certificate <= gap.tolerance(jnp.float64)).all()
    assert np.isfinite(res.prox_certificate).all()


def test_an_inexact_solver_is_flagged(quadratic_ball):
    """Two projected-subgradient steps do not solve Eq. (5) once the penalty binds: the run's
    worst step fails, with a warning naming the method; the exact solver's does not."""
    algo = RectifiedBCO(solver=Subgradient(steps=2), certify_every=1)
    with pytest.warns(gap.ProxWarning, match="Subgradient"):
        res = jaxbco.sweep(quadratic_ball, 60, seeds=2, algorithm=algo, dtype="float64")
    assert not res.prox_ok.any() and (res.prox_certificate > 1e-3).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", gap.ProxWarning)
        one = jaxbco.run(quadratic_ball, 60, dtype="float64")
    assert one.prox_ok and one.prox_certificate.shape == ()


def test_every_round_or_a_sample(quadratic_ball):
    """``certify_every=1`` measures every step: its worst is at least the default sample's
    (rounds t = 0 mod 16), and both pass on the exact solver."""
    every = jaxbco.sweep(
        quadratic_ball, 40, seeds=2, dtype="float64", algorithm=RectifiedBCO(certify_every=1)
    )
    sample = jaxbco.sweep(quadratic_ball, 40, seeds=2, dtype="float64")
    assert (every.prox_certificate >= sample.prox_certificate).all()
    assert every.prox_ok.all() and sample.prox_ok.all()
    np.testing.assert_array_equal(every.regret, sample.regret)  # measuring changes nothing
    with pytest.raises(ValueError, match="certify_every must be an integer >= 1"):
        RectifiedBCO(certify_every=0)


def test_a_method_without_a_prox_reports_nan(quadratic_ball):
    from jaxbco.algorithms import MahdaviPrimalDual

    res = jaxbco.sweep(quadratic_ball, 30, seeds=2, algorithm=MahdaviPrimalDual(), dtype="float64")
    assert np.isnan(res.prox_certificate).all() and res.prox_ok.all()
