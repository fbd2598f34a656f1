"""Warm chains of proximal subproblems from runs of Algorithm 1, for checks against cvxpy.

A chain is Algorithm 1 run in NumPy float64 (independent of the engine: Eq. (4) with replayed
directions, line 9's lambda update, the theorem schedules of the problem's default
hyperparameters), whose every prox step (Eq. 5) is solved by jaxbco's ``Dual`` in float64, so
round t's subproblem starts where jaxbco's own answer to round t-1 left it: the warm,
increasingly ill-conditioned sequence of a real run (beta_t / alpha_t grows like t^(eps + c)).
Each round's subproblem is recorded as a ``_battery.Instance`` so that ``_battery.cvx_reference``
re-solves it and ``_battery.prox_value`` scores jaxbco's answer.

Chains (both on the probability simplex with an ``Ellipsoid`` constraint):
  * ``drift``: d = 6, f_t(x) = ||x - theta_t||^2 with theta_t near a vertex, and a dense,
    slowly rotating P_t (condition number ~1e2) whose ellipsoid cuts that vertex off, so the
    constraint binds in every round;
  * ``nyse``: the nyse-portfolio problem (d = 36, -log <r_t, x>, the risk ellipsoid of the
    real Sigma_t / rho).
Needs cvxpy (tests and benchmarks only).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks import _battery as B
from jaxbco import constraints as C
from jaxbco import sets
from jaxbco import solvers as S
from jaxbco._src import blocks


def _drift_data(T, d, rng):
    base = rng.normal(size=(d, d))
    turn = rng.normal(size=(d, d))
    turn = 0.5 * (turn - turn.T)
    eig = np.geomspace(1.0, 100.0, d)
    Ps = np.empty((T, d, d))
    for t in range(T):
        Q, _ = np.linalg.qr(base + 1e-3 * t * turn)
        Ps[t] = (Q * eig) @ Q.T
    centre = np.full(d, 1.0 / d)
    s = np.array([2.0 * centre @ P @ centre for P in Ps])  # the centre strictly inside
    vertex = np.eye(d)[0]
    thetas = vertex + 0.05 * rng.normal(size=(T, d))
    return thetas, Ps, s


def _nyse_data(T):
    from jaxbco.data import portfolio

    problem, info = portfolio.portfolio_problem(portfolio.load_relatives("nyse_o"), horizon=T)
    Q = info["sigmas"] / info["rho"]
    return info["relatives"], Q, np.ones(T)


def chain(kind: str, T: int, seed: int = 0, block: bool = False):
    """The T subproblems (``_battery.Instance``) of a run and jaxbco's answers (T, d);
    ``block``: each step solved as a seeds-minor block of one run (``QuadraticIPM``'s block
    path: the face of the last answer first, ``solvers._ipm_face``), else as one run."""
    rng = np.random.default_rng(seed)
    if kind == "drift":
        d = 6
        thetas, Ps, s = _drift_data(T, d, rng)
        loss = lambda x, th: float(np.sum((x - th) ** 2))
        c, eps = 0.5, 0.0
    elif kind == "nyse":
        thetas, Ps, s = _nyse_data(T)
        d = Ps.shape[1]
        loss = lambda x, r: -float(np.log(r @ x))
        c, eps = 0.5, 0.0
    else:
        raise ValueError(f"kind must be 'drift' or 'nyse'; got {kind!r}")
    with jax.enable_x64(True):
        domain = sets.Simplex(d, jnp.asarray(1.0, jnp.float64))
        constraint = C.Ellipsoid()
        xi = 0.05
        delta = 0.5 * xi / np.sqrt(d * (d - 1))  # inside the shrunk set's margin
        laid = blocks.expand(domain) if block else domain
        solve = jax.jit(
            lambda phi, x0, y, a, b: S.Dual().solve(
                laid, jnp.asarray(xi), constraint, phi, x0, y, a, b
            )
        )
        if block:  # one lane: vectors (d, 1), the constraint's data with a trailing unit axis
            lane = lambda a: jnp.asarray(a)[..., None]
            one_run = solve
            solve = lambda phi, x0, y, a, b: one_run(
                jax.tree_util.tree_map(lane, phi), lane(x0), lane(y), lane(a), lane(b)
            )[:, 0]
        x = np.full(d, 1.0 / d)
        lam = 0.0
        insts, answers = [], []
        for t in range(1, T + 1):
            u = rng.normal(size=d)
            u -= u.mean()
            u /= np.linalg.norm(u)
            # Eq. (4) on the simplex's hull (dimension d - 1)
            grad = (
                ((d - 1) / (2 * delta))
                * (loss(x + delta * u, thetas[t - 1]) - loss(x - delta * u, thetas[t - 1]))
                * u
            )
            alpha = float(t) ** c
            y = x - grad / alpha  # Eq. (5)
            beta = lam * float(t) ** (c + eps)
            phi = (Ps[t - 1], np.zeros(d), float(s[t - 1]))
            x_new = np.asarray(
                solve(
                    jax.tree_util.tree_map(jnp.asarray, phi),
                    jnp.asarray(x),
                    jnp.asarray(y),
                    jnp.asarray(alpha),
                    jnp.asarray(beta),
                )
            )
            g_prev = x @ Ps[t - 1] @ x - s[t - 1]
            insts.append(
                B.Instance(
                    "Simplex",
                    "Ellipsoid",
                    xi,
                    phi,
                    x.copy(),
                    y,
                    alpha,
                    beta,
                    float(t),
                    -1,
                    "chain",
                    bool(x_new @ Ps[t - 1] @ x_new >= s[t - 1] - 1e-9),
                )
            )
            answers.append(x_new)
            # Alg. 1 line 9: lambda_{t+1} = max(lambda_t + gamma_{t+1} [g_t(x_t)]_+, eta_{t+1})
            lam = max(lam + float(t + 1) ** (c + eps) * max(g_prev, 0.0), float(t + 1) ** c)
            x = x_new
    return insts, np.asarray(answers)


def gaps(insts, answers, every: int = 1):
    """Relative objective gaps (P(x) - P*) / max(|P*|, 1e-12) against cvxpy, every
    ``every``-th round; and each checked round's beta / alpha."""
    out, ratio = [], []
    for inst, x in list(zip(insts, answers))[::every]:
        d = x.shape[0]
        _, p_ref = B.cvx_reference(inst, d)
        out.append(B.rel_gap(B.prox_value(inst, x), p_ref))
        ratio.append(inst.beta / inst.alpha)
    return np.asarray(out), np.asarray(ratio)


def kkt_residual(inst, x, tol: float = 1e-9):
    """Relative KKT residual of an answer on the shrunk simplex {x >= lo, sum x = 1}, in
    NumPy float64, from the answer alone: the multipliers (mu of g, nu of the sum, w >= 0 of
    the bounds at lo) fitted by least squares to stationarity
    alpha (x - y) + mu grad g(x) + nu 1 - w = 0, mu restricted to what g(x) allows (0 where
    g < 0, beta where g > 0, [0, beta] where g = 0 up to ``tol``); returns
    max(stationarity, bound multipliers' sign) / (alpha (||x - y|| + ||x||) + mu ||grad g||)
    (||x|| in the scale: y in S makes the other terms round-off themselves)."""
    P, q, s = (np.asarray(v, np.float64) for v in inst.phi)
    x = np.asarray(x, np.float64)
    d = x.shape[0]
    lo = inst.xi / d
    r = x - q
    g, grad = r @ P @ r - s, 2.0 * P @ r
    a = inst.alpha * (x - inst.y)
    free = x - lo > tol
    scale_g = tol * (abs(float(s)) + abs(r) @ abs(P) @ abs(r))
    if g < -scale_g or inst.beta == 0:
        mu = 0.0
    elif g > scale_g:
        mu = inst.beta
    else:  # binding: least squares for (mu, nu) on the free coordinates, mu clipped
        A = np.stack([grad[free], np.ones(int(free.sum()))], axis=1)
        mu = float(np.linalg.lstsq(A, -a[free], rcond=None)[0][0])
        mu = min(max(mu, 0.0), inst.beta)
    v = a + mu * grad
    nu = -float(np.mean(v[free])) if free.any() else -float(np.min(v))
    stat = np.abs(v + nu)[free].max(initial=0.0)
    sign = max(0.0, -float(np.min(v[~free] + nu, initial=np.inf))) if (~free).any() else 0.0
    size = np.linalg.norm(a) + inst.alpha * np.linalg.norm(x) + mu * np.linalg.norm(grad)
    return max(stat, sign) / size
