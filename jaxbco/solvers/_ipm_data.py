"""The interior point's data and state (``_ipm``), and what it needs of g and of the set:
g's value, gradient and Hessian term (a quadratic's P, or a user's ``curv``), the bound gaps."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxbco.solvers import _ipm_l1


class Data(NamedTuple):
    """One chunk of lanes: P (d, d) or (K, d, d), q (d,) or (K, d), s () or (K,), y (K, d),
    b = beta/alpha (K,); the set: lo and hi (d,) or (K, d) (hi None: a simplex, with total ()),
    or (lo None) a ball of centre (d,) and radius () or (K,), or an L1 ball of centre l1c (d,)
    and radius l1r () or (K,)."""

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
    l1c: jax.Array | None = None
    l1r: jax.Array | None = None
    #: any other smooth convex g: x (K, d) -> (g, grad g, Hessian of g) per lane (a
    #: ``jax.tree_util.Partial``; P, q, s unused)
    curv: Any = None


class State(NamedTuple):
    x: jax.Array  # (K, d)
    t: jax.Array  # (K,)   epigraph of [g]_+
    sg: jax.Array  # (K,)   slack of g(x) - t <= 0
    mu: jax.Array  # (K,)   multiplier of g(x) - t <= 0
    zeta: jax.Array  # (K,)   multiplier of -t <= 0
    w: jax.Array  # (K, d) multipliers of lo <= x
    v: jax.Array  # (K, d) multipliers of x <= hi (zeros on a simplex)
    nu: jax.Array  # (K,)   multiplier of sum x = total (zeros on a box)
    sh: jax.Array  # (K,)   slack of ||x - c||^2 <= r^2 (ones off a ball; L1: sigma)
    om: jax.Array  # (K,)   its multiplier (zeros off a ball; L1: omega)
    u: jax.Array  # (K, d) L1 ball: x = c + u - v (zeros off it)
    vl: jax.Array  # (K, d) its v


def _l1(data) -> bool:
    return data.l1c is not None


def _has_lo(data) -> bool:  # rows w (x - lo): a box or simplex (an L1 ball: p_u u)
    return data.lo is not None or _l1(data)


def _has_hi(data) -> bool:  # rows v (hi - x): a box (an L1 ball: p_v v)
    return data.hi is not None or _l1(data)


def _has_row(data) -> bool:  # the row (sh, om): the ball's, or the L1 ball's sum
    return data.centre is not None or _l1(data)


def apply_P(P, r):
    """P r per lane, r (K, d): a shared P as one matrix product (two columns at least: XLA's
    one-column path rounds differently)."""
    if P.ndim == 3:
        return jnp.sum(P * r[:, None, :], axis=-1)
    n = r.shape[0]
    rr = jnp.concatenate([r, r]) if n == 1 else r
    return jnp.matmul(rr, P.T)[:n]


def g_and_grad(data: Data, x):
    if data.curv is not None:
        return data.curv(x)[:2]
    r = x - data.q
    Pr = apply_P(data.P, r)
    return jnp.sum(r * Pr, axis=-1) - data.s, 2.0 * Pr


def mu_hessian(data, st):
    """mu times g's Hessian per lane (K, d, d): 2 mu P, or ``curv``'s at x."""
    if data.curv is not None:
        return st.mu[:, None, None] * data.curv(st.x)[2]
    return 2.0 * st.mu[:, None, None] * (data.P if data.P.ndim == 3 else data.P[None])


def _slacks(data, st):
    if _l1(data):
        return _ipm_l1.slacks(data, st)
    ones = jnp.ones_like(st.x)
    lo_gap = (st.x - data.lo) if data.lo is not None else ones
    hi_gap = (data.hi - st.x) if data.hi is not None else ones
    return lo_gap, hi_gap


def _ball(data, x):
    """(h, grad h) of h(x) = ||x - c||^2 - r^2 (zeros off a ball)."""
    if data.centre is None:
        return jnp.zeros(x.shape[:1], x.dtype), jnp.zeros_like(x)
    r = x - data.centre
    return jnp.sum(r * r, axis=-1) - data.radius**2, 2.0 * r
