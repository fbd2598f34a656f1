"""Primal-dual interior point (Mehrotra) for Eq. (5) with a quadratic g on a box, simplex, ball
or L1 ball.

Divided by alpha, Eq. (5) is, with an epigraph variable t for [g]_+ and b = beta/alpha,

    min_{x, t} (1/2)||x - y||^2 + b t   s.t.  g(x) - t <= 0 (mu),  -t <= 0 (zeta),
               lo <= x (w),  x <= hi (v, a box only),  sum x = total (nu, a simplex only),
               ||x - c||^2 <= r^2 (omega, slack s_h: a ball only, no bounds),
               ||x - c||_1 <= r (an L1 ball, lifted: ``_ipm_l1``),

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
answer does not depend on the lanes beside it.  Data and state: ``_ipm_data``; the residuals,
the factorisation and the Newton direction: ``_ipm_newton``; step lengths and the
complementarity gap: ``_ipm_step``; the implicit derivative at the solution (the same system):
``_ipm_tangent``.  This module: the start and the predictor-corrector loop.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco.solvers._ipm_data import Data as Data
from jaxbco.solvers._ipm_data import State as State
from jaxbco.solvers._ipm_data import (
    _has_hi,
    _has_lo,
    _has_row,
    _l1,
    _slacks,
    g_and_grad,
)
from jaxbco.solvers._ipm_newton import _factor, direction, residuals
from jaxbco.solvers._ipm_step import _complementarity, _gap_steps, _step_length


def start(data: Data) -> State:
    """A strictly interior start: x the centre of the set, t = [g]_+ + 1, the multipliers of
    g and t at b/2, the others 1 (an L1 ball: u = v = r / (4 d), sigma = r / 2)."""
    K, d = data.y.shape
    dtype = data.y.dtype
    ones, zeros = jnp.ones((K, d), dtype), jnp.zeros((K, d), dtype)
    one_k, zero_k = jnp.ones((K,), dtype), jnp.zeros((K,), dtype)
    if _l1(data):
        x = data.l1c
    elif data.centre is not None:
        x = data.centre
    elif data.hi is not None:
        x = 0.5 * (data.lo + data.hi)
    else:
        x = data.lo + (data.total - jnp.sum(data.lo, axis=-1, keepdims=True)) / d
    x = jnp.broadcast_to(x, (K, d)).astype(dtype)
    g, _ = g_and_grad(data, x)
    t = jnp.maximum(g, 0.0) + 1.0
    half = 0.5 * data.b
    if _l1(data):
        r = jnp.broadcast_to(data.l1r, (K,)).astype(dtype)
        quarter = jnp.broadcast_to((0.25 / d) * r[:, None], (K, d))
        return State(x, t, t - g, half, half, ones, ones, zero_k, 0.5 * r, one_k, quarter, quarter)
    ball = data.centre is not None
    sh = jnp.broadcast_to(data.radius**2, (K,)).astype(dtype) if ball else one_k
    return State(
        x,
        t,
        t - g,
        half,
        half,
        zeros if ball else ones,
        ones if data.hi is not None else zeros,
        zero_k,
        sh,
        one_k if ball else zero_k,
        zeros,
        zeros,
    )


#: A step that multiplies a lane's KKT measure by more than this is not taken (the lane stops).
GROWTH = 1e3


def _step(data, st, a, dd):
    """The state ``a`` (K,) of the way along the direction ``dd``."""
    new = State(
        st.x + a[:, None] * dd[0],
        st.t + a * dd[1],
        st.sg + a * dd[2],
        st.mu + a * dd[3],
        st.zeta + a * dd[4],
        st.w + a[:, None] * dd[5],
        st.v + a[:, None] * dd[6],
        st.nu + a * dd[9],
        st.sh + a * dd[7],
        st.om + a * dd[8],
        st.u + a[:, None] * dd[10],
        st.vl + a[:, None] * dd[11],
    )
    if _l1(data):  # x = c + u - v exactly (u, v carried: v = u - (x - c) cancels)
        new = new._replace(x=data.l1c + new.u - new.vl)
    return new


#: halvings of a step at most, for a g whose linearisation overshoots (``_backtracked``)
HALVINGS = 40


def _backtracked(data, st, a, dd, r_g):
    """A general convex g (``curv``): the step along ``dd``, halved (at most ``HALVINGS``
    times) until x is finite and the g row's residual r_g = g(x) - t + s_g exceeds its
    linear prediction (1 - a) r_g by at most max(|(1 - a) r_g|, s_g / 2).

    The Newton step sees g's linearisation, a lower bound of g: a full step can land where g
    is far above it (an exponential, 1e7 times its value at the start), a residual the
    infeasible start never recovers from (the lane stalls).  Bounding the excess by the new
    slack keeps the residual within a constant of its prediction; near the solution the
    excess is second order in the step and the full step is taken (a quadratic g: the
    prediction is exact to round-off)."""

    def moved(a):
        new = _step(data, st, a, dd)
        g, _ = g_and_grad(data, new.x)
        predicted = (1.0 - a) * r_g
        excess = (g - new.t + new.sg) - predicted
        ok = (excess <= jnp.maximum(jnp.abs(predicted), 0.5 * new.sg)) & jnp.all(
            jnp.isfinite(new.x), axis=-1
        )
        return new, ok

    def body(c):
        k, a, (_, ok) = c
        a = jnp.where(ok, a, 0.5 * a)
        return k + 1, a, moved(a)

    def cond(c):
        return (c[0] < HALVINGS) & ~jnp.all(c[2][1])

    return jax.lax.while_loop(cond, body, (0, a, moved(a)))[2][0]


def solve(data: Data, steps: int, live=None) -> State:
    """Mehrotra predictor-corrector from ``start``, at most ``steps`` iterations (only the lanes
    where ``live`` (K,) is true move, when it is given; the others stay at ``start``); a lane stops
    once its gap and residuals are at a few ulps of its scale (its KKT measure <= 1), or at a
    step that would leave the finite numbers or multiply that measure by more than ``GROWTH``
    (past round-off a step can be garbage: a lane whose t-stationarity stayed at 5x its
    threshold went on stepping and took a finite but wild step, 1e-4 off in x in float64, on
    an L1 ball, on blocks only)."""
    K, d = data.y.shape
    eps = jnp.finfo(data.y.dtype).eps
    n_c = d * (_has_lo(data) + _has_hi(data)) + 2 + _has_row(data)
    where = (
        data.lo if data.lo is not None else (data.centre if data.centre is not None else data.l1c)
    )
    scale = 1.0 + jnp.max(jnp.abs(data.y), axis=-1) + jnp.max(jnp.abs(where), axis=-1)

    def measure(st, res_all):
        """The KKT conditions' largest violation in units of its threshold, (K,): <= 1 is
        converged."""
        r_d, r_t, r_g, r_e, r_h, _, _, r_v = res_all
        gap = _complementarity(data, st, n_c)
        res = jnp.maximum(
            jnp.max(jnp.maximum(jnp.abs(r_d), jnp.abs(r_v)), axis=-1) / scale,
            jnp.maximum(jnp.maximum(jnp.abs(r_g), jnp.abs(r_e)), jnp.abs(r_h)) / scale,
        )
        # the duality gap (n_c times the mean product) bounds P(x) - P*: a few ulps of the
        # objective (1/2)||x - y||^2 + b t, floored at an ulp of ||y||^2
        objective = 0.5 * jnp.sum((st.x - data.y) ** 2, axis=-1) + data.b * st.t
        floor = eps * (1.0 + jnp.sum(data.y**2, axis=-1))
        m = jnp.maximum(n_c * gap / (256 * eps * jnp.maximum(objective, floor)), res / (32 * eps))
        m = jnp.maximum(m, jnp.abs(r_t) / (32 * eps * (1.0 + data.b)))
        return jnp.where(jnp.isnan(m), jnp.inf, m)

    def iteration(st, res_all):
        r_d, r_t, r_g, r_e, r_h, grad, grad_h, r_v = res_all
        res, grads = (r_d, r_t, r_g, r_e, r_h, r_v), (grad, grad_h)
        fac = _factor(data, st, grad, grad_h)
        lo_gap, hi_gap = _slacks(data, st)
        gap = _complementarity(data, st, n_c)
        # predictor: the affine-scaling direction (targets 0); unused rows' targets are 0
        aff = direction(
            data,
            st,
            fac,
            grads,
            res,
            -st.mu * st.sg,
            -st.zeta * st.t,
            -st.w * lo_gap,
            -st.v * hi_gap,
            -st.om * st.sh,
        )
        a_aff = _step_length(data, st, *aff)

        moved = _step(data, st, a_aff, aff)
        sigma = (
            _complementarity(data, moved, n_c) / jnp.maximum(gap, jnp.finfo(gap.dtype).tiny)
        ) ** 3
        target = jnp.clip(sigma, 0.0, 1.0) * gap
        d_lo, d_hi = _gap_steps(data, aff[0], aff[10], aff[11])
        dd = direction(
            data,
            st,
            fac,
            grads,
            res,
            target - st.mu * st.sg - aff[3] * aff[2],
            target - st.zeta * st.t - aff[4] * aff[1],
            target[:, None] - st.w * lo_gap - aff[5] * d_lo,
            target[:, None] - st.v * hi_gap - aff[6] * d_hi,
            target - st.om * st.sh - aff[8] * aff[7],
        )
        a = jnp.minimum(0.99 * _step_length(data, st, *dd), 1.0)
        if data.curv is None:
            return _step(data, st, a, dd)
        return _backtracked(data, st, a, dd, r_g)

    def cond(c):
        return (c[0] < steps) & jnp.any(c[2])

    def body(c):
        k, st, live, res_all, m = c
        new = iteration(st, res_all)
        # a step that leaves the finite numbers (a factorisation at round-off) is not taken
        finite = jnp.all(
            jnp.stack(
                [
                    jnp.all(jnp.isfinite(a.reshape(a.shape[0], -1)), axis=-1)
                    for a in jax.tree_util.tree_leaves(new)
                ]
            ),
            axis=0,
        )
        res_new = residuals(data, new)  # once per step: the test here, the next step's system
        m_new = measure(new, res_new)
        take = live & finite & (m_new <= GROWTH * m)
        pick = lambda a, b: jax.tree_util.tree_map(
            lambda n, o: jnp.where(take.reshape(take.shape + (1,) * (n.ndim - 1)), n, o), a, b
        )
        return (
            k + 1,
            pick(new, st),
            take & (m_new > 1.0),
            pick(res_new, res_all),
            jnp.where(take, m_new, m),
        )

    st0 = start(data)
    res0 = residuals(data, st0)
    m0 = measure(st0, res0)
    live0 = m0 > 1.0 if live is None else (m0 > 1.0) & live
    return jax.lax.while_loop(cond, body, (0, st0, live0, res0, m0))[1]
