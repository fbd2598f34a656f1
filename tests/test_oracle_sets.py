"""The oracle baselines (Flaxman et al.'s BGD and Agarwal et al.'s two-point method, g given in
advance) on a simplex, a box and an L1 ball, against cvxpy in float64, on both back-ends.

Their projection onto (1-xi)X n {g <= 0} runs warm along a run (last round's multiplier):
  * step by step: each round's projection x_{t+1} = Pi(z_t), with z_t formed in NumPy from
    jaxbco's own x_t (so no error carries over), equals cvxpy's projection of z_t;
  * whole runs: the played points equal an independent NumPy reference
    (tests/reference_baselines.py, its projections by cvxpy).
Loss data and directions are replayed (directions in X's affine hull: sum u = 0 on the
simplex), and the constraint binds at many rounds (checked, so the projection is exercised).
"""

import dataclasses
import functools
import os
import sys

import cvxpy as cp
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import backends, constraints, losses, sequences, sets, simulate
from jaxbco.algorithms import AgarwalHyper, AgarwalTwoPoint, FlaxmanBGD, FlaxmanHyper
from jaxbco.problem import Problem

sys.path.insert(0, os.path.dirname(__file__))
import reference_baselines as ref  # noqa: E402

FLOAT64 = True  # float64 references (tests/conftest.py)

D, T = 5, 60
STEP_ATOL = 1e-7  # cvxpy (CLARABEL, tightened) solves to ~1e-9; a projection is 1-Lipschitz
RUN_ATOL = 1e-6  # whole runs: cvxpy's error carried through T rounds of contracting steps
A_ROWS = np.array([[1.0, 1.0, 0.5, 0.0, -0.5], [0.0, -0.4, 1.0, 1.0, 0.3]])
THETA_CENTRE = np.array([0.8, 0.6, 0.4, -0.1, 0.1])  # cut off by a.x <= b


def _set(kind):
    """(jaxbco set, inscribed centre c, cvxpy constraints on w = c + (x - c)/s, hull dim)."""
    if kind == "simplex":
        return (
            sets.Simplex(D, 1.0),
            np.full(D, 1.0 / D),
            lambda w: [w >= 0, cp.sum(w) == 1.0],
            D - 1,
        )
    if kind == "box":
        lo, hi = -np.ones(D), np.array([1.0, 1.0, 0.5, 1.0, 1.0])
        return (
            sets.Box(jnp.asarray(lo), jnp.asarray(hi)),
            (lo + hi) / 2,
            lambda w: [w >= lo, w <= hi],
            D,
        )
    centre = np.full(D, 0.1)
    return (
        sets.L1Ball(jnp.asarray(centre), 1.5),
        centre,
        lambda w: [cp.norm1(w - centre) <= 1.5],
        D,
    )


def _constraint(rows):
    """(jaxbco constraint, its Fixed data, (A, b) as NumPy): one halfspace or two."""
    A, b = A_ROWS[:rows], np.array([0.3, 0.25])[:rows]
    if rows == 1:
        return constraints.Linear(), sequences.Fixed((jnp.asarray(A[0]), jnp.asarray(b[0]))), A, b
    return constraints.MultiLinear(), sequences.Fixed((jnp.asarray(A), jnp.asarray(b))), A, b


def _cvx_projector(c, in_set, A=None, b=None):
    """z, xi -> argmin ||x - z||^2 over c + (1-xi)(X - c) [n {A x <= b}], by cvxpy (CLARABEL)."""

    def project(z, xi):
        x = cp.Variable(D)
        s = 1.0 - xi
        cons = in_set(c + (x - c) / s)
        if A is not None:
            cons.append(A @ x <= b)
        cp.Problem(cp.Minimize(cp.sum_squares(x - z)), cons).solve(
            solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12
        )
        return np.asarray(x.value)

    return project


#: (set, rows of g): the crash's pair (simplex, one halfspace), the box and L1 ball with one,
#: the box with two (the polyhedral dual, warm-started).
CASES = [("simplex", 1), ("box", 1), ("l1ball", 1), ("box", 2)]


@functools.cache
def _case(kind, rows):
    rng = np.random.default_rng(5 + rows)
    domain, c, in_set, d_hull = _set(kind)
    con, data, A, b = _constraint(rows)
    theta = THETA_CENTRE + 0.1 * rng.normal(size=(T, D))
    U = rng.normal(size=(T, D))
    if kind == "simplex":  # directions in the hull {sum u = 0}
        U -= U.mean(axis=1, keepdims=True)
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    problem = Problem(domain, losses.Quadratic(), sequences.Replay(jnp.asarray(theta)), con, data)
    setup = ref.SetSetup(
        c, theta, U, _cvx_projector(c, in_set), _cvx_projector(c, in_set, A, b), d_hull
    )
    return problem, setup, A, b


ALGS = {
    "flaxman-bgd": (FlaxmanBGD(), FlaxmanHyper(nu=0.002, delta=0.01, xi=0.1), ref.flaxman),
    "agarwal-2pt": (AgarwalTwoPoint(), AgarwalHyper(eta=0.02, delta=0.01, xi=0.1), ref.agarwal),
}


def _plain(algorithm):
    cls = type(algorithm)
    return type("Plain" + cls.__name__, (cls,), {})(
        **{f.name: getattr(algorithm, f.name) for f in dataclasses.fields(algorithm) if f.init}
    )


@functools.cache
def _run(kind, rows, alg_name, engine):
    problem, setup, _, _ = _case(kind, rows)
    alg, hyper, _ = ALGS[alg_name]
    alg = alg if engine == backends.SEEDS_MINOR else _plain(alg)
    res = simulate.run(
        problem,
        T,
        hyper,
        algorithm=alg,
        directions=jnp.asarray(setup.U),
        checkpoints=np.arange(1, T + 1),
        record_decisions=True,
        dtype="float64",
        comparator=False,
    )
    assert res.engine == engine and not bool(res.failed)
    return np.asarray(res.decisions), np.asarray(res.x_final)


PARAMS = [
    (k, r, a, e) for k, r in CASES for a in ALGS for e in (backends.SEEDS_MINOR, backends.VMAP)
]
IDS = [f"{k}-{r}row-{a}-{e}" for k, r, a, e in PARAMS]


@pytest.mark.parametrize("kind,rows,alg_name,engine", PARAMS, ids=IDS)
def test_each_projection_along_the_run_is_cvxpys(kind, rows, alg_name, engine):
    problem, setup, A, b = _case(kind, rows)
    _, hyper, _ = ALGS[alg_name]
    played, x_final = _run(kind, rows, alg_name, engine)
    delta, xi = float(hyper.delta), float(hyper.xi)
    # the iterates y_t (Flaxman plays y_t + delta u_t) and the next ones jaxbco computed
    iterates = played - delta * setup.U if alg_name == "flaxman-bgd" else played
    nxt = np.concatenate([iterates[1:], x_final[None]])
    worst, binding = 0.0, 0
    for t in range(1, T + 1):
        y = iterates[t - 1]
        if alg_name == "flaxman-bgd":
            z = (
                y
                - float(hyper.nu)
                * (setup.d_hull / delta)
                * setup.f(played[t - 1], t)
                * setup.U[t - 1]
            )
        else:
            z = y - float(hyper.eta) * setup.two_point(y, t, delta)
        want = setup.project_known(z, xi)
        worst = max(worst, float(np.max(np.abs(nxt[t - 1] - want))))
        binding += bool(np.max(A @ want - b) > -1e-7)
    assert worst <= STEP_ATOL, f"worst |x_(t+1) - cvxpy| = {worst:.2e}"
    assert binding >= T // 3, f"g binds at {binding} of {T} projections: not exercised"
    assert np.max(nxt @ A.T - b) <= 1e-9  # feasible for the known g


@pytest.mark.parametrize(
    "kind,rows,alg_name",
    [(k, r, a) for k, r in CASES for a in ALGS],
    ids=[f"{k}-{r}row-{a}" for k, r in CASES for a in ALGS],
)
def test_whole_run_equals_the_numpy_reference(kind, rows, alg_name):
    _, setup, _, _ = _case(kind, rows)
    _, hyper, reference = ALGS[alg_name]
    kw = {f: float(getattr(hyper, f)) for f in ("delta", "xi")}
    kw.update(nu=float(hyper.nu)) if alg_name == "flaxman-bgd" else kw.update(eta=float(hyper.eta))
    played_ref, final_ref = reference(setup, **kw)
    for engine in (backends.SEEDS_MINOR, backends.VMAP):
        played, x_final = _run(kind, rows, alg_name, engine)
        np.testing.assert_allclose(played, played_ref, rtol=0, atol=RUN_ATOL, err_msg=engine)
        np.testing.assert_allclose(x_final, final_ref, rtol=0, atol=RUN_ATOL, err_msg=engine)
