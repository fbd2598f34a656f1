"""Certificate of the offline comparator x*: its distance from X and from every g_t <= 0, and
an upper bound on F(x*) - F* from weak Lagrangian duality, F = (1/T) sum_t f_t.

Cuts.  For a point p and a subgradient s of F at p, convexity gives for every y
    F(y) >= F(p) + s.(y - p) = a + s.(y - x),        a = F(p) + s.(x - p) <= F(x),
and likewise g_t(y) >= c + q.(y - x) for a subgradient q of g_t.  With weights omega in the
simplex over F's cuts and multipliers mu >= 0 over the constraints' cuts, for every feasible y
(y in X, all g_t(y) <= 0):
    F(y) >= sum_j omega_j a_j + sum_k mu_k c_k - sigma_X(-v) - v.x,    v = S^T omega + Q^T mu,
(sigma_X the support function of X), so with F* the offline optimum (Eq. 1)
    F(x) - F* <= gap := sum_j omega_j (F(x) - a_j) - sum_k mu_k c_k + sigma_X(-v) + v.x,
whatever omega and mu: the bound is rigorous, and they only decide how tight it is.  They are
chosen from the KKT conditions at x: least squares on ||P v||^2 + sum_j (omega_j (F - a_j))^2 / D^2
+ sum_k (mu_k c_k)^2 / D^2, P the projector onto X's affine hull (``hull_projector``; X's
normal cone enters as cuts: its affine ``membership_pieces`` where it has them (a box's faces,
a simplex's x_i >= 0), else its ``membership`` function taken like g's, at x alone where it is
smooth (a ball)), over
omega >= 0 with a heavy row for sum omega = 1, and mu >= 0 on the cuts near-active at x
(c_k >= -sqrt(eps) |q_k| D): non-negative least squares (``_nnls``); omega and mu are then
divided by omega's sum (the gap is homogeneous in them).

Cuts taken: F at x, and for a family that may have kinks (``smooth`` False: ``Absolute``, a
``CustomLoss``) also at x +- h e_i, h = eps^(2/3) D, so a kink at x* is seen from both sides
(a kink's side costs at most 2 h |s| in the gap); g at x for a fixed g (its rows for a
polyhedral one), every round's g_t for time-varying data with the max(``KEEP``, d + 1) most
violated kept (a vertex of X ∩ C can need d binding rows), plus the probes for a g of unknown smoothness (``CustomConstraint``).  A non-finite subgradient
(a kink where autodiff gives NaN) drops that cut.

Reported, each relative and so comparable with one tolerance (``tolerance``: float64 1e-8;
float32 sqrt(eps), its round-off allowance): ``set_violation`` |x - Pi_X(x)| / D;
``constraint_violation`` max_t [g_t(x)]_+ / (|q_t| D); ``gap`` / (|F(x)| + |s| D).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import absolute
from jaxbco._src.round_sums import mean_over_rounds
from jaxbco.draws import round_data

KEEP = 8  # time-varying constraints: the most violated rounds' cuts kept
STEER = 2  # steered rounds per coordinate where g (fixed) or X may have kinks


class CertificateWarning(UserWarning):
    """x* failed its certificate on some seeds: their regret is measured against a point that
    is not shown to be the offline optimum (``Result.x_star_ok``)."""


class Certificate(NamedTuple):
    """Relative measures of x* (one per seed): how far it lies from X and from {g_t <= 0},
    and the duality gap bounding F(x*) - F* (see the module docstring)."""

    set_violation: jax.Array
    constraint_violation: jax.Array
    gap: jax.Array


def tolerance(dtype) -> float:
    """The certificate's tolerance: 1e-8 in float64; sqrt(eps) (3.5e-4) in float32, the
    stationarity a float32 minimiser resolves (F is flat to eps within sqrt(eps) of x*, so a
    first-order gap of a float32 x* is of that size)."""
    return 1e-8 if jnp.dtype(dtype).name == "float64" else float(jnp.finfo(dtype).eps) ** 0.5


def passes(cert: Certificate, dtype):
    """Whether each measure is finite and within ``tolerance(dtype)`` (NumPy or JAX arrays)."""
    tol = tolerance(dtype)
    return (cert.set_violation <= tol) & (cert.constraint_violation <= tol) & (cert.gap <= tol)


def probes(x, h, smooth: bool):
    """The points cuts are taken at: x, and x +- h e_i unless ``smooth``: (J, d)."""
    if smooth:
        return x[None]
    eye = h * jnp.eye(x.shape[0], dtype=x.dtype)
    return jnp.concatenate([x[None], x[None] + eye, x[None] - eye])


def _cuts_at(fn, x, points):
    """Cuts (a, s) of a convex ``fn`` at ``points``, moved to x: a = fn(p) + s.(x - p)."""
    vals, grads = jax.vmap(jax.value_and_grad(fn))(points)
    return vals + jnp.sum(grads * (x[None] - points), axis=1), grads


def loss_cuts(problem, seed_key, horizon: int, x):
    """(F(x), a (J,), S (J, d)): F's cuts at x (and its probes) from a pass over the rounds."""
    h = _probe_step(problem, x.dtype)
    points = probes(x, h, problem.loss.smooth)
    value = lambda p, th: problem.loss.value(p, th)

    def per_round(theta):
        vals, grads = jax.vmap(jax.value_and_grad(value), (0, None))(points, theta)
        return vals, grads

    vals, grads = mean_over_rounds(problem, seed_key, horizon, per_round)
    return vals[0], vals + jnp.sum(grads * (x[None] - points), axis=1), grads


def _probe_step(problem, dtype):
    return jnp.finfo(dtype).eps ** (2.0 / 3.0) * problem.domain.diameter().astype(dtype)


def _round_cuts(problem, phi, x, h):
    """One round's constraint cuts at x: (c (m,), q (m, d)), and its violation scale |q|."""
    fam = problem.constraint
    if fam.kind in ("linear", "polyhedral"):
        A, b = fam.rows(phi)
        A = jnp.broadcast_to(A, (A.shape[0], x.shape[0])).astype(x.dtype)
        return A @ x - jnp.reshape(b, (-1,)).astype(x.dtype), A
    points = probes(x, h, not fam.probe_kinks)
    return _cuts_at(lambda p: fam.value(p, phi), x, points)


def constraint_cuts(problem, seed_key, horizon: int, x):
    """(violation, c (K,), q (K, d)): max_t [g_t(x)]_+ / (|q_t| D) and the constraints' cuts
    (the max(``KEEP``, d + 1) most violated rounds' for time-varying data)."""
    dtype = x.dtype
    D = problem.domain.diameter().astype(dtype)
    h = _probe_step(problem, dtype)
    data = problem.constraint_data

    def scaled(c, q):  # per cut: value / (|q| D); a non-finite cut never ranks
        norm = _norms(q)
        r = c / jnp.maximum(norm * D, jnp.finfo(dtype).tiny)
        return jnp.where(jnp.isfinite(r) & jnp.all(jnp.isfinite(q), axis=1), r, -jnp.inf)

    def violation(c, q):
        r = jnp.max(scaled(c, q))
        raw = jnp.max(jnp.where(jnp.isfinite(c), c, -jnp.inf))  # every cut non-finite: g itself
        return jnp.where(jnp.isfinite(r), jnp.maximum(r, 0.0), jnp.where(raw > 0, jnp.inf, 0.0))

    if data.constant:
        c, q = _round_cuts(problem, data.every_round(), x, h)
        return violation(c, q), c, q

    one = jnp.ones((), jnp.int32)
    c0, q0 = jax.eval_shape(
        lambda: _round_cuts(problem, round_data(problem, seed_key, one)[1], x, h)
    )
    keep = max(KEEP, x.shape[0] + 1) * c0.shape[0]

    def body(carry, t):
        worst, c_kept, q_kept = carry
        c, q = _round_cuts(problem, round_data(problem, seed_key, t)[1], x, h)
        worst = jnp.maximum(worst, violation(c, q))
        c_all, q_all = jnp.concatenate([c_kept, c]), jnp.concatenate([q_kept, q])
        rank = jnp.concatenate([scaled(c_kept, q_kept), scaled(c, q)])
        _, idx = jax.lax.top_k(rank, keep)
        return (worst, c_all[idx], q_all[idx]), None

    start = (
        jnp.zeros((), dtype),
        jnp.full((keep,), -jnp.inf, dtype),
        jnp.zeros((keep, x.shape[0]), dtype),
    )
    ts = jnp.arange(1, horizon + 1, dtype=jnp.int32)
    (worst, c, q), _ = jax.lax.scan(body, start, ts)
    return worst, c, q


def _nnls(M, b, free, allowed, eps):
    """argmin ||M z - b|| over z with z_j >= 0 where not ``free``, z_j = 0 where not
    ``allowed``: Lawson & Hanson's active-set method (1974), at most 2 n + 8 steps.  Each
    least-squares solve drops singular values below eps^0.6 of the largest (near-parallel
    cuts, probes h apart, make M nearly rank-deficient: the min-norm weights, never huge ones)."""
    n = M.shape[1]
    tiny = jnp.finfo(M.dtype).tiny

    def lsq(P):
        return jnp.where(P, jnp.linalg.lstsq(M * P[None], b, rcond=eps**0.6)[0], 0.0)

    def cond(s):
        z, P, k, done = s
        return (k < 2 * n + 8) & ~done

    def body(s):
        z, P, k, _ = s
        w = M.T @ (b - M @ z)
        cand = allowed & ~P & (w > 64 * eps * jnp.max(jnp.abs(w)) + tiny)
        done = ~jnp.any(cand)
        P = jnp.where(done, P, P.at[jnp.argmax(jnp.where(cand, w, -jnp.inf))].set(True))
        trial = lsq(P)
        # a constrained weight turned non-positive: step back to the boundary, drop it
        bad = P & ~free & (trial <= 0)
        ratio = jnp.where(bad, z / jnp.maximum(z - trial, tiny), jnp.inf)
        t = jnp.minimum(jnp.min(ratio), 1.0)
        z_new = z + t * (trial - z)
        P = P & (free | (z_new > tiny)) & ~(bad & (ratio <= t))
        return jnp.where(done, z, jnp.where(free, z_new, jnp.maximum(z_new, 0.0))), P, k + 1, done

    P0 = free
    z0 = lsq(P0)
    z, _, _, _ = jax.lax.while_loop(
        cond, body, (z0, P0, jnp.zeros((), jnp.int32), jnp.zeros((), bool))
    )
    return z


def _norms(rows):
    """Euclidean norm of each row, scaled first (a float32 g of size 1e20 squares past the
    range)."""
    m = jnp.max(jnp.abs(rows), axis=1)
    m = jnp.where(m > 0, m, 1.0)
    return m * jnp.sqrt(jnp.sum((rows / m[:, None]) ** 2, axis=1))


def _unit(c, q):
    """Cuts scaled to unit normals (a g given as 1e-20 or 1e20 times a well-scaled one has
    the same cuts; least squares would drop its columns beside F's)."""
    n = _norms(q)
    n = jnp.where(n > 0, n, 1.0)
    return c / n, q / n[:, None]


def _weights(domain, x, F, a, S, c, q):
    """(omega, mu, v, r): the cut weights chosen from the KKT conditions at x (module
    docstring), v = S^T omega + Q^T mu and its residual r = P v off X's normal cone."""
    dtype = x.dtype
    eps = jnp.finfo(dtype).eps
    D = domain.diameter().astype(dtype)
    okF = jnp.isfinite(a) & jnp.all(jnp.isfinite(S), axis=1)
    a, S = jnp.where(okF, a, F), jnp.where(okF[:, None], S, 0.0)
    okg = jnp.isfinite(c) & jnp.all(jnp.isfinite(q), axis=1)
    c, q = _unit(jnp.where(okg, c, 0.0), jnp.where(okg[:, None], q, 0.0))
    active = okg & (c >= -(eps**0.5) * D)

    # rows: P v = 0; rho (sum omega - 1) = 0 with rho = |s| (omega in the simplex after
    # omega and mu are divided by its sum below: the gap is homogeneous in them, so a short sum
    # costs nothing; a heavier rho made F's cuts near-parallel columns, their differences
    # ~2/T in float32 below lstsq's cut-off); the gap's other terms omega_j (F - a_j) / D,
    # mu_k c_k / D = 0 (so weight goes to the tightest of parallel cuts).  omega >= 0 and
    # mu >= 0 both: free weights on near-identical probe cuts would cancel in huge pairs.
    J, K = S.shape[0], c.shape[0]
    P = domain.hull_projector(dtype)
    rho = jnp.maximum(jnp.max(_norms(S)), jnp.finfo(dtype).tiny)
    wF, wg = (F - a) / D, c / D
    M = jnp.concatenate(
        [
            jnp.concatenate([P @ S.T, P @ q.T], axis=1),
            jnp.concatenate([rho * jnp.ones((1, J), dtype), jnp.zeros((1, K), dtype)], axis=1),
            jnp.concatenate([jnp.diag(wF), jnp.zeros((J, K), dtype)], axis=1),
            jnp.concatenate([jnp.zeros((K, J), dtype), jnp.diag(wg)], axis=1),
        ]
    )
    rhs = jnp.concatenate([jnp.zeros(S.shape[1], dtype), rho[None], jnp.zeros(J + K, dtype)])
    none = jnp.zeros(J + K, bool)
    z = _nnls(M, rhs, none, jnp.concatenate([okF, active]), eps)
    omega, mu = jnp.maximum(z[:J], 0.0), jnp.maximum(z[J:], 0.0)
    total = jnp.sum(omega)
    scale = jnp.maximum(total, jnp.finfo(dtype).tiny)
    omega = jnp.where(total > 0, omega / scale, jnp.eye(J, dtype=dtype)[0])
    mu = jnp.where(total > 0, mu / scale, mu)
    v = S.T @ omega + q.T @ mu
    return omega, mu, v, P @ v


def certify(domain, x, F, a, S, violation, c, q) -> Certificate:
    """The certificate of x (one seed) from F(x), F's cuts (a, S) and the constraints' cuts
    (c, q) with their violation (``loss_cuts``, ``constraint_cuts``)."""
    dtype = x.dtype
    D = domain.diameter().astype(dtype)
    set_violation = jnp.sqrt(jnp.sum((x - domain.project(x)) ** 2)) / D
    omega, mu, v, _ = _weights(domain, x, F, a, S, c, q)  # mu on the unit cuts
    okF = jnp.isfinite(a) & jnp.all(jnp.isfinite(S), axis=1)
    a = jnp.where(okF, a, F)
    okg = jnp.isfinite(c) & jnp.all(jnp.isfinite(q), axis=1)
    c = _unit(jnp.where(okg, c, 0.0), jnp.where(okg[:, None], q, 0.0))[0]
    gap = jnp.dot(omega, F - a) - jnp.dot(mu, c) + domain.support(-v) + jnp.dot(v, x)
    gnorm = jnp.max(jnp.where(okF, _norms(jnp.where(okF[:, None], S, 0.0)), 0.0))
    scale = jnp.maximum(jnp.abs(F) + gnorm * D, jnp.finfo(dtype).tiny)
    gap = jnp.where(jnp.isfinite(F), jnp.maximum(gap, 0.0) / scale, jnp.inf)
    nan_x = ~jnp.all(jnp.isfinite(x))
    inf = jnp.asarray(jnp.inf, dtype)
    return Certificate(
        jnp.where(nan_x, inf, set_violation),
        jnp.where(nan_x, inf, violation),
        jnp.where(nan_x, inf, gap),
    )


def _set_cuts(domain, x, h):
    """X's own cuts, X's normal cone at x: its affine ``membership_pieces`` where it declares
    them, else its ``membership`` function at x, and at x +- h e_i unless it is smooth."""
    pieces = domain.membership_pieces(x)
    if pieces is not None:
        return pieces, jax.jacfwd(domain.membership_pieces)(x)
    return _cuts_at(domain.membership, x, probes(x, h, domain.smooth_membership))


def _steered_cuts(fns, corner, domain, x, F, a, S, c, q, h, rounds: int):
    """Cuts of kinked functions added where they help most, ``rounds`` times, each from the
    weights of the cuts so far (``_weights``) and the direction w = -P v / |P v| they leave
    unexplained: of ``fns`` (a fixed g, X's membership), the gradient at x + h w, their
    subgradient at x maximising <s, w> (its directional derivative's argmax), and in odd
    rounds at x + H w, H = tolerance D / 16 (an ε-subgradient: a kink within H of x); of F, where
    ``corner`` (w) -> (a, s) is given (``Absolute``), the cut whose subgradient is nearest F's
    part of v moved along w, a corner of its box subdifferential, which the probes at
    x +- h e_i do not span.  Columns of the minimum-norm problem over the subdifferentials
    (Wolfe 1975); F's and the constraints' are steered together (an L1 ball's face and the
    loss's kinks at one x* need both)."""
    dtype, k, d = x.dtype, len(fns), x.shape[0]
    nl = 0 if corner is None else 1
    c = jnp.concatenate([c, jnp.full((rounds * k,), -jnp.inf, dtype)])
    q = jnp.concatenate([q, jnp.zeros((rounds * k, d), dtype)])
    a = jnp.concatenate([a, jnp.full((rounds * nl,), jnp.nan, dtype)])
    S = jnp.concatenate([S, jnp.zeros((rounds * nl, d), dtype)])
    start, start_F = c.shape[0] - rounds * k, a.shape[0] - rounds * nl
    # odd rounds step farther: a kink ~1e-10 beside x (an LP's x* on an L1 ball's face) is
    # crossed, at a cost of 2 far |q| per unit cut, tolerance / 8 of the gap's scale
    far = jnp.maximum(h, tolerance(dtype) / 16 * domain.diameter().astype(dtype))

    def body(i, cuts):
        a, S, c, q = cuts
        omega, _, _, r = _weights(domain, x, F, a, S, c, q)
        n = jnp.sqrt(jnp.sum(r * r))
        p = x - jnp.where(i % 2 == 0, h, far) * r / jnp.where(n > 0, n, 1.0)
        for j, fn in enumerate(fns):
            ci, qi = _cuts_at(fn, x, p[None])
            c = c.at[start + k * i + j].set(jnp.where(n > 0, ci[0], -jnp.inf))
            q = q.at[start + k * i + j].set(jnp.where(n > 0, qi[0], 0.0))
        if corner is not None:
            ok = jnp.isfinite(a)[:, None] & jnp.all(jnp.isfinite(S), axis=1, keepdims=True)
            ai, si = corner(jnp.where(ok, S, 0.0).T @ omega - r)
            a = a.at[start_F + i].set(jnp.where(n > 0, ai, jnp.nan))
            S = S.at[start_F + i].set(si)
        return a, S, c, q

    return jax.lax.fori_loop(0, rounds, body, (a, S, c, q))


def certify_seed(problem, seed_key, horizon: int, x, loss_cuts_fn=None) -> Certificate:
    """``certify`` for one seed's x*, its cuts from passes over the seed's rounds (or F's from
    ``loss_cuts_fn(x)`` -> (F(x), a, S), e.g. from a streaming comparator's sums); for a fixed
    g that may have kinks, ``2 d`` more cuts steered by the residual (``_steered_cuts``)."""
    x = jax.lax.stop_gradient(x)
    F, a, S = loss_cuts(problem, seed_key, horizon, x) if loss_cuts_fn is None else loss_cuts_fn(x)
    violation, c, q = constraint_cuts(problem, seed_key, horizon, x)
    h = _probe_step(problem, x.dtype)
    cx, qx = _set_cuts(problem.domain, x, h)
    c, q = jnp.concatenate([c, cx]), jnp.concatenate([q, qx])
    fns = [problem.domain.membership] if problem.domain.steer else []
    if problem.constraint.probe_kinks and problem.constraint_data.constant:
        phi = problem.constraint_data.every_round()
        fns.append(lambda z: problem.constraint.value(z, phi))
    corner = None
    if problem.loss.l1_breakpoints and loss_cuts_fn is None and x.ndim == 1:
        corner = absolute.corner_cuts(problem, seed_key, horizon, x)
    if fns or corner is not None:
        steered = _steered_cuts(
            fns, corner, problem.domain, x, F, a, S, c, q, h, STEER * x.shape[0]
        )
        a, S, c, q = steered
    return certify(problem.domain, x, F, a, S, violation, c, q)


FIELDS = ("set_violation", "constraint_violation", "gap")


def report(cert, n_seeds: int, seed_ids, dtype, problem, method: str) -> dict:
    """``Result``'s ``x_star_certificate`` (S, 3: ``FIELDS``) and ``x_star_ok`` (S,) from a run's
    certificate (None: no comparator, every seed ok), with a ``CertificateWarning`` naming the
    seeds, the failed measures, the comparator's method and the problem's components."""
    if cert is None:
        return {
            "x_star_certificate": np.full((n_seeds, 3), np.nan),
            "x_star_ok": np.ones(n_seeds, bool),
        }
    table = np.stack([np.asarray(c, np.float64)[:n_seeds] for c in cert], axis=1)
    ok = np.asarray(passes(Certificate(*table.T), dtype))
    if not ok.all():
        bad = np.flatnonzero(~ok)
        ids = ", ".join(str(int(i)) for i in np.asarray(seed_ids)[bad[:8]]) + (
            ", ..." if bad.size > 8 else ""
        )
        worst = table[bad].max(axis=0)
        failed = ", ".join(
            f"{name.replace('_', ' ')} {w:.2e}"
            for name, w in zip(FIELDS, worst)
            if not w <= tolerance(dtype)
        )
        parts = (
            f"{type(problem.loss).__name__} loss, {type(problem.constraint).__name__} "
            f"constraint ({type(problem.constraint_data).__name__} data) on "
            f"{type(problem.domain).__name__}"
        )
        warnings.warn(
            f"x* is not certified on {bad.size} of {n_seeds} seeds (seed ids {ids}): {failed} "
            f"(tolerance {tolerance(dtype):.0e}); their regret is measured against a point not "
            f"shown to be the offline optimum.  Comparator: {method}, for the {parts}.  See "
            f"Result.x_star_ok and Result.x_star_certificate.",
            CertificateWarning,
            stacklevel=3,
        )
    return {"x_star_certificate": table, "x_star_ok": ok}
