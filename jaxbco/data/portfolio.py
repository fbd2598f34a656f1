"""Online portfolio selection on real asset prices, with a time-varying risk constraint.

Data: six classic benchmark sets (NYSE 1962-84 of Cover 1991, NYSE 1985-2010, DJIA, S&P 500,
TSX, MSCI) shipped as float32 daily price relatives r_t = p_t / p_{t-1} (see
``portfolio_data/PROVENANCE.md``); ``load_relatives(name)`` returns one as (days, assets).

Problem (``portfolio_problem``): X the probability simplex, f_t(x) = -log <r_t, x> (so
sum_t f_t(x_t) = -log of the final wealth), and the risk constraint

    g_t(x) = x^T Sigma_t x / rho - 1 <= 0,

Sigma_t the sample covariance (ddof 1) of the relatives of the ``window`` trading days strictly
before round t's day: round t (1-based) is data day ``window + t`` (1-based), so the first
``window`` days are a burn-in that only feeds Sigma_1, and no Sigma_t looks at day t or later.
The budget rho = ``risk`` * max_t u^T Sigma_t u, u = (1/n, ..., 1/n): with ``risk`` = 1 the
uniform CRP (and x_1 = u) satisfies every g_t, so the offline problem is feasible, and any
less risky portfolio (the min-max-variance one, found by the comparator's phase I) is a
Slater point.  Dividing by rho makes g_t unitless (a fraction of the budget), so penalties
and multipliers compare with the loss on the same scale.

Comparator (``best_crp``): x* = argmin_{x in simplex} sum_t -log <r_t, x> subject to
x^T Q_t x <= 1 for every t (Q_t = Sigma_t / rho): a log-barrier interior-point method in float64
(damped Newton on self-concordant barriers, equality sum x = 1 in the KKT system), with a
phase I on (x, s) that minimises s subject to x^T Q_t x <= s when x_1 is not strictly feasible.
Its iterates are strictly feasible and its objective is within m / t_final of the optimum
(m = n + T barrier terms).  jaxbco's own comparator handles none of this (a constraint that
is an intersection of T ellipsoids), so the study runs ``sweep(..., comparator=False)`` (regret
against x_1, the uniform CRP) and ``regret_offset`` shifts the curves to regret against x*.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re

import jax.numpy as jnp
import numpy as np

DATA_DIR = os.path.join(os.path.dirname(__file__), "portfolio_data")

DATASETS = {
    "nyse_o": "NYSE, 1962-1984 (Cover 1991)",
    "nyse_n": "NYSE, 1985-2010",
    "djia": "Dow Jones Industrial Average, 2001-2003",
    "sp500": "S&P 500, 1998-2003",
    "tse": "Toronto Stock Exchange, 1994-1998",
    "msci": "MSCI world indices, 2006-2010",
}

WINDOW = 250  # one trading year of history for Sigma_t


def array_sha256(a: np.ndarray) -> str:
    """SHA-256 of an array's C-order bytes (as recorded in PROVENANCE.md)."""
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


@functools.lru_cache(maxsize=1)
def _checksums() -> dict:
    path = os.path.join(DATA_DIR, "PROVENANCE.md")
    text = open(path).read()
    return dict(re.findall(r"^\| (\w+) \| `[0-9a-f]{64}` \| `([0-9a-f]{64})` \|$", text, re.M))


@functools.lru_cache(maxsize=None)
def _load(name: str):
    with np.load(os.path.join(DATA_DIR, f"{name}.npz")) as z:
        rel, assets = z["relatives"], z["assets"]
    want = _checksums().get(name)
    if want is not None and array_sha256(rel) != want:
        raise ValueError(f"portfolio data {name!r} does not match its checksum in PROVENANCE.md")
    rel.setflags(write=False)
    return rel, tuple(str(a) for a in assets)


def load_relatives(name: str) -> np.ndarray:
    """Daily price relatives of data set ``name`` (one of ``DATASETS``): float64 array of shape
    (days, assets), exactly the shipped float32 values (checked against PROVENANCE.md)."""
    if name not in DATASETS:
        raise ValueError(f"unknown portfolio data set {name!r}; choose one of: {', '.join(DATASETS)}")
    return _load(name)[0].astype(np.float64)


def asset_names(name: str) -> tuple[str, ...]:
    """The column names of data set ``name``."""
    if name not in DATASETS:
        raise ValueError(f"unknown portfolio data set {name!r}; choose one of: {', '.join(DATASETS)}")
    return _load(name)[1]


def risk_matrices(relatives: np.ndarray, window: int = WINDOW) -> np.ndarray:
    """Sigma_t for rounds t = 1..days - window: the sample covariance (ddof 1) of rows
    [t - 1, t - 1 + window) (0-based), i.e. of the ``window`` days strictly before data row
    window + t - 1, round t's day.  Shape (days - window, n, n), float64.

    Rolling sums of the net returns z = r - 1 (a fixed shift, so no future row enters any
    Sigma_t, not even through rounding)."""
    r = np.asarray(relatives, np.float64)
    days, n = r.shape
    if not (isinstance(window, (int, np.integer)) and 2 <= window < days):
        raise ValueError(f"window must be an integer in [2, {days - 1}] (days - 1); got {window!r}")
    z = r - 1.0
    c1 = np.concatenate([np.zeros((1, n)), np.cumsum(z, axis=0)])
    c2 = np.concatenate([np.zeros((1, n, n)), np.cumsum(z[:, :, None] * z[:, None, :], axis=0)])
    j = np.arange(window, days)  # 0-based data row of round t = j - window + 1
    s1 = c1[j] - c1[j - window]
    s2 = c2[j] - c2[j - window]
    cov = (s2 - s1[:, :, None] * s1[:, None, :] / window) / (window - 1)
    return 0.5 * (cov + np.swapaxes(cov, 1, 2))


def risk_budget(sigmas: np.ndarray, risk: float = 1.0) -> float:
    """rho = risk * max_t u^T Sigma_t u with u the uniform portfolio."""
    if not np.isfinite(risk) or risk <= 0:
        raise ValueError(f"risk must lie in (0, inf); got {risk!r}")
    n = sigmas.shape[-1]
    return float(risk * np.max(np.sum(sigmas, axis=(1, 2))) / (n * n))


def portfolio_problem(relatives: np.ndarray, *, window: int = WINDOW, risk: float = 1.0,
                      horizon: int | None = None, assets: int | None = None):
    """(Problem, info): the risk-constrained portfolio problem on a relatives array.

    Rounds are data rows window .. days - 1 (0-based); ``horizon`` keeps the first T rounds
    (default: all), ``assets`` the first n columns.  ``info`` holds rho, the window, the
    unscaled Sigma_t and the round-t relatives as float64 (for the comparator and wealth).
    """
    from jaxbco import constraints as C
    from jaxbco import losses as L
    from jaxbco import sequences as Seq
    from jaxbco import sets
    from jaxbco.problem import Problem

    r = np.asarray(relatives, np.float64)
    if r.ndim != 2 or r.shape[1] < 2:
        raise ValueError(f"relatives must have shape (days, assets >= 2); got {r.shape}")
    if not np.all(np.isfinite(r)) or np.any(r <= 0):
        raise ValueError("relatives must be finite and positive")
    if assets is not None:
        if not (isinstance(assets, (int, np.integer)) and 2 <= assets <= r.shape[1]):
            raise ValueError(f"assets (the dimension d) must be an integer in [2, {r.shape[1]}]; "
                             f"got {assets!r}")
        r = r[:, :assets]
    sig = risk_matrices(r, window)
    rounds = sig.shape[0]
    if horizon is not None:
        if not (isinstance(horizon, (int, np.integer)) and 1 <= horizon <= rounds):
            raise ValueError(f"horizon T must be an integer in [1, {rounds}] (days - window); "
                             f"got {horizon!r}")
        sig = sig[:horizon]
    rho = risk_budget(sig, risk)
    rel_t = r[window:window + sig.shape[0]]
    n, T = r.shape[1], sig.shape[0]
    problem = Problem(
        domain=sets.Simplex(n),
        loss=L.LogWealth(),
        loss_data=Seq.Replay(jnp.asarray(rel_t)),
        constraint=C.Ellipsoid(),
        constraint_data=Seq.Replay((jnp.asarray(sig / rho), jnp.zeros((T, n)), jnp.ones(T))),
    )
    info = dict(rho=rho, window=window, risk=risk, sigmas=sig, relatives=rel_t)
    return problem, info


def problem_arrays(problem, horizon: int | None = None):
    """(R (T, n), Q (T, n, n)) float64 from a portfolio Problem: relatives and the scaled risk
    matrices of g_t(x) = x^T Q_t x - 1 (Ellipsoid data (P, 0, s) gives Q = P / s)."""
    from jaxbco import constraints as C
    from jaxbco import losses as L
    from jaxbco import sequences as Seq

    if not (isinstance(problem.loss, L.LogWealth) and isinstance(problem.loss_data, Seq.Replay)):
        raise NotImplementedError("the portfolio comparator needs a LogWealth loss with replayed "
                                  "relatives")
    R = np.asarray(problem.loss_data.values, np.float64)
    T = R.shape[0] if horizon is None else horizon
    data = problem.constraint_data
    if not (isinstance(problem.constraint, C.Ellipsoid) and isinstance(data, (Seq.Replay, Seq.Fixed))):
        raise NotImplementedError("the portfolio comparator needs an Ellipsoid risk constraint "
                                  "with replayed or fixed data (P_t, 0, s_t)")
    if isinstance(data, Seq.Replay):
        P, q, s = (np.asarray(v, np.float64) for v in data.values)
    else:
        P, q, s = (np.asarray(v, np.float64)[None] for v in data.value)
    if np.any(q != 0) or np.any(s <= 0):
        raise NotImplementedError("the portfolio comparator needs centres q = 0 and budgets s > 0")
    Q = P / np.reshape(s, (-1, 1, 1))
    if isinstance(data, Seq.Replay):
        Q = Q[:T]
    return R[:T], Q


# ---------------------------------------------------------------------------------------------
# Offline comparator: log-barrier interior-point method (float64 NumPy).

def _barrier_terms(x, s, R, Q, t, phase1):
    """Value, gradient, Hessian of t * objective + barrier, in z = x (phase II) or (x, s)."""
    n = x.size
    nz = n + 1 if phase1 else n
    g = np.zeros(nz)
    H = np.zeros((nz, nz))
    if phase1:
        val = t * s
        g[n] += t
    else:
        rx = R @ x
        w = 1.0 / rx
        val = -t * np.sum(np.log(rx))
        g[:n] -= t * (R.T @ w)
        # einsum, not BLAS: a threaded OpenBLAS gemm on a busy 2-core machine is 100x slower
        B = R * w[:, None]
        H[:n, :n] += t * np.einsum("ti,tj->ij", B, B)
    val -= np.sum(np.log(x))
    g[:n] -= 1.0 / x
    H[:n, :n] += np.diag(1.0 / (x * x))
    if Q is not None:
        P = Q @ x
        c = s - P @ x
        ic = 1.0 / c
        val -= np.sum(np.log(c))
        g[:n] += 2.0 * (P.T @ ic)
        H[:n, :n] += 2.0 * np.tensordot(ic, Q, axes=1) + 4.0 * ((P.T * (ic * ic)) @ P)
        if phase1:
            g[n] -= np.sum(ic)
            H[n, n] += np.sum(ic * ic)
            H[:n, n] = H[n, :n] = -2.0 * (P.T @ (ic * ic))
    return val, g, H


def _feasible(x, s, R, Q, phase1):
    if np.any(x <= 0):
        return False
    if not phase1 and np.any(R @ x <= 0):
        return False
    if Q is not None and np.any(_quad(Q, x) >= s):
        return False
    return True


def _quad(Q, x):
    """x^T Q_k x for every k."""
    return (Q @ x) @ x


def _newton_barrier(x, s, R, Q, phase1, *, rtol, atol, max_steps, stop_below=None):
    """Barrier path following; returns (x, s, steps, gap bound m / t)."""
    n = x.size
    m = n + (0 if Q is None else Q.shape[0])
    a = np.concatenate([np.ones(n), [0.0]]) if phase1 else np.ones(n)
    t, steps = 1.0, 0
    val = _barrier_terms(x, s, R, Q, t, phase1)[0]
    while True:
        for _ in range(200):  # centering: Newton with backtracking on a self-concordant barrier
            val, g, H = _barrier_terms(x, s, R, Q, t, phase1)
            dm = 1.0 / np.sqrt(np.maximum(np.diag(H), 1e-300))
            K = np.zeros((H.shape[0] + 1,) * 2)
            K[:-1, :-1] = H * dm[:, None] * dm[None, :]
            K[:-1, -1] = K[-1, :-1] = a * dm
            sol = np.linalg.solve(K, np.concatenate([-g * dm, [0.0]]))
            dz = sol[:-1] * dm
            lam2 = max(float(-g @ dz), 0.0)
            lam = np.sqrt(lam2)
            # Full step inside the quadratic region (lam < 1/4); else backtrack from 1 with an
            # Armijo test, never below the damped step 1/(1 + lam), which self-concordance
            # guarantees feasible and decreasing.
            damped = 1.0 if lam < 0.25 else 1.0 / (1.0 + lam)
            step = 1.0
            while step > damped:
                xn = x + step * dz[:n]
                sn = s + step * dz[n] if phase1 else s
                if (_feasible(xn, sn, R, Q, phase1)
                        and _barrier_terms(xn, sn, R, Q, t, phase1)[0] <= val - 0.25 * step * lam2):
                    break
                step *= 0.5
            step = max(step, damped)
            while step > 1e-12:  # round-off guard only
                xn = x + step * dz[:n]
                sn = s + step * dz[n] if phase1 else s
                if _feasible(xn, sn, R, Q, phase1):
                    x, s = xn, sn
                    break
                step *= 0.5
            steps += 1
            if stop_below is not None and s < stop_below:
                return x, s, steps, m / t
            if lam2 <= 1e-12 or steps >= max_steps:
                break
        if phase1:
            obj = s
        else:
            obj = -np.sum(np.log(R @ x))
        if m / t <= max(atol, rtol * abs(obj)) or steps >= max_steps:
            return x, s, steps, m / t
        t *= 20.0


def best_crp(relatives, Q=None, *, x0=None, rtol: float = 1e-9, atol: float = 1e-12,
             max_steps: int = 2000, batch: int = 32):
    """The best constant-rebalanced portfolio in hindsight under the risk constraints:

        x* = argmin_{x in simplex} -sum_t log <r_t, x>   s.t.  x^T Q_k x <= 1  for every k

    (``Q=None``: no risk constraint, Cover's best CRP).  Few of the k constraints are active,
    so the barrier runs on a working set W (cutting planes): solve with the constraints in W,
    add the (up to ``batch``) most violated of the others, repeat until none is violated.  Each
    restricted problem is a relaxation, so its solution, once feasible for every k, is optimal
    for the full problem to within the barrier's gap m / t (m = n + |W|).

    Returns (x*, info) with info = {objective, max_g (max_k x*^T Q_k x* - 1 <= 0), gap,
    newton_steps, working_set (|W|), minmax (the best max_k x^T Q_k x that phase I reached,
    when it ran)}.  ValueError when no portfolio has max_k x^T Q_k x below 0.999.
    """
    R = np.asarray(relatives, np.float64)
    if R.ndim != 2 or np.any(R <= 0) or not np.all(np.isfinite(R)):
        raise ValueError("relatives must be a finite, positive (days, assets) array")
    n = R.shape[1]
    if Q is not None:
        Q = np.asarray(Q, np.float64)
        if Q.ndim != 3 or Q.shape[1:] != (n, n):
            raise ValueError(f"Q must have shape (k, {n}, {n}); got {Q.shape}")
        if Q.shape[0] == 0:
            Q = None
    x_start = np.full(n, 1.0 / n) if x0 is None else np.asarray(x0, np.float64)
    opts = dict(rtol=rtol, atol=atol, max_steps=max_steps)
    info = {"minmax": None, "newton_steps": 0, "working_set": 0}
    if Q is None:
        x, _, steps, gap = _newton_barrier(x_start, 1.0, R, None, False, **opts)
        info.update(newton_steps=steps, gap=gap, objective=float(-np.sum(np.log(R @ x))),
                    max_g=float("-inf"))
        return x, info

    def grow(W, q, limit):
        outside = np.setdiff1d(np.nonzero(q >= limit)[0], W)
        new = outside[np.argsort(-q[outside])[:batch]]
        return np.union1d(W, new), new.size

    q = _quad(Q, x_start)
    W = np.argsort(-q)[:batch]
    if np.max(q) >= 1.0 - 1e-9:  # phase I: min s s.t. x^T Q_k x <= s, until s < 0.999
        s0 = 1.01 * float(np.max(q)) + 1e-3
        while True:
            x, s, steps, _ = _newton_barrier(x_start, s0, R, Q[W], True, rtol=1e-12, atol=1e-14,
                                             max_steps=max_steps, stop_below=1.0 - 1e-3)
            info["newton_steps"] += steps
            qa = _quad(Q, x)
            info["minmax"] = float(np.max(qa))
            if np.max(qa) < 1.0 - 1e-6:
                x_start = x
                break
            if s >= 1.0 - 1e-3:
                raise ValueError(f"the risk constraints are (nearly) infeasible: no portfolio has "
                                 f"max_t x^T Q_t x below {s:.6g} (raise the budget)")
            W, added = grow(W, qa, 1.0 - 1e-6)
        W = np.union1d(np.argsort(-_quad(Q, x_start))[:batch], W)
    while True:
        x, _, steps, gap = _newton_barrier(x_start, 1.0, R, Q[W], False, **opts)
        info["newton_steps"] += steps
        qa = _quad(Q, x)
        W, added = grow(W, qa, 1.0)
        if added == 0:
            break
    info.update(gap=gap, objective=float(-np.sum(np.log(R @ x))), working_set=int(W.size),
                max_g=float(np.max(qa) - 1.0))
    return x, info


_BEST_CRP_CACHE: dict = {}


def cached_best_crp(R, Q) -> np.ndarray:
    """x* of ``best_crp(R, Q)``, memoised on the arrays' bytes (the engine asks for it at every
    ``sweep``/``make_run`` of a portfolio problem)."""
    key = (array_sha256(np.asarray(R, np.float64)), array_sha256(np.asarray(Q, np.float64)))
    if key not in _BEST_CRP_CACHE:
        _BEST_CRP_CACHE[key] = best_crp(R, Q)[0]
    return _BEST_CRP_CACHE[key]


def comparator(problem, horizon: int | None = None):
    """x* and its info for a portfolio Problem over its first ``horizon`` rounds."""
    R, Q = problem_arrays(problem, horizon)
    return best_crp(R, Q)


def regret_offset(problem, rounds, x_ref, x_star) -> np.ndarray:
    """sum_{s<=t} f_s(x_ref) - f_s(x*) at the checkpoint ``rounds``: adding it to the engine's
    regret against x_ref (``comparator=False`` measures against x_1) gives regret against x*."""
    R, _ = problem_arrays(problem, int(np.max(rounds)))
    d = np.log(R @ np.asarray(x_star, np.float64)) - np.log(R @ np.asarray(x_ref, np.float64))
    return np.cumsum(d)[np.asarray(rounds) - 1]


def wealth_baselines(problem, horizon: int, x_star=None) -> dict:
    """Final wealth prod_t <r_t, x> of reference strategies over the first T rounds:
    uniform CRP, uniform buy-and-hold, the best single asset, Cover's best CRP (unconstrained)
    and, when given, the constrained best CRP x*."""
    R, _ = problem_arrays(problem, horizon)
    n = R.shape[1]
    u = np.full(n, 1.0 / n)
    out = {
        "uniform CRP": float(np.exp(np.sum(np.log(R @ u)))),
        "uniform buy-and-hold": float(np.mean(np.prod(R, axis=0))),
        "best single asset": float(np.max(np.prod(R, axis=0))),
    }
    x_free, _ = best_crp(R)
    out["best CRP (no risk constraint)"] = float(np.exp(np.sum(np.log(R @ x_free))))
    if x_star is not None:
        out["best constraint-satisfying CRP (x*)"] = float(np.exp(np.sum(np.log(R @ x_star))))
    return out


def build(name: str = "nyse_o", dim: int | None = None, horizon: int | None = None):
    """Registry builder: (Problem, strongly_convex=False) on data set ``name``."""
    problem, _ = portfolio_problem(load_relatives(name), horizon=horizon, assets=dim)
    return problem, False
