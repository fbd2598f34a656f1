"""The interior point's Newton system (``_ipm``): the KKT residuals, the Cholesky factor of the
reduced matrix per lane, and the Newton direction for given complementarity targets, the
slacks and bound multipliers eliminated (an L1 ball's lifted rows: ``_ipm_l1``)."""

from __future__ import annotations

import jax.numpy as jnp

from jaxbco.solvers import _cholesky, _ipm_l1
from jaxbco.solvers._ipm_data import (
    Data,
    State,
    _ball,
    _l1,
    _slacks,
    g_and_grad,
    mu_hessian,
)


def residuals(data: Data, st: State):
    """(r_d, r_t, r_g, r_e, r_h, grad g, grad h, r_v): stationarity in x and t, the g row, the
    sum row, the ball row; an L1 ball: r_d, r_v stationarity in u and v, r_h the sum row."""
    g, grad = g_and_grad(data, st.x)
    if _l1(data):
        r_u, r_v, r_s = _ipm_l1.residuals(data, st, grad)
        zero = jnp.zeros_like(g)
        return (
            r_u,
            data.b - st.mu - st.zeta,
            g - st.t + st.sg,
            zero,
            r_s,
            grad,
            jnp.zeros_like(grad),
            r_v,
        )
    h, grad_h = _ball(data, st.x)
    r_d = (
        st.x
        - data.y
        + st.mu[:, None] * grad
        - st.w
        + st.v
        + st.nu[:, None]
        + st.om[:, None] * grad_h
    )
    r_t = data.b - st.mu - st.zeta
    r_g = g - st.t + st.sg
    r_e = (jnp.sum(st.x, axis=-1) - data.total) if data.total is not None else jnp.zeros_like(g)
    r_h = (h + st.sh) if data.centre is not None else jnp.zeros_like(g)
    return r_d, r_t, r_g, r_e, r_h, grad, grad_h, jnp.zeros_like(r_d)


def _factor(data, st, grad, grad_h):
    """Cholesky factor of the reduced matrix, and the scalars of the elimination."""
    lo_gap, hi_gap = _slacks(data, st)
    if _l1(data):
        D, W_delta, _, _, _, F = _ipm_l1.weights(data, st)
    else:
        D = st.w / lo_gap + st.v / hi_gap + 2.0 * st.om[:, None]
    a = st.mu / st.sg
    theta = a + st.zeta / st.t
    kappa = a * (st.zeta / st.t) / theta
    d = st.x.shape[-1]
    M = (
        jnp.eye(d, dtype=st.x.dtype) * (1.0 + D)[:, :, None]
        + mu_hessian(data, st)
        + kappa[:, None, None] * grad[:, :, None] * grad[:, None, :]
    )
    if data.centre is not None:
        M = M + (st.om / st.sh)[:, None, None] * grad_h[:, :, None] * grad_h[:, None, :]
    if _l1(data):
        M = M + (W_delta / F[:, None])[:, :, None] * W_delta[:, None, :]
    return jnp.linalg.cholesky(M), a, theta, kappa


def direction(data: Data, st: State, fac, grads, res, c_g, c_z, c_w, c_v, c_h):
    """Newton direction for the linearised KKT system (residuals ``res`` = (r_d, r_t, r_g,
    r_e, r_h)) with complementarity targets s_g dmu + mu ds_g = c_g, t dzeta + zeta dt = c_z,
    (x - lo) dw + w dx = c_w, (hi - x) dv - v dx = c_v, s_h domega + omega ds_h = c_h (an L1
    ball: u dw + w du = c_w, v dv' + v' d(u - x) = c_v for its lifted u and v);
    returns (dx, dt, dsg, dmu, dzeta, dw, dv, dsh, dom, dnu, du)."""
    L, a, theta, kappa = fac
    grad, grad_h = grads
    r_d, r_t, r_g, r_e, r_h, r_v = res
    lo_gap, hi_gap = _slacks(data, st)
    cg = c_g + st.mu * r_g
    e = cg / st.sg + c_z / st.t - r_t
    f0 = cg / st.sg - a * e / theta
    if _l1(data):
        base, parts = _ipm_l1.rhs(data, st, r_d, r_v, r_h, c_w, c_v, c_h)
        rho = base - f0[:, None] * grad
    else:
        rho = (
            -r_d
            + (c_w / lo_gap if data.lo is not None else 0.0)
            - (c_v / hi_gap if data.hi is not None else 0.0)
            - f0[:, None] * grad
        )
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
    if _l1(data):
        du, dvl, dw, dv, dsh, dom = _ipm_l1.recover(data, st, dx, parts, c_w, c_v, c_h)
        return dx, dt, dsg, dmu, dzeta, dw, dv, dsh, dom, dnu, du, dvl
    dw = ((c_w - st.w * dx) / lo_gap) if data.lo is not None else jnp.zeros_like(dx)
    dv = ((c_v + st.v * dx) / hi_gap) if data.hi is not None else jnp.zeros_like(dx)
    if data.centre is not None:
        hdx = jnp.sum(grad_h * dx, axis=-1)
        dsh = -hdx - r_h
        dom = (c_h + st.om * (hdx + r_h)) / st.sh
    else:
        dsh = dom = jnp.zeros_like(dt)
    return dx, dt, dsg, dmu, dzeta, dw, dv, dsh, dom, dnu, jnp.zeros_like(dx), jnp.zeros_like(dx)
