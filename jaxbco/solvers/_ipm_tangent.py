"""The implicit derivative of ``_ipm``'s solution (``jaxbco.solvers.quadratic``'s custom JVP):
the KKT system on the active set its final state identifies, differentiated."""

from __future__ import annotations

import jax.numpy as jnp

from jaxbco.solvers import _cholesky
from jaxbco.solvers._ipm_data import Data, State, _ball, _l1, _slacks, g_and_grad, mu_hessian


def tangent(data: Data, st: State, y_dot, b_dot):
    """dx of the solution for tangents of y and b: the KKT system on the active set that
    ``st`` identifies (a bound or the ball is active where its multiplier exceeds its slack;
    g binds where mu > s_g and zeta > t, else the penalty saturates, mu = b), differentiated:

        (I + 2 mu P + 2 omega I) dx + dmu grad g + dm grad e - dw_A = dy,   dx_A = 0,
        grad g . dx = 0 (binding)  or  dmu = db (saturated),
        grad e . dx = 0 (e: the simplex's sum, or the active ball)  or  dm = 0 (none),

    With M = the free block of I + 2 mu P + 2 omega I (identity on the active bounds),
    dx = z_y - dmu z_g - dm z_e, z_v = M^{-1} (v on the free coordinates): one Cholesky per
    lane and a 2 x 2 system.  An L1 ball: x_i = c_i is held where both u_i and v_i are at
    their bounds; e is its sum row, grad e = sign(x - c) (no omega I term)."""
    lo_gap, hi_gap = _slacks(data, st)
    free = jnp.ones(st.x.shape, bool)
    if _l1(data):
        free = (st.w <= lo_gap) | (st.v <= hi_gap)
    if data.lo is not None:
        free = free & (st.w <= lo_gap)
    if data.hi is not None:
        free = free & (st.v <= hi_gap)
    _, grad = g_and_grad(data, st.x)
    binding = (st.mu > st.sg) & (st.zeta > st.t)
    if _l1(data):
        grad_e = jnp.where(lo_gap > hi_gap, 1.0, -1.0).astype(st.x.dtype)
        has_e = st.om > st.sh
    elif data.centre is not None:
        grad_e = _ball(data, st.x)[1]
        has_e = st.om > st.sh
    elif data.total is not None:
        grad_e, has_e = jnp.ones_like(st.x), jnp.ones(st.t.shape, bool)
    else:
        grad_e, has_e = jnp.zeros_like(st.x), jnp.zeros(st.t.shape, bool)
    d = st.x.shape[-1]
    f = free.astype(st.x.dtype)
    eye = jnp.eye(d, dtype=st.x.dtype)
    curve = 2.0 * st.om if data.centre is not None else jnp.zeros_like(st.om)
    H = eye * (1.0 + curve)[:, None, None] + mu_hessian(data, st)
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
