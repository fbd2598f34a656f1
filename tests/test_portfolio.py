"""Real-data portfolio problem: the shipped data, the risk matrices (no look-ahead), the
risk-constrained best-CRP comparator against cvxpy, and wealth bookkeeping of a run."""

import os
import re

FLOAT64 = True  # every test here is a float64 reference check (tests/conftest.py)

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jaxbco import problems, simulate  # noqa: E402
from jaxbco.algorithms import FlaxmanBGD, MahdaviPrimalDual  # noqa: E402
from jaxbco.data import portfolio as pf  # noqa: E402

SHAPES = {
    "nyse_o": (5651, 36),
    "nyse_n": (6431, 23),
    "djia": (507, 30),
    "sp500": (1276, 25),
    "tse": (1259, 88),
    "msci": (1043, 24),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_loader_shapes_and_range(name):
    r = pf.load_relatives(name)
    assert r.shape == SHAPES[name] and r.dtype == np.float64
    assert np.all(np.isfinite(r)) and r.min() >= 0.3 and r.max() <= 2.0
    assert len(pf.asset_names(name)) == r.shape[1]


def test_provenance_and_checksums():
    path = os.path.join(pf.DATA_DIR, "PROVENANCE.md")
    assert os.path.isfile(path)
    text = open(path).read()
    assert "universal-portfolios" in text and "sha256" in text
    sums = dict(re.findall(r"^\| (\w+) \| `[0-9a-f]{64}` \| `([0-9a-f]{64})` \|$", text, re.M))
    assert set(sums) == set(SHAPES)
    for name, want in sums.items():
        with np.load(os.path.join(pf.DATA_DIR, f"{name}.npz")) as z:
            assert pf.array_sha256(z["relatives"]) == want
    with pytest.raises(ValueError, match="unknown portfolio data set"):
        pf.load_relatives("ftse")


def test_sigma_t_uses_only_earlier_days():
    rel = pf.load_relatives("djia")[:120, :5].copy()
    W = 20
    sig = pf.risk_matrices(rel, W)
    assert sig.shape == (100, 5, 5)
    for t in (1, 37, 100):  # Sigma_t = sample covariance of rows t-1 .. t+W-2 (0-based)
        np.testing.assert_allclose(
            sig[t - 1], np.cov(rel[t - 1 : t - 1 + W].T), rtol=1e-9, atol=1e-15
        )
    t0 = 40  # round t0's own day is row W + t0 - 1: changing it may move Sigma_{t0+1} only
    changed = rel.copy()
    changed[W + t0 - 1] *= 1.5
    sig2 = pf.risk_matrices(changed, W)
    np.testing.assert_array_equal(sig2[:t0], sig[:t0])
    assert not np.allclose(sig2[t0], sig[t0])


def test_problem_replays_days_after_the_window():
    rel = pf.load_relatives("msci")
    problem, info = pf.portfolio_problem(rel, window=60, horizon=300, assets=7)
    R, Q = pf.problem_arrays(problem)
    assert R.shape == (300, 7) and Q.shape == (300, 7, 7)
    np.testing.assert_allclose(R, rel[60:360, :7], rtol=1e-6)  # float32 replay when x64 is off
    u = np.full(7, 1 / 7)
    q_u = (Q @ u) @ u
    assert np.max(q_u) == pytest.approx(1.0, rel=1e-6)  # rho = the uniform CRP's worst day
    np.testing.assert_allclose(Q * info["rho"], info["sigmas"], rtol=1e-6)


def _cvxpy_crp(R, Q):
    import cvxpy as cp  # a hard test dependency: missing fails, never skips

    n = R.shape[1]
    x = cp.Variable(n)
    cons = [cp.sum(x) == 1, x >= 0]
    for q in Q:
        L = np.linalg.cholesky(q + 1e-15 * np.eye(n))
        cons.append(cp.sum_squares(L.T @ x) <= 1)
    prob = cp.Problem(cp.Minimize(-cp.sum(cp.log(R @ x))), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return np.asarray(x.value), float(prob.value)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize("risk", [1.0, 0.85])
def test_comparator_matches_cvxpy(risk):
    """200 days, 6 assets: objective to 1e-6 relative, every g_t(x*) <= 1e-8; with risk 1 the
    uniform start is on the boundary, with 0.85 outside it (phase I runs in both)."""
    rel = pf.load_relatives("nyse_o")[:250, :6]
    problem, _ = pf.portfolio_problem(rel, window=50, risk=risk)
    R, Q = pf.problem_arrays(problem)
    np.testing.assert_array_equal(R, rel[50:])
    x, info = pf.best_crp(R, Q)
    x_cvx, obj_cvx = _cvxpy_crp(R, Q)
    u = np.full(6, 1 / 6)
    assert np.max((Q @ u) @ u) == pytest.approx(1 / risk)  # x_1 on (risk 1) or past the boundary
    assert info["minmax"] is not None and info["minmax"] < 1  # so phase I found a Slater point
    assert abs(x.sum() - 1) < 1e-12 and x.min() >= 0
    assert np.max((Q @ x) @ x) - 1 <= 1e-8
    assert abs(info["objective"] - obj_cvx) <= 1e-6 * abs(obj_cvx)
    np.testing.assert_allclose(x, x_cvx, atol=1e-4)
    x_free, _ = pf.best_crp(R)
    assert np.max((Q @ x_free) @ x_free) > 1.01  # the constraint binds: Cover's best CRP breaks it


def test_comparator_reports_infeasible_budget():
    rel = pf.load_relatives("nyse_o")[:250, :6]
    problem, _ = pf.portfolio_problem(rel, window=50, risk=0.5)
    R, Q = pf.problem_arrays(problem)
    with pytest.raises(ValueError, match="infeasible"):
        pf.best_crp(R, Q)


@pytest.mark.parametrize("algorithm", [FlaxmanBGD(), MahdaviPrimalDual()])
def test_run_wealth_and_regret_bookkeeping(algorithm):
    """A run with comparator=False measures regret against x_1 (uniform); the study's wealth
    exp(-(R_t + sum f(x_1))) equals prod <r_s, x_s> of the played points, and regret_offset
    turns it into regret against x*."""
    T = 30
    problem = problems.make("nyse-portfolio", dim=5, horizon=T)
    res = simulate.run(
        problem,
        T,
        algorithm=algorithm,
        checkpoints=np.arange(1, T + 1),
        dtype="float64",
        comparator=False,
        record_decisions=True,
    )
    R, _ = pf.problem_arrays(problem)
    x1 = np.full(5, 0.2)
    played = res.decisions  # (T, d): x_t as played (Flaxman plays y_t + delta u_t)
    assert np.allclose(played.sum(-1), 1) and played.min() >= -1e-12
    wealth = np.cumprod(np.sum(R * played, axis=1))
    base = np.cumsum(-np.log(R @ x1))
    np.testing.assert_allclose(np.exp(-(res.regret + base)), wealth, rtol=1e-9)
    x_star, info = pf.comparator(problem)
    regret = res.regret + pf.regret_offset(problem, res.rounds, x1, x_star)
    direct = np.cumsum(-np.log(np.sum(R * played, axis=1)) + np.log(R @ x_star))
    np.testing.assert_allclose(regret, direct, rtol=1e-9, atol=1e-12)
