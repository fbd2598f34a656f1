"""A checked face for the interior point (``_ipm``) on a box or simplex: semismooth Newton on
the KKT system, from the face of the last round's answer, kept where its KKT conditions hold.

Divided by alpha, Eq. (5) with a quadratic g on S (a box [lo, hi], or a simplex {x >= lo,
sum x = total}) has, on the face where the bounds A hold with equality and the rest F is free,

    x - y + mu grad g(x) + nu 1 = 0  on F,        x_A = the bound,
    g(x) = 0 (g binds, 0 <= mu <= b)   or   mu = b (the penalty saturates, g(x) >= 0),
    sum x = total (a simplex; nu = 0 on a box),

with the bounds' multipliers w_A = (x - y + mu grad g + nu 1)_A >= 0 at a lower bound and
v_A = -(...)_A >= 0 at an upper one.  Start: x0 (the run's x_t, the last round's answer) on its
face (the coordinates within sqrt(eps) of a bound), mu and nu by least squares on the free
stationarity rows, the mode by mu < b.  Each step takes the face and mode its iterate gives
(a coordinate is held at a bound where its multiplier, less its distance past the bound, is
positive: the semismooth Newton method of the complementarity conditions) and one Newton step
on (x_F, mu, nu) there (the Jacobian's free block I + 2 mu P by one Cholesky per lane, a 2 x 2
system for (dmu, dnu): the system ``_ipm_tangent`` differentiates).  A lane stops once every
KKT condition holds to round-off (the interior point's thresholds); the problem is strictly
convex, so such a point is its minimiser.  The lanes that do not get there in ``steps`` go on
to the interior point.

Layout: lanes minor, x (d, K), so that every operation is element-wise across the lanes and a
lane's answer does not depend on the lanes beside it (sums over coordinates in a fixed order,
``_sum``).  The factorisation and the substitutions are written out entry by entry (a few
hundred vector operations over a chunk's lanes, ~3x cheaper than LAPACK's per-lane calls at
d = 10), so the face serves d <= ``UNROLLED`` only: the code grows like d^3, and with LAPACK
a face step costs about what an interior-point step does.

Example:
    >>> import jax.numpy as jnp
    >>> from jaxbco.solvers import _ipm_face
    >>> from jaxbco.solvers._ipm_data import Data
    >>> box = 2.0 * jnp.ones(2)   # P = I, q = 0, s = 1: g(x) = |x|^2 - 1 on [-2, 2]^2
    >>> d = Data(jnp.eye(2), jnp.zeros((1, 2)), jnp.ones(1), jnp.array([[1.2, 0.0]]),
    ...          jnp.ones(1) * 10.0, -box, box, None)
    >>> st, ok = _ipm_face.solve(d, jnp.array([[0.9, 0.0]]), 8)   # onto the unit circle
    >>> bool(ok[0]), [round(float(v), 4) for v in st.x[0]], round(float(st.mu[0]), 4)
    (True, [1.0, 0.0], 0.1)
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxbco.solvers._ipm_data import Data, State

#: the largest d whose factorisation is written out entry by entry
UNROLLED = 10


class _Face(NamedTuple):
    """One chunk's data, lanes minor: P (d, d, K or 1), q, y, lo, hi (d, K or 1; hi None on a
    simplex), s, b (K or 1), total () or None."""

    P: jax.Array
    q: jax.Array
    s: jax.Array
    y: jax.Array
    b: jax.Array
    lo: jax.Array
    hi: jax.Array | None
    total: jax.Array | None


def _sum(a, axis: int = 0):
    """The sum over ``axis`` by halving it (each half added element-wise): an order fixed by
    this code, so a lane's sums do not depend on how many lanes run beside it (XLA's own
    reductions over a coordinate axis vectorise differently with the lane count)."""
    while a.shape[axis] > 1:
        n = a.shape[axis]
        h = n // 2
        part = lambda lo, hi: jax.lax.slice_in_dim(a, lo, hi, axis=axis)
        s = part(0, h) + part(h, 2 * h)
        if n % 2:
            s = jnp.concatenate([part(2 * h, n), s], axis=axis)
        a = s
    return jnp.squeeze(a, axis)


def applies(data: Data) -> bool:
    """Whether the face applies: a quadratic g (no ``curv``) on a box or simplex, d <=
    ``UNROLLED`` (the module docstring says why no larger d)."""
    return data.curv is None and data.lo is not None and data.y.shape[-1] <= UNROLLED


def _minor(data: Data) -> _Face:
    lanes = lambda a, n: jnp.moveaxis(a, 0, -1) if a.ndim == n + 1 else a[..., None]
    return _Face(
        lanes(data.P, 2),
        lanes(data.q, 1),
        jnp.reshape(data.s, (-1,)),
        data.y.T,
        data.b,
        lanes(data.lo, 1),
        None if data.hi is None else lanes(data.hi, 1),
        data.total,
    )


def _g_and_grad(f: _Face, x):
    """g(x) (K,) and grad g = 2 P (x - q) (d, K), by element-wise products and a sum."""
    r = x - f.q
    Pr = _sum(f.P * r[None, :, :], axis=1)
    return _sum(r * Pr) - f.s, 2.0 * Pr


def _residuals(f: _Face, x, mu, nu, binding):
    """(stationarity (d, K) on every coordinate, g(x), grad g, the mode's row, the sum row)."""
    g, grad = _g_and_grad(f, x)
    station = x - f.y + mu * grad + (0.0 if f.total is None else nu)
    r_g = jnp.where(binding, g, mu - f.b)
    r_e = jnp.zeros_like(g) if f.total is None else _sum(x) - f.total
    return station, g, grad, r_g, r_e


def _thresholds(f: _Face, x):
    """Round-off scales per lane: of x's rows (the interior point's ``scale``) and of g."""
    eps = jnp.finfo(x.dtype).eps
    scale = 1.0 + jnp.max(jnp.abs(f.y), axis=0) + jnp.max(jnp.abs(f.lo), axis=0)
    r = x - f.q
    frob = jnp.sqrt(_sum(_sum(f.P * f.P)))
    return 32 * eps * scale, 32 * eps * (1.0 + jnp.abs(f.s) + frob * _sum(r * r))


def _factor_solve(M, rhs):
    """M^{-1} v for each v in ``rhs`` (a tuple of (d, K)), M (d, d, K) symmetric positive
    definite: the Cholesky factorisation and both substitutions written out entry by entry."""
    d = M.shape[0]
    L = [[None] * d for _ in range(d)]
    inv = [None] * d
    for j in range(d):
        for i in range(j, d):
            s = M[i, j]
            for k in range(j):
                s = s - L[i][k] * L[j][k]
            if i == j:
                L[j][j] = jnp.sqrt(s)
                inv[j] = 1.0 / L[j][j]
            else:
                L[i][j] = s * inv[j]
    v = jnp.stack(rhs, axis=1)  # (d, r, K): every right-hand side in one substitution
    z = [None] * d
    for i in range(d):
        s = v[i]
        for k in range(i):
            s = s - L[i][k] * z[k]
        z[i] = s * inv[i]
    x = [None] * d
    for i in reversed(range(d)):
        s = z[i]
        for k in range(i + 1, d):
            s = s - L[k][i] * x[k]
        x[i] = s * inv[i]
    x = jnp.stack(x)
    return tuple(x[:, j] for j in range(len(rhs)))


def _guess(f: _Face, x0):
    """x0 on its face (the coordinates within sqrt(eps) of a bound held there), mu and nu by
    least squares on the free stationarity rows, the mode: (x, mu, nu, at_lo, at_hi, binding)."""
    eps = jnp.finfo(x0.dtype).eps
    tol = jnp.sqrt(eps) * (1.0 + jnp.abs(f.lo))
    at_lo = x0 - f.lo <= tol
    at_hi = jnp.zeros_like(at_lo) if f.hi is None else ~at_lo & (f.hi - x0 <= tol)
    x = jnp.maximum(jnp.where(at_lo, f.lo, x0), f.lo)
    if f.hi is not None:
        x = jnp.minimum(jnp.where(at_hi, f.hi, x), f.hi)
    free = (~(at_lo | at_hi)).astype(x.dtype)
    _, grad = _g_and_grad(f, x)
    r0, gf = free * (x - f.y), free * grad
    dot = lambda a, c: _sum(a * c)
    if f.total is None:  # min |r0 + mu grad_F|
        mu = -dot(gf, r0) / jnp.maximum(dot(gf, gf), jnp.finfo(x.dtype).tiny)
        nu = jnp.zeros_like(mu)
    else:  # min |r0 + mu grad_F + nu 1_F|: the 2 x 2 normal equations
        a, c, n = dot(gf, gf), _sum(gf), _sum(free)
        p, q = -dot(gf, r0), -_sum(r0)
        det = a * n - c * c
        ok = det > 1e-6 * jnp.maximum(a * n, jnp.finfo(x.dtype).tiny)
        mu = jnp.where(ok, (p * n - c * q) / jnp.where(ok, det, 1.0), 0.0)
        nu = jnp.where(ok, (a * q - c * p) / jnp.where(ok, det, 1.0), q / jnp.maximum(n, 1.0))
    binding = mu < f.b
    return x, jnp.clip(mu, 0.0, f.b), nu, at_lo, at_hi, binding


def _face(f: _Face, x, station):
    """The semismooth rule: a coordinate is held at its lower bound where
    station + (lo - x) > 0, at its upper bound where -station + (x - hi) > 0."""
    at_lo = station + (f.lo - x) > 0
    if f.hi is None:
        return at_lo, jnp.zeros_like(at_lo)
    return at_lo, ~at_lo & (-station + (x - f.hi) > 0)


def _newton_step(f: _Face, x, mu, nu, free, binding):
    """One Newton step on the face's KKT system (module docstring); ``free`` (d, K) 0/1."""
    station, _, grad, r_g, r_e = _residuals(f, x, mu, nu, binding)
    d = x.shape[0]
    eye = jnp.eye(d, dtype=x.dtype)[:, :, None]
    M = free[:, None] * (eye + 2.0 * mu * f.P) * free[None, :] + eye * (1.0 - free)[:, None]
    rhs = (-free * station, free * grad) + (() if f.total is None else (free,))
    z = _factor_solve(M, rhs)
    dot = lambda a, c: _sum(a * c)
    # rows [a11 a12; a21 a22] [dmu; dnu] = [r1; r2]
    a11 = jnp.where(binding, dot(grad, z[1]), 1.0)
    r1 = jnp.where(binding, dot(grad, z[0]) + r_g, -r_g)
    if f.total is None:
        dmu = r1 / jnp.where(a11 == 0, 1.0, a11)
        return x + free * (z[0] - dmu * z[1]), mu + dmu, nu
    a12 = jnp.where(binding, dot(grad, z[2]), 0.0)
    a21, a22, r2 = _sum(z[1]), _sum(z[2]), _sum(z[0]) + r_e
    det = a11 * a22 - a12 * a21
    det = jnp.where(det == 0, 1.0, det)
    dmu = (r1 * a22 - a12 * r2) / det
    dnu = (a11 * r2 - a21 * r1) / det
    return x + free * (z[0] - dmu * z[1] - dnu * z[2]), mu + dmu, nu + dnu


def _kkt(f: _Face, x, mu, nu, at_lo, at_hi, binding):
    """Whether (x, mu, nu) on the face (at_lo, at_hi) in its mode meets every KKT condition of
    Eq. (5) to round-off, (K,): the residuals within the interior point's thresholds, and,
    as its duality-gap test, g's complementarity (b [g]_+ where g binds, mu [-g]_+) within
    256 eps of the objective (1/2)|x - y|^2 + b [g]_+ (floored at an ulp of |y|^2)."""
    free = ~(at_lo | at_hi)
    station, g, _, r_g, r_e = _residuals(f, x, mu, nu, binding)
    tol_x, tol_g = _thresholds(f, x)
    m = jnp.max(jnp.where(free, jnp.abs(station), 0.0), axis=0) / tol_x
    m = jnp.maximum(m, jnp.abs(r_e) / tol_x)
    m = jnp.maximum(m, jnp.abs(r_g) / jnp.where(binding, tol_g, tol_x))
    eps = jnp.finfo(x.dtype).eps
    penalty = f.b * jnp.maximum(g, 0.0)
    objective = 0.5 * _sum((x - f.y) ** 2) + penalty
    floor = eps * (1.0 + _sum(f.y * f.y))
    slack = jnp.where(binding, penalty, 0.0) + mu * jnp.maximum(-g, 0.0)
    m = jnp.maximum(m, slack / (256 * eps * jnp.maximum(objective, floor)))
    hi = jnp.inf if f.hi is None else f.hi
    inside = jnp.all(jnp.where(free, (x >= f.lo - tol_x) & (x <= hi + tol_x), True), axis=0)
    signs = jnp.where(at_lo, station, jnp.where(at_hi, -station, 0.0))
    ok = (m <= 1.0) & inside & jnp.all(signs >= -tol_x, axis=0)
    return ok & jnp.where(binding, (mu >= 0.0) & (mu <= f.b), g >= -tol_g)


def solve(data: Data, x0, steps: int, live=None):
    """(state, ok): at most ``steps`` semismooth Newton steps from the face of ``x0`` (K, d)
    (module docstring); ``ok`` (K,) where the answer meets every KKT condition of Eq. (5) to
    round-off (``_kkt``), and there ``state`` an interior-point ``State`` (lanes major) that
    ``_ipm_tangent`` reads as the same face.  Only the lanes where ``live`` (K,) holds step,
    when it is given."""
    f = _minor(data)
    x, mu, nu, at_lo, at_hi, binding = _guess(f, x0.T)
    ok = _kkt(f, x, mu, nu, at_lo, at_hi, binding)
    done = ok if live is None else ok | ~live

    def body(c):
        k, x, mu, nu, at_lo, at_hi, binding, ok, done = c
        station, g, _, _, _ = _residuals(f, x, mu, nu, binding)
        n_lo, n_hi = _face(f, x, station)
        n_bind = jnp.where(binding, mu < f.b, g < 0.0)
        n_x = jnp.where(n_lo, f.lo, x)
        if f.hi is not None:
            n_x = jnp.where(n_hi, f.hi, n_x)
        free = (~(n_lo | n_hi)).astype(x.dtype)
        n_x, n_mu, n_nu = _newton_step(f, n_x, jnp.where(n_bind, mu, f.b), nu, free, n_bind)
        n_ok = _kkt(f, n_x, n_mu, n_nu, n_lo, n_hi, n_bind)
        new = (n_x, n_mu, n_nu, n_lo, n_hi, n_bind, n_ok, n_ok)
        old = (x, mu, nu, at_lo, at_hi, binding, ok, done)
        return (k + 1, *(jnp.where(done, o, n) for n, o in zip(new, old)))

    cond = lambda c: (c[0] < steps) & ~jnp.all(c[-1])
    init = (0, x, mu, nu, at_lo, at_hi, binding, ok, done)
    _, x, mu, nu, at_lo, at_hi, binding, ok, _ = jax.lax.while_loop(cond, body, init)
    station, g, _, _, _ = _residuals(f, x, mu, nu, binding)
    x = jnp.maximum(x, f.lo)
    if f.hi is not None:
        x = jnp.minimum(x, f.hi)
    tiny = jnp.finfo(x.dtype).tiny
    zeros = jnp.zeros_like(x.T)
    state = State(
        x=x.T,
        t=jnp.where(binding, 0.0, jnp.maximum(g, 0.0)),
        sg=jnp.zeros_like(mu),
        mu=mu,
        zeta=jnp.maximum(f.b - mu, 0.0),
        w=jnp.where(at_lo, jnp.maximum(station, tiny), 0.0).T,
        v=jnp.where(at_hi, jnp.maximum(-station, tiny), 0.0).T,
        nu=nu if f.total is not None else jnp.zeros_like(mu),
        sh=jnp.ones_like(mu),
        om=jnp.zeros_like(mu),
        u=zeros,
        vl=zeros,
    )
    return state, ok
