"""The best constant-rebalanced portfolio in hindsight under risk constraints (``best_crp``):

    x* = argmin_{x in simplex} sum_t -log <r_t, x>   s.t.  x^T Q_k x <= 1  for every k,

by a log-barrier interior-point method in float64 NumPy (damped Newton on self-concordant
barriers, equality sum x = 1 in the KKT system; Boyd & Vandenberghe 2004, ch. 11), with a
phase I on (x, s) that minimises s subject to x^T Q_k x <= s when the start is not strictly
feasible.  Its iterates are strictly feasible and its objective is within m / t_final of the
optimum (m = n + |W| barrier terms, W the working set of constraints).
"""

from __future__ import annotations

import numpy as np

from jaxbco.data.prices import array_sha256


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
        # einsum, not BLAS: a threaded OpenBLAS gemm is far slower on a machine whose cores are busy
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
                if (
                    _feasible(xn, sn, R, Q, phase1)
                    and _barrier_terms(xn, sn, R, Q, t, phase1)[0] <= val - 0.25 * step * lam2
                ):
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


def best_crp(
    relatives,
    Q=None,
    *,
    x0=None,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    max_steps: int = 2000,
    batch: int = 32,
):
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
        info.update(
            newton_steps=steps,
            gap=gap,
            objective=float(-np.sum(np.log(R @ x))),
            max_g=float("-inf"),
        )
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
            x, s, steps, _ = _newton_barrier(
                x_start,
                s0,
                R,
                Q[W],
                True,
                rtol=1e-12,
                atol=1e-14,
                max_steps=max_steps,
                stop_below=1.0 - 1e-3,
            )
            info["newton_steps"] += steps
            qa = _quad(Q, x)
            info["minmax"] = float(np.max(qa))
            if np.max(qa) < 1.0 - 1e-6:
                x_start = x
                break
            if s >= 1.0 - 1e-3:
                raise ValueError(
                    f"the risk constraints are (nearly) infeasible: no portfolio has "
                    f"max_t x^T Q_t x below {s:.6g} (raise the budget)"
                )
            W, added = grow(W, qa, 1.0 - 1e-6)
        W = np.union1d(np.argsort(-_quad(Q, x_start))[:batch], W)
    while True:
        x, _, steps, gap = _newton_barrier(x_start, 1.0, R, Q[W], False, **opts)
        info["newton_steps"] += steps
        qa = _quad(Q, x)
        W, added = grow(W, qa, 1.0)
        if added == 0:
            break
    info.update(
        gap=gap,
        objective=float(-np.sum(np.log(R @ x))),
        working_set=int(W.size),
        max_g=float(np.max(qa) - 1.0),
    )
    return x, info


_BEST_CRP_CACHE: dict = {}


def cached_best_crp(R, Q) -> np.ndarray:
    """x* of ``best_crp(R, Q)``, memoised on the arrays' bytes (the engine asks for it at every
    ``sweep``/``make_run`` of a portfolio problem)."""
    key = (array_sha256(np.asarray(R, np.float64)), array_sha256(np.asarray(Q, np.float64)))
    if key not in _BEST_CRP_CACHE:
        _BEST_CRP_CACHE[key] = best_crp(R, Q)[0]
    return _BEST_CRP_CACHE[key]
