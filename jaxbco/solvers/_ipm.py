"""Primal-dual interior point (Mehrotra) for Eq. (5) with a quadratic g on a box, simplex or ball.

Divided by alpha, Eq. (5) is, with an epigraph variable t for [g]_+ and b = beta/alpha,

    min_{x, t} (1/2)||x - y||^2 + b t   s.t.  g(x) - t <= 0 (mu),  -t <= 0 (zeta),
               lo <= x (w),  x <= hi (v, a box only),  sum x = total (nu, a simplex only),
               ||x - c||^2 <= r^2 (omega, slack s_h: a ball only, no bounds),

g(x) = (x - q)^T P (x - q) - s.  Slacks s_g = t - g(x), t, x - lo, hi - x; complementarity
products driven to zero by Mehrotra's predictor-corrector (Nocedal & Wright 2006, Alg. 16.4).
Eliminating the slacks and the bound multipliers, every Newton step is one symmetric positive
definite system per lane,

    (I + 2 mu P + D + kappa grad g grad g^T [+ 2 omega I + (omega/s_h) grad h grad h^T]) dx
        + nu-column = rhs,
    D = w / (x - lo) + v / (hi - x),   kappa = a zeta / (t theta),  a = mu / s_g,  theta = a + zeta / t,

solved by one Cholesky factorisation per lane (LAPACK; the substitutions in ``_cholesky``;
two right-hand sides on a simplex: the sum row by its Schur complement).  Layout: lanes major, x (K, d), P (d, d) shared or (K, d, d) per lane.
A lane stops (frozen) once its complementarity gap and residuals are at round-off, so its
answer does not depend on the lanes beside it.  ``tangent`` solves the same system at the
solution for the implicit derivative (``jaxbco.solvers.quadratic``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxbco.solvers import _cholesky


class Data(NamedTuple):
    """One chunk of lanes: P (d, d) or (K, d, d), q (d,) or (K, d), s () or (K,), y (K, d),
    b = beta/alpha (K,); the set: lo and hi (d,) or (K, d) (hi None: a simplex, with total ()),
    or (lo None) a ball of centre (d,) and radius () or (K,)."""

    P: jax.Array
    q: jax.Array
    s: jax.Array
    y: jax.Array
    b: jax.Array
    lo: jax.Array | None
    hi: jax.Array | None
    total: jax.Array | None
    centre: jax.Array | None = None
    radius: jax.Array | None = None


class State(NamedTuple):
    x: jax.Array      # (K, d)
    t: jax.Array      # (K,)   epigraph of [g]_+
    sg: jax.Array     # (K,)   slack of g(x) - t <= 0
    mu: jax.Array     # (K,)   multiplier of g(x) - t <= 0
    zeta: jax.Array   # (K,)   multiplier of -t <= 0
    w: jax.Array      # (K, d) multipliers of lo <= x
    v: jax.Array      # (K, d) multipliers of x <= hi (zeros on a simplex)
    nu: jax.Array     # (K,)   multiplier of sum x = total (zeros on a box)
    sh: jax.Array     # (K,)   slack of ||x - c||^2 <= r^2 (ones off a ball)
    om: jax.Array     # (K,)   its multiplier (zeros off a ball)


def apply_P(P, r):
    """P r per lane, r (K, d): a shared P as one matrix product (two columns at least: XLA's
    one-column path rounds differently, see ``jaxbco._ops.apply``)."""
    if P.ndim == 3:
        return jnp.sum(P * r[:, None, :], axis=-1)
    n = r.shape[0]
    rr = jnp.concatenate([r, r]) if n == 1 else r
    return jnp.matmul(rr, P.T)[:n]


def g_and_grad(data: Data, x):
    r = x - data.q
    Pr = apply_P(data.P, r)
    return jnp.sum(r * Pr, axis=-1) - data.s, 2.0 * Pr


def _slacks(data, st):
    ones = jnp.ones_like(st.x)
    lo_gap = (st.x - data.lo) if data.lo is not None else ones
    hi_gap = (data.hi - st.x) if data.hi is not None else ones
    return lo_gap, hi_gap


def _ball(data, x):
    """(h, grad h) of h(x) = ||x - c||^2 - r^2 (zeros off a ball)."""
    if data.centre is None:
        return jnp.zeros(x.shape[:1], x.dtype), jnp.zeros_like(x)
    r = x - data.centre
    return jnp.sum(r * r, axis=-1) - data.radius ** 2, 2.0 * r


def residuals(data: Data, st: State):
    """(r_d, r_t, r_g, r_e, r_h, grad g, grad h): stationarity in x and t, the g row, the sum
    row, the ball row."""
    g, grad = g_and_grad(data, st.x)
    h, grad_h = _ball(data, st.x)
    r_d = (st.x - data.y + st.mu[:, None] * grad - st.w + st.v + st.nu[:, None]
           + st.om[:, None] * grad_h)
    r_t = data.b - st.mu - st.zeta
    r_g = g - st.t + st.sg
    r_e = (jnp.sum(st.x, axis=-1) - data.total) if data.total is not None else jnp.zeros_like(g)
    r_h = (h + st.sh) if data.centre is not None else jnp.zeros_like(g)
    return r_d, r_t, r_g, r_e, r_h, grad, grad_h


def _factor(data, st, grad, grad_h):
    """Cholesky factor of the reduced matrix, and the scalars of the elimination."""
    lo_gap, hi_gap = _slacks(data, st)
    D = st.w / lo_gap + st.v / hi_gap + 2.0 * st.om[:, None]
    a = st.mu / st.sg
    theta = a + st.zeta / st.t
    kappa = a * (st.zeta / st.t) / theta
    d = st.x.shape[-1]
    P = data.P if data.P.ndim == 3 else data.P[None]
    M = (jnp.eye(d, dtype=st.x.dtype) * (1.0 + D)[:, :, None] + 2.0 * st.mu[:, None, None] * P
         + kappa[:, None, None] * grad[:, :, None] * grad[:, None, :])
    if data.centre is not None:
        M = M + (st.om / st.sh)[:, None, None] * grad_h[:, :, None] * grad_h[:, None, :]
    return jnp.linalg.cholesky(M), a, theta, kappa


def direction(data: Data, st: State, fac, grads, res, c_g, c_z, c_w, c_v, c_h):
    """Newton direction for the linearised KKT system (residuals ``res`` = (r_d, r_t, r_g,
    r_e, r_h)) with complementarity targets s_g dmu + mu ds_g = c_g, t dzeta + zeta dt = c_z,
    (x - lo) dw + w dx = c_w, (hi - x) dv - v dx = c_v, s_h domega + omega ds_h = c_h;
    returns (dx, dt, dsg, dmu, dzeta, dw, dv, dsh, dom, dnu)."""
    L, a, theta, kappa = fac
    grad, grad_h = grads
    r_d, r_t, r_g, r_e, r_h = res
    lo_gap, hi_gap = _slacks(data, st)
    cg = c_g + st.mu * r_g
    e = cg / st.sg + c_z / st.t - r_t
    f0 = cg / st.sg - a * e / theta
    rho = (-r_d + (c_w / lo_gap if data.lo is not None else 0.0)
           - (c_v / hi_gap if data.hi is not None else 0.0) - f0[:, None] * grad)
    if data.centre is not None:
        rho = rho - ((c_h + st.om * r_h) / st.sh)[:, None] * grad_h
    solve = lambda rhs: _cholesky.solve(L, rhs)
    z1 = solve(rho)
    if data.total is not None:
        z2 = solve(jnp.ones_like(rho))
        dnu = (jnp.sum(z1, axis=-1) + r_e) / jnp.sum(z2, axis=-1)
        dx = z1 - dnu[:, None] * z2
    else:
        dnu = jnp.zeros_like(r_t)
        dx = z1
    gdx = jnp.sum(grad * dx, axis=-1)
    dt = (e + a * gdx) / theta
    dmu = f0 + kappa * gdx
    dzeta = (c_z - st.zeta * dt) / st.t
    dsg = dt - gdx - r_g
    dw = ((c_w - st.w * dx) / lo_gap) if data.lo is not None else jnp.zeros_like(dx)
    dv = ((c_v + st.v * dx) / hi_gap) if data.hi is not None else jnp.zeros_like(dx)
    if data.centre is not None:
        hdx = jnp.sum(grad_h * dx, axis=-1)
        dsh = -hdx - r_h
        dom = (c_h + st.om * (hdx + r_h)) / st.sh
    else:
        dsh = dom = jnp.zeros_like(dt)
    return dx, dt, dsg, dmu, dzeta, dw, dv, dsh, dom, dnu


def _max_step(value, step):
    """Largest a in (0, 1] with value + a step >= 0 (per lane, over the trailing axis)."""
    ratio = jnp.where(step < 0, -value / jnp.where(step < 0, step, -1.0), jnp.inf)
    return jnp.minimum(1.0, jnp.min(ratio, axis=-1) if ratio.ndim > 1 else ratio)


def _step_length(data, st, dx, dt, dsg, dmu, dzeta, dw, dv, dsh, dom):
    lo_gap, hi_gap = _slacks(data, st)
    steps = [_max_step(st.t, dt), _max_step(st.sg, dsg), _max_step(st.mu, dmu),
             _max_step(st.zeta, dzeta)]
    if data.lo is not None:
        steps += [_max_step(lo_gap, dx), _max_step(st.w, dw)]
    if data.hi is not None:
        steps += [_max_step(hi_gap, -dx), _max_step(st.v, dv)]
    if data.centre is not None:
        steps += [_max_step(st.sh, dsh), _max_step(st.om, dom)]
    out = steps[0]
    for s in steps[1:]:
        out = jnp.minimum(out, s)
    return out


def _complementarity(data, st, n_c):
    lo_gap, hi_gap = _slacks(data, st)
    total = st.mu * st.sg + st.zeta * st.t
    if data.lo is not None:
        total = total + jnp.sum(st.w * lo_gap, axis=-1)
    if data.hi is not None:
        total = total + jnp.sum(st.v * hi_gap, axis=-1)
    if data.centre is not None:
        total = total + st.om * st.sh
    return total / n_c


def start(data: Data) -> State:
    """A strictly interior start: x the centre of the set, t = [g]_+ + 1, the multipliers of
    g and t at b/2, the others 1."""
    K, d = data.y.shape
    dtype = data.y.dtype
    if data.centre is not None:
        x = jnp.broadcast_to(data.centre, (K, d)).astype(dtype)
    elif data.hi is not None:
        x = jnp.broadcast_to(0.5 * (data.lo + data.hi), (K, d)).astype(dtype)
    else:
        x = jnp.broadcast_to(data.lo + (data.total - jnp.sum(data.lo, axis=-1, keepdims=True)) / d,
                             (K, d)).astype(dtype)
    g, _ = g_and_grad(data, x)
    t = jnp.maximum(g, 0.0) + 1.0
    half = 0.5 * data.b
    ones, zeros = jnp.ones((K, d), dtype), jnp.zeros((K, d), dtype)
    one_k, zero_k = jnp.ones((K,), dtype), jnp.zeros((K,), dtype)
    ball = data.centre is not None
    sh = jnp.broadcast_to(data.radius ** 2, (K,)).astype(dtype) if ball else one_k
    return State(x, t, t - g, half, half, zeros if ball else ones,
                 ones if data.hi is not None else zeros, zero_k, sh, one_k if ball else zero_k)


def solve(data: Data, steps: int) -> State:
    """Mehrotra predictor-corrector from ``start``, at most ``steps`` iterations; a lane stops
    once its gap and residuals are at a few ulps of its scale."""
    K, d = data.y.shape
    eps = jnp.finfo(data.y.dtype).eps
    n_c = (d * ((data.lo is not None) + (data.hi is not None)) + 2
           + (data.centre is not None))
    where = data.lo if data.lo is not None else data.centre
    scale = 1.0 + jnp.max(jnp.abs(data.y), axis=-1) + jnp.max(jnp.abs(where), axis=-1)

    def converged(st, res_all):
        r_d, r_t, r_g, r_e, r_h, _, _ = res_all
        gap = _complementarity(data, st, n_c)
        res = jnp.maximum(jnp.max(jnp.abs(r_d), axis=-1) / scale,
                          jnp.maximum(jnp.maximum(jnp.abs(r_g), jnp.abs(r_e)), jnp.abs(r_h)) / scale)
        # the duality gap (n_c times the mean product) bounds P(x) - P*: a few ulps of the
        # objective (1/2)||x - y||^2 + b t, floored at an ulp of ||y||^2
        objective = 0.5 * jnp.sum((st.x - data.y) ** 2, axis=-1) + data.b * st.t
        floor = eps * (1.0 + jnp.sum(data.y ** 2, axis=-1))
        return (n_c * gap <= 256 * eps * jnp.maximum(objective, floor)) & (res <= 32 * eps) & (
            jnp.abs(r_t) <= 32 * eps * (1.0 + data.b))

    def iteration(st, res_all):
        r_d, r_t, r_g, r_e, r_h, grad, grad_h = res_all
        res, grads = (r_d, r_t, r_g, r_e, r_h), (grad, grad_h)
        fac = _factor(data, st, grad, grad_h)
        lo_gap, hi_gap = _slacks(data, st)
        gap = _complementarity(data, st, n_c)
        # predictor: the affine-scaling direction (targets 0); unused rows' targets are 0
        aff = direction(data, st, fac, grads, res, -st.mu * st.sg, -st.zeta * st.t,
                        -st.w * lo_gap, -st.v * hi_gap, -st.om * st.sh)
        a_aff = _step_length(data, st, *aff[:9])
        step = lambda st, a, dd: State(
            st.x + a[:, None] * dd[0], st.t + a * dd[1], st.sg + a * dd[2], st.mu + a * dd[3],
            st.zeta + a * dd[4], st.w + a[:, None] * dd[5], st.v + a[:, None] * dd[6],
            st.nu + a * dd[9], st.sh + a * dd[7], st.om + a * dd[8])
        moved = step(st, a_aff, aff)
        sigma = (_complementarity(data, moved, n_c) / jnp.maximum(gap, jnp.finfo(gap.dtype).tiny)) ** 3
        target = jnp.clip(sigma, 0.0, 1.0) * gap
        dd = direction(data, st, fac, grads, res,
                       target - st.mu * st.sg - aff[3] * aff[2],
                       target - st.zeta * st.t - aff[4] * aff[1],
                       target[:, None] - st.w * lo_gap - aff[5] * aff[0],
                       target[:, None] - st.v * hi_gap + aff[6] * aff[0],
                       target - st.om * st.sh - aff[8] * aff[7])
        a = jnp.minimum(0.99 * _step_length(data, st, *dd[:9]), 1.0)
        return step(st, a, dd)

    def cond(c):
        k, _, live, _ = c
        return (k < steps) & jnp.any(live)

    def body(c):
        k, st, live, res_all = c
        new = iteration(st, res_all)
        # a step that leaves the finite numbers (a factorisation at round-off) is not taken
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(a.reshape(a.shape[0], -1)), axis=-1)
                                    for a in jax.tree_util.tree_leaves(new)]), axis=0)
        take = live & finite
        st = jax.tree_util.tree_map(
            lambda n, o: jnp.where(take.reshape(take.shape + (1,) * (n.ndim - 1)), n, o), new, st)
        res_all = residuals(data, st)  # once per step: the test here, the next step's system
        return k + 1, st, take & ~converged(st, res_all), res_all

    st0 = start(data)
    res0 = residuals(data, st0)
    return jax.lax.while_loop(cond, body, (0, st0, ~converged(st0, res0), res0))[1]


def tangent(data: Data, st: State, y_dot, b_dot):
    """dx of the solution for tangents of y and b: the KKT system on the active set that
    ``st`` identifies (a bound or the ball is active where its multiplier exceeds its slack;
    g binds where mu > s_g and zeta > t, else the penalty saturates, mu = b), differentiated:

        (I + 2 mu P + 2 omega I) dx + dmu grad g + dm grad e - dw_A = dy,   dx_A = 0,
        grad g . dx = 0 (binding)  or  dmu = db (saturated),
        grad e . dx = 0 (e: the simplex's sum, or the active ball)  or  dm = 0 (none),

    With M = the free block of I + 2 mu P + 2 omega I (identity on the active bounds),
    dx = z_y - dmu z_g - dm z_e, z_v = M^{-1} (v on the free coordinates): one Cholesky per
    lane and a 2 x 2 system."""
    lo_gap, hi_gap = _slacks(data, st)
    free = jnp.ones(st.x.shape, bool)
    if data.lo is not None:
        free = free & (st.w <= lo_gap)
    if data.hi is not None:
        free = free & (st.v <= hi_gap)
    _, grad = g_and_grad(data, st.x)
    binding = (st.mu > st.sg) & (st.zeta > st.t)
    if data.centre is not None:
        grad_e = _ball(data, st.x)[1]
        has_e = st.om > st.sh
    elif data.total is not None:
        grad_e, has_e = jnp.ones_like(st.x), jnp.ones(st.t.shape, bool)
    else:
        grad_e, has_e = jnp.zeros_like(st.x), jnp.zeros(st.t.shape, bool)
    d = st.x.shape[-1]
    P = data.P if data.P.ndim == 3 else data.P[None]
    f = free.astype(st.x.dtype)
    eye = jnp.eye(d, dtype=st.x.dtype)
    H = eye * (1.0 + 2.0 * st.om)[:, None, None] + 2.0 * st.mu[:, None, None] * P
    M = f[:, :, None] * H * f[:, None, :] + eye * (1.0 - f)[:, :, None]
    L = jnp.linalg.cholesky(M)
    solve = lambda v: _cholesky.solve(L, f * v)
    z_y, z_g, z_e = solve(y_dot), solve(grad), solve(grad_e)
    dot = lambda a, b: jnp.sum(a * b, axis=-1)
    one, zero = jnp.ones_like(b_dot), jnp.zeros_like(b_dot)
    # rows [a11 a12; a21 a22] [dmu; dm] = [r1; r2]
    a11 = jnp.where(binding, dot(grad, z_g), one)
    a12 = jnp.where(binding, dot(grad, z_e), zero)
    r1 = jnp.where(binding, dot(grad, z_y), b_dot)
    a21 = jnp.where(has_e, dot(grad_e, z_g), zero)
    a22 = jnp.where(has_e, dot(grad_e, z_e), one)
    r2 = jnp.where(has_e, dot(grad_e, z_y), zero)
    det = _nonzero(a11 * a22 - a12 * a21)
    dmu = (r1 * a22 - a12 * r2) / det
    dm = (a11 * r2 - a21 * r1) / det
    return z_y - dmu[:, None] * z_g - dm[:, None] * z_e


def _nonzero(a):
    return jnp.where(a == 0, 1.0, a)
