"""How far an interior-point step (``_ipm``) may go and how far the iterate is from optimal:
the largest step keeping every slack and multiplier non-negative (fraction to the boundary),
and the mean complementarity product."""

from __future__ import annotations

import jax.numpy as jnp

from jaxbco.solvers._ipm_data import _has_hi, _has_lo, _has_row, _l1, _slacks


def _gap_steps(data, dx, du, dvl):
    """How the gaps of ``_slacks`` move: (x - lo, hi - x) by (dx, -dx); an L1 ball's (u, v) by
    (du, dv)."""
    if _l1(data):
        return du, dvl
    return dx, -dx


def _max_step(value, step):
    """Largest a in (0, 1] with value + a step >= 0 (per lane, over the trailing axis)."""
    ratio = jnp.where(step < 0, -value / jnp.where(step < 0, step, -1.0), jnp.inf)
    return jnp.minimum(1.0, jnp.min(ratio, axis=-1) if ratio.ndim > 1 else ratio)


def _step_length(data, st, dx, dt, dsg, dmu, dzeta, dw, dv, dsh, dom, dnu, du, dvl):
    lo_gap, hi_gap = _slacks(data, st)
    d_lo, d_hi = _gap_steps(data, dx, du, dvl)
    steps = [
        _max_step(st.t, dt),
        _max_step(st.sg, dsg),
        _max_step(st.mu, dmu),
        _max_step(st.zeta, dzeta),
    ]
    if _has_lo(data):
        steps += [_max_step(lo_gap, d_lo), _max_step(st.w, dw)]
    if _has_hi(data):
        steps += [_max_step(hi_gap, d_hi), _max_step(st.v, dv)]
    if _has_row(data):
        steps += [_max_step(st.sh, dsh), _max_step(st.om, dom)]
    out = steps[0]
    for s in steps[1:]:
        out = jnp.minimum(out, s)
    return out


def _complementarity(data, st, n_c):
    lo_gap, hi_gap = _slacks(data, st)
    total = st.mu * st.sg + st.zeta * st.t
    if _has_lo(data):
        total = total + jnp.sum(st.w * lo_gap, axis=-1)
    if _has_hi(data):
        total = total + jnp.sum(st.v * hi_gap, axis=-1)
    if _has_row(data):
        total = total + st.om * st.sh
    return total / n_c
