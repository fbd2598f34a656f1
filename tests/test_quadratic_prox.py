"""The quadratic-constraint prox (``solvers.QuadraticIPM``, the default for an Ellipsoid or Ball
g on a box or simplex): its derivatives against central finite differences (forward and
reverse mode), its seeds-minor block path (binding lanes gathered into chunks) against the
one-run path, and a warm chain of a real run of Algorithm 1 re-solved step by step by cvxpy
(``benchmarks/_chains.py``; the T >= 1000 chains and the NYSE chain: ``benchmarks/solver_gaps.py
--chains``)."""

import functools
import pathlib
import sys

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import constraints as C
from jaxbco import sets
from jaxbco._src import blocks
from jaxbco.solvers import Dual, QuadraticIPM

D = 5


def _instance(kind):
    rng = np.random.default_rng(7)
    A = rng.normal(size=(D, D))
    P = A @ A.T + 0.1 * np.eye(D)
    if kind == "Simplex":
        domain = sets.Simplex(D, 1.0)
        y = np.array([0.9, 0.3, -0.2, 0.1, -0.1])
    elif kind == "L1Ball":
        domain = sets.L1Ball(np.full(D, 0.05), 1.2)
        y = np.array([1.5, 0.8, -0.3, 0.02, -1.4])
    else:
        domain = sets.Box(-np.ones(D), np.ones(D))
        y = np.array([1.5, 0.8, -0.3, 0.2, -1.4])
    x_proj = np.asarray(domain.project(jnp.asarray(y)))
    s = 0.5 * x_proj @ P @ x_proj  # cuts Pi_S(y) off; q = 0 stays inside
    return domain, (P, np.zeros(D), s), y


def _solve(domain, phi, y, alpha, beta, xi=0.05):
    return QuadraticIPM().solve(
        domain, jnp.asarray(xi), C.Ellipsoid(), phi, y, y, jnp.asarray(alpha), beta
    )


@eqx.filter_jit
def _solve_jit(domain, phi, y, beta):
    """``_solve`` at alpha = 2, one jitted function for every test (a lambda per test would
    compile its own programs)."""
    return _solve(domain, phi, y, 2.0, beta)


@pytest.mark.parametrize("kind", ["Simplex", "Box", "L1Ball"])
@pytest.mark.parametrize("beta", [50.0, 0.01])
def test_derivatives_match_finite_differences(kind, beta):
    """d x / d y and d x / d beta of the solution (the constraint binding at beta = 50, the
    penalty saturated at beta = 0.01): jacfwd and grad (the implicit derivative of the KKT
    system, ``_ipm_tangent``) against central differences in float64."""
    with jax.enable_x64(True):
        domain, phi, y0 = _instance(kind)
        phi = jax.tree_util.tree_map(jnp.asarray, phi)
        f = functools.partial(_solve_jit, domain, phi)  # both betas share the programs
        y0, b0 = jnp.asarray(y0), jnp.asarray(beta)
        x = np.asarray(f(y0, b0))
        g = float(x @ np.asarray(phi[0]) @ x - phi[2])
        assert (abs(g) < 1e-10) if beta == 50.0 else (g > 1e-3)  # binding vs saturated
        h = 1e-6
        fd_y = np.stack(
            [
                (np.asarray(f(y0 + h * e, b0)) - np.asarray(f(y0 - h * e, b0))) / (2 * h)
                for e in np.eye(D)
            ],
            axis=1,
        )
        fd_b = (np.asarray(f(y0, b0 + h)) - np.asarray(f(y0, b0 - h))) / (2 * h)
        jac_y = np.asarray(jax.jacfwd(f, argnums=0)(y0, b0))
        jac_b = np.asarray(jax.jacfwd(f, argnums=1)(y0, b0))
        np.testing.assert_allclose(jac_y, fd_y, atol=1e-6)
        np.testing.assert_allclose(jac_b, fd_b, atol=1e-6)
        w = jnp.arange(1.0, D + 1.0)
        grad_y = np.asarray(jax.grad(lambda y: jnp.sum(w * f(y, b0)))(y0))
        np.testing.assert_allclose(grad_y, jac_y.T @ np.asarray(w), atol=1e-9)


@pytest.mark.parametrize("kind", ["Simplex", "Box", "L1Ball"])
def test_blocks_equal_one_run_answers(kind):
    """A seeds-minor block of 7 lanes (shared P, per-lane y, alpha, beta, xi; some lanes slack,
    some binding, chunks of 2 binding lanes) equals the one-run answers and derivatives."""
    with jax.enable_x64(True):
        domain, phi, y0 = _instance(kind)
        rng = np.random.default_rng(3)
        R = 7
        ys = y0[:, None] * rng.uniform(0.0, 1.5, size=R) + 0.1 * rng.normal(size=(D, R))
        alphas = rng.uniform(0.5, 3.0, size=R)
        betas = np.array([50.0, 0.3, 0.0, 8.0, 200.0, 1.0, 30.0])
        xis = rng.uniform(0.0, 0.1, size=R)
        P, q, s = (jnp.asarray(a) for a in phi)
        block_phi = blocks.expand((P, q, s))
        block_domain = blocks.expand(domain)
        solver = QuadraticIPM(lanes=2)
        block = lambda ys: solver.solve(
            block_domain,
            jnp.asarray(xis),
            C.Ellipsoid(),
            block_phi,
            ys,
            ys,
            jnp.asarray(alphas),
            jnp.asarray(betas),
        )
        x_block = np.asarray(jax.jit(block)(jnp.asarray(ys)))
        one = jax.jit(
            lambda y, a, b, xi: solver.solve(domain, xi, C.Ellipsoid(), (P, q, s), y, y, a, b)
        )
        for r in range(R):
            x_one = np.asarray(one(jnp.asarray(ys[:, r]), alphas[r], betas[r], xis[r]))
            np.testing.assert_allclose(x_block[:, r], x_one, atol=1e-12, err_msg=f"lane {r}")
        w = jnp.asarray(rng.normal(size=(D, R)))
        g_block = np.asarray(jax.grad(lambda ys: jnp.sum(w * block(ys)))(jnp.asarray(ys)))
        for r in range(R):
            g_one = jax.grad(lambda y: jnp.sum(w[:, r] * one(y, alphas[r], betas[r], xis[r])))
            np.testing.assert_allclose(
                g_block[:, r],
                np.asarray(g_one(jnp.asarray(ys[:, r]))),
                atol=1e-9,
                err_msg=f"lane {r}",
            )


def test_every_lane_at_once_equals_chunks():
    """The GPU's choice (every lane in one solve, the non-binding lanes masked) gives the CPU's
    chunk-by-chunk answers: a block of 9 lanes, some slack, chunks of 2 binding lanes."""
    with jax.enable_x64(True):
        domain, phi, y0 = _instance("Box")
        rng = np.random.default_rng(5)
        R = 9
        ys = jnp.asarray(
            y0[:, None] * rng.uniform(0.0, 1.5, size=R) + 0.1 * rng.normal(size=(D, R))
        )
        betas = jnp.asarray(np.array([50.0, 0.3, 0.0, 8.0, 200.0, 1.0, 30.0, 0.0, 5.0]))
        args = (
            blocks.expand(domain),
            jnp.asarray(rng.uniform(0.0, 0.1, size=R)),
            C.Ellipsoid(),
            blocks.expand(tuple(jnp.asarray(a) for a in phi)),
        )
        solve = jax.jit(
            lambda solver, ys: solver.solve(*args, ys, ys, jnp.ones(R), betas), static_argnums=0
        )
        chunks, at_once = (np.asarray(solve(QuadraticIPM(lanes=k), ys)) for k in (2, None))
        # each lane stops at its KKT measure's round-off, not at a bitwise fixed point; the
        # chunks take the face first (``_ipm_face``, the CPU's path), every lane at once the
        # interior point alone: positions to 1e-11 (seen 1.6e-12: the interior point's, whose
        # objective was the higher by 7e-14 in 40-digit arithmetic), and no chunk's objective
        # above the interior point's beyond float64's resolution
        np.testing.assert_allclose(at_once, chunks, rtol=0, atol=1e-11)
        P, q, s = (np.asarray(a, np.float64) for a in phi)

        def objective(x, r):
            g = (x - q) @ P @ (x - q) - s
            return 0.5 * np.sum((x - np.asarray(ys)[:, r]) ** 2) + float(betas[r]) * max(g, 0.0)

        for r in range(R):
            worse = objective(chunks[:, r], r) - objective(at_once[:, r], r)
            assert worse <= 4 * np.finfo(np.float64).eps * (1.0 + objective(at_once[:, r], r)), r
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="lanes must be"):
            QuadraticIPM(lanes=bad)


def test_dual_takes_the_interior_point_for_quadratic_constraints():
    for domain in (sets.Simplex(3), sets.Box(-np.ones(3), np.ones(3))):
        for constraint in (C.Ellipsoid(), C.Ball(), C.Shifted(C.Ellipsoid())):
            assert Dual.method(domain, constraint) is QuadraticIPM


def test_warm_chain_matches_cvxpy_at_every_step():
    """A run of Algorithm 1 (d = 6 simplex, dense slowly rotating P_t binding in most rounds,
    T = 150) whose every prox step is jaxbco's, every step re-solved by cvxpy: no relative
    gap above 1e-6 (float64), and every answer's KKT residual (multipliers fitted in NumPy
    from the answer alone) at round-off."""
    import cvxpy  # noqa: F401  (a hard test dependency: missing fails, never skips)

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from benchmarks import _chains

    insts, answers = _chains.chain("drift", 150)
    assert np.mean([inst.active for inst in insts]) > 0.5
    gaps, ratio = _chains.gaps(insts, answers)
    assert ratio.max() > 20  # late rounds: beta / alpha grows
    assert np.all(gaps <= 1e-6), f"max gap {gaps.max():.3e} at round {int(np.argmax(gaps)) + 1}"
    kkt = np.array([_chains.kkt_residual(inst, x) for inst, x in zip(insts, answers)])
    assert np.all(kkt <= 1e-9), f"max KKT residual {kkt.max():.3e} at round {np.argmax(kkt) + 1}"


def test_round_off_guard_is_lane_by_lane():
    """The late-round guard (a pull off g = 0 by its round-off scale, with a projected step
    down g where Pi_S(q) is no Slater point, taken only in rounds where some lane needs it)
    gives each lane of a block the answer it gets alone: the 12 Simplex/IllEllipsoid battery
    instances (cond(P) = 1e6, beta/alpha to 1e10, some without a Slater point at Pi_S(q))
    as one block with per-lane P, against one run each."""
    import cvxpy  # noqa: F401  (a hard test dependency: missing fails, never skips)

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from benchmarks import _battery as B

    insts = B.make_battery("Simplex", "IllEllipsoid", 12)
    with jax.enable_x64(True):
        alone = B.solve_batch(Dual(), "Simplex", "IllEllipsoid", insts, np.dtype("float64"))
        cols = lambda f: jnp.asarray(np.stack([f(i) for i in insts], axis=-1))
        phi = (cols(lambda i: i.phi[0]), cols(lambda i: i.phi[1]), cols(lambda i: i.phi[2]))
        y = cols(lambda i: i.y)
        block = jax.jit(
            lambda y, a, b, xi: QuadraticIPM().solve(
                blocks.expand(B.make_domain("Simplex", jnp.float64)),
                xi,
                C.Ellipsoid(),
                phi,
                y,
                y,
                a,
                b,
            )
        )(y, cols(lambda i: i.alpha), cols(lambda i: i.beta), cols(lambda i: i.xi))
    np.testing.assert_allclose(np.asarray(block).T, alone, atol=1e-12, rtol=0)


# --- SmoothIPM: the same interior point for any smooth g (g's Hessian by jax.hessian) -------

_solve_any = eqx.filter_jit(_solve)  # one program per set for the three (alpha, beta) rounds
_dual_solve = eqx.filter_jit(
    lambda domain, xi, g, phi, x0, y, a, b: Dual().solve(domain, xi, g, phi, x0, y, a, b)
)


def _as_custom(P, q, s):
    fn = lambda x, phi: (x - phi[1]) @ phi[0] @ (x - phi[1]) - phi[2]
    return C.CustomConstraint(fn, interior=lambda phi: phi[1]), (P, q, s)


@pytest.mark.parametrize("kind", ["Simplex", "Box", "L1Ball", "L2Ball"])
def test_smooth_ipm_equals_the_quadratic_ipm_on_the_same_g(kind):
    """A CustomConstraint written as the Ellipsoid's function takes SmoothIPM and gives the
    Ellipsoid's answers to round-off, from an early round (alpha = 2) to a late one
    (beta/alpha = 1e8, where SmoothDual's 60 APG steps per x(mu) stopped short: 3.5e-2 off
    along a run on an L1 ball)."""
    from jaxbco.solvers import SmoothIPM

    with jax.enable_x64(True):
        if kind == "L2Ball":
            domain, phi, y = _instance("Box")
            domain = sets.L2Ball(np.zeros(D), 1.0)
        else:
            domain, phi, y = _instance(kind)
        P, q, s = (jnp.asarray(a) for a in phi)
        custom, data = _as_custom(P, q, s)
        assert Dual.method(domain, custom) is SmoothIPM
        for alpha, beta in [(2.0, 50.0), (1e-3, 1e5), (3.0, 0.01)]:
            args = (jnp.asarray(y), jnp.asarray(alpha), jnp.asarray(beta))
            want = np.asarray(_solve_any(domain, (P, q, s), *args))
            got = np.asarray(_dual_solve(domain, jnp.asarray(0.05), custom, data, args[0], *args))
            np.testing.assert_allclose(got, want, atol=1e-10, err_msg=f"{alpha}, {beta}")


def test_smooth_ipm_derivatives_match_finite_differences():
    """d x / d y and d x / d beta through SmoothIPM for a non-quadratic g (log-sum-exp) on a
    box, binding: the implicit derivative with g's Hessian against central differences."""
    with jax.enable_x64(True):
        domain = sets.Box(-np.ones(D), np.ones(D))
        A = jnp.asarray(np.random.default_rng(5).normal(size=(3, D)))
        fn = lambda x, phi: jax.nn.logsumexp(phi[0] @ x) - phi[1]
        y0, b0 = jnp.asarray([1.5, 0.8, -0.3, 0.2, -1.4]), jnp.asarray(50.0)
        x_proj = domain.project(0.95 * y0)  # (1 - xi) X with xi = 0.05 about the centre 0
        phi = (A, jax.nn.logsumexp(A @ x_proj) - 0.5)  # cuts Pi_S(y0) off
        f = jax.jit(
            lambda y, b: Dual().solve(
                domain, jnp.asarray(0.05), C.CustomConstraint(fn), phi, y, y, jnp.asarray(2.0), b
            )
        )
        x = np.asarray(f(y0, b0))
        assert abs(float(fn(jnp.asarray(x), phi))) < 1e-10  # binding
        h = 1e-6
        fd_y = np.stack(
            [
                (np.asarray(f(y0 + h * e, b0)) - np.asarray(f(y0 - h * e, b0))) / (2 * h)
                for e in np.eye(D)
            ],
            axis=1,
        )
        np.testing.assert_allclose(np.asarray(jax.jacfwd(f)(y0, b0)), fd_y, atol=1e-6)
        fd_b = (np.asarray(f(y0, b0 + h)) - np.asarray(f(y0, b0 - h))) / (2 * h)
        np.testing.assert_allclose(np.asarray(jax.jacfwd(f, argnums=1)(y0, b0)), fd_b, atol=1e-6)
