"""The interior point's L1-ball rows: ||x - c||_1 <= r lifted to x = c + u - v, u, v >= 0,
sum (u + v) + sigma = r, sigma >= 0 (Boyd & Vandenberghe 2004, Sec. 4.1.3 / 6.1), eliminated
back to one d x d system in dx.

Stationarity in u and v with G = x - y + mu grad g(x): r_u = G - p_u + omega, r_v = -G - p_v +
omega (p_u, p_v the multipliers of u, v >= 0, omega that of the sum row).  With D_u = p_u / u,
D_v = p_v / v, S = 1/D_u + 1/D_v, W = 1/S, delta = 1/D_u - 1/D_v, eliminating du, dv, the bound
multipliers, dsigma and domega leaves

    (I + 2 mu P + diag(W) + (W delta)(W delta)^T / F) dx + grad g dmu = W a~ - W delta E / F,
    F = sigma / omega + sum (S - W delta^2)   (> 0: S - W delta^2 = 4 / (D_u D_v S)),

the box's system with D = W and one rank-one term (``_ipm``'s g and t rows are unchanged),
every weight written with products of u, v, p_u, p_v only (``weights``).
In ``_ipm.State`` the lifted variables take the box's fields: w = p_u, v = p_v (their gaps
``slacks``: u and v), sh = sigma, om = omega; u and v (``vl``) their own.
"""

from __future__ import annotations

import jax.numpy as jnp


def slacks(data, st):
    """(u, v): the lifted parts of x - c (carried, x = c + u - v)."""
    return st.u, st.vl


def residuals(data, st, grad):
    """(r_u, r_v, r_sigma)."""
    G = st.x - data.y + st.mu[:, None] * grad
    u, v = slacks(data, st)
    om = st.om[:, None]
    return G - st.w + om, -G - st.v + om, jnp.sum(u + v, axis=-1) + st.sh - data.l1r


def weights(data, st):
    """(W, W delta, theta_u, theta_v, h, F) of the elimination, written with products only
    (1/D_u = u/p_u overflows as p_u -> 0 where the L1 ball is slack and u, v are both free):
    den = u p_v + v p_u, W = p_u p_v / den, theta_u = u p_v / den = W/D_u, theta_v = v p_u / den,
    W delta = theta_u - theta_v, h = u v / den = 1/(D_u + D_v), F = sigma/omega + 4 sum h."""
    u, v = slacks(data, st)
    pu, pv = st.w, st.v
    den = u * pv + v * pu
    theta_u, theta_v = u * pv / den, v * pu / den
    h = u * v / den
    return (
        pu * pv / den,
        theta_u - theta_v,
        theta_u,
        theta_v,
        h,
        st.sh / st.om + 4.0 * jnp.sum(h, axis=-1),
    )


def rhs(data, st, r_u, r_v, r_s, c_u, c_v, c_s):
    """(W a~ - W delta E / F, and what ``recover`` needs) for complementarity targets
    u dp_u + p_u du = c_u, v dp_v + p_v dv = c_v, sigma domega + omega dsigma = c_s:
    W a~ = theta_u a_u - theta_v a_v, E = c_s/omega + r_sigma + 2 sum h (a_u + a_v)."""
    u, v = slacks(data, st)
    _, W_delta, theta_u, theta_v, h, F = weights(data, st)
    a_u = c_u / u - r_u
    a_v = c_v / v - r_v
    E = c_s / st.om + r_s + 2.0 * jnp.sum(h * (a_u + a_v), axis=-1)
    return theta_u * a_u - theta_v * a_v - W_delta * (E / F)[:, None], (a_u, a_v, E)


def recover(data, st, dx, parts, c_u, c_v, c_s):
    """(du, dv, dp_u, dp_v, dsigma, domega) from dx: domega = (E + W delta . dx) / F,
    du = h (a_u + a_v - 2 domega) + theta_u dx, dv = du - dx."""
    u, v = slacks(data, st)
    _, W_delta, theta_u, theta_v, h, F = weights(data, st)
    a_u, a_v, E = parts
    dom = (E + jnp.sum(W_delta * dx, axis=-1)) / F
    common = h * (a_u + a_v - 2.0 * dom[:, None])
    du, dv = common + theta_u * dx, common - theta_v * dx
    return du, dv, (c_u - st.w * du) / u, (c_v - st.v * dv) / v, (c_s - st.sh * dom) / st.om, dom
