"""Scalar root finders for the 1-D duals: the multiplier mu* with h(mu*) = 0 of a
non-increasing h(mu) = g(x(mu)) on a bracket [lo, hi] with h(lo) > 0 >= h(hi).

``bracketed_root``: Illinois (modified regula falsi, Dowell & Jarratt 1971) with log- and
plain-bisection safeguards, a ``while_loop`` that stops per lane (the smooth method).
``newton_root``: safeguarded Newton, at most ``iters`` steps (the linear method, where h is
piecewise smooth and Newton terminates finitely on its linear pieces); a lane stops, frozen,
once its bracket has closed, and the loop ends when every lane of the batch or block has.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _one_lane_shape(*values):
    """The bracket's ends and values broadcast to one lane shape: a scalar end (a shared beta,
    a zero lower end) meets per-lane values when one projection serves a block of lanes."""
    lanes = jnp.broadcast_shapes(*(jnp.shape(v) for v in values))
    return tuple(jnp.broadcast_to(v, lanes) for v in values)


def bracketed_root(h_and_x, lo, hi, h_lo, h_hi, x_hi, first_guess, iters, run, tol_mu, tol_h):
    """Root of a non-increasing h on [lo, hi] with h(lo) > 0 >= h(hi); returns (mu_hi, x_hi).

    Illinois steps, a log-bisection while hi/lo > 8, a plain bisection every fourth step;
    ``h_and_x(mu, x_warm) -> (h(mu), x(mu))`` is warm-started at the feasible end's point.  A
    ``while_loop`` that stops per lane when ``run`` is false, after ``iters`` steps, or when
    the bracket has closed: hi - lo <= tol_mu hi or -h(hi) <= tol_h.
    """

    def open_(carry):
        _, lo, hi, _, h_hi, _, _ = carry
        return run & ~((hi - lo <= tol_mu * hi) | (-h_hi <= tol_h))

    def cond(carry):
        return (carry[0] < iters) & jnp.any(open_(carry))

    def step(carry):  # a closed lane keeps its bracket (frozen): its answer is its own
        new = body(carry)
        live = open_(carry)
        return (new[0],) + jax.tree_util.tree_map(
            lambda n, o: jnp.where(live, n, o), new[1:], carry[1:]
        )

    def body(carry):
        k, lo, hi, h_lo, h_hi, x_hi, side = carry
        denom = h_hi - h_lo
        secant = hi - h_hi * (hi - lo) / jnp.where(denom < 0, denom, -1.0)
        secant = jnp.where(denom < 0, secant, 0.5 * (lo + hi))
        geometric = jnp.sqrt(jnp.where(lo > 0, lo * hi, 1.0))
        cand = jnp.where((lo > 0) & (hi > 8 * lo), geometric, secant)
        cand = jnp.where(k % 4 == 3, 0.5 * (lo + hi), cand)
        cand = jnp.where((k == 0) & (first_guess > lo) & (first_guess < hi), first_guess, cand)
        cand = jnp.clip(cand, lo, hi)
        h_c, x_c = h_and_x(cand, x_hi)
        pos = h_c > 0
        # Illinois: halve the kept end's value when the same end is kept twice in a row.
        h_hi_new = jnp.where(pos, jnp.where(side == -1, 0.5 * h_hi, h_hi), h_c)
        h_lo_new = jnp.where(pos, h_c, jnp.where(side == 1, 0.5 * h_lo, h_lo))
        return (
            k + 1,
            jnp.where(pos, cand, lo),
            jnp.where(pos, hi, cand),
            h_lo_new,
            h_hi_new,
            jnp.where(pos, x_hi, x_c),
            jnp.where(pos, -1, 1).astype(jnp.int32),
        )

    lo, hi, h_lo, h_hi = _one_lane_shape(lo, hi, h_lo, h_hi)
    carry = (0, lo, hi, h_lo, h_hi, x_hi, jnp.zeros(jnp.shape(hi), jnp.int32))
    _, _, hi, _, _, x_hi, _ = jax.lax.while_loop(cond, step, carry)
    return hi, x_hi


def newton_root(
    h_x_dh, lo, hi, h_lo, h_hi, x_lo, x_hi, first, iters, tol_h=0.0, run=True, ends: bool = False
):
    """Safeguarded Newton for a non-increasing, piecewise-smooth h on [lo, hi], h(lo) > 0 >= h(hi).

    Newton from the latest point when it lands inside the bracket (finite termination on a
    piecewise-linear h, e.g. projections onto a box, simplex or L1 ball), nudged a few ulps
    past the lower end so a root that rounds to h = +1e-16 still closes the bracket; else the
    bracket's secant, a log-bisection while hi/lo > 8, and a plain bisection every fifth step
    when the last five shrank the bracket by less than half.  Returns both ends' points.

    A lane stops (and is frozen, so its answer does not depend on its batch) once its bracket
    has closed: -h(hi) <= ``tol_h`` (h's round-off level: x(hi), feasible, is the root's
    point), or hi - lo <= 16 eps hi (both ends are the root's to round-off), or ``run`` is
    false (a lane whose answer is not the root); the loop runs while any lane is open, at
    most ``iters`` steps.  ``ends``: also the bracket's ends, ``(x_lo, x_hi, lo, hi)``.
    """
    eps = jnp.finfo(lo.dtype).eps
    lo, hi, h_lo, h_hi = _one_lane_shape(lo, hi, h_lo, h_hi)
    x_lo, x_hi = jnp.broadcast_arrays(x_lo, x_hi)

    def closed(carry):
        lo, hi, h_hi = carry[0], carry[1], carry[3]
        return (-h_hi <= tol_h) | (hi - lo <= 16 * eps * hi) | ~run

    def cond(state):
        k, carry = state
        open_lanes = jnp.max((~closed(carry)).astype(jnp.int32))  # no and/or-reduction in Triton
        return (k < iters) & (open_lanes > 0)

    def step(state):
        k, carry = state
        new = body(k, carry)
        done = closed(carry)
        return k + 1, jax.tree_util.tree_map(lambda o, n: jnp.where(done, o, n), carry, new)

    def body(k, carry):
        lo, hi, h_lo, h_hi, x_lo, x_hi, mu, h, dh, width, phase = carry
        fifth = phase == 4  # k % 5 == 4, counted (Pallas' Triton lowering has no int mod here)
        # Newton aims at h = -tol_h/8, inside the closing band [-tol_h, 0]: on h's linear
        # piece it closes the bracket in one step, also from an end where h ~ +round-off.
        raw = mu - (h + 0.125 * tol_h) / jnp.where(dh < 0, dh, -1.0)
        newton = jnp.maximum(raw, lo + 64 * eps * lo)
        ok_newton = (dh < 0) & (newton < hi)
        # Newton inside the bracket, only its nudge past it: the bracket is under 64 ulps and
        # the secant from an end with h ~ 0 would stall there; halve it instead.
        nudged_out = (dh < 0) & (raw < hi) & ~ok_newton
        denom = h_hi - h_lo
        secant = jnp.where(
            denom < 0, hi - h_hi * (hi - lo) / jnp.where(denom < 0, denom, -1.0), 0.5 * (lo + hi)
        )
        cand = jnp.where(ok_newton, newton, jnp.where(nudged_out, 0.5 * (lo + hi), secant))
        cand = jnp.where(
            (lo > 0) & (hi > 8 * lo) & ~ok_newton, jnp.sqrt(jnp.where(lo > 0, lo * hi, 1.0)), cand
        )
        cand = jnp.where(fifth & ((hi - lo) > 0.5 * width), 0.5 * (lo + hi), cand)
        cand = jnp.where((k == 0) & (first > lo) & (first < hi), first, cand)
        cand = jnp.clip(cand, lo, hi)
        h_c, x_c, dh_c = h_x_dh(cand)
        pos = h_c > 0
        width = jnp.where(fifth, hi - lo, width)
        lo, h_lo, x_lo = (
            jnp.where(pos, cand, lo),
            jnp.where(pos, h_c, h_lo),
            jnp.where(pos, x_c, x_lo),
        )
        hi, h_hi, x_hi = (
            jnp.where(pos, hi, cand),
            jnp.where(pos, h_hi, h_c),
            jnp.where(pos, x_hi, x_c),
        )
        return (
            lo,
            hi,
            h_lo,
            h_hi,
            x_lo,
            x_hi,
            cand,
            h_c,
            dh_c,
            width,
            jnp.where(fifth, 0, phase + 1),
        )

    inf = jnp.full_like(hi, jnp.inf)
    carry = (
        lo,
        hi,
        h_lo,
        h_hi,
        x_lo,
        x_hi,
        lo,
        h_lo,
        jnp.zeros_like(hi),
        inf,
        jnp.zeros(jnp.shape(hi), jnp.int32),
    )
    _, out = jax.lax.while_loop(cond, step, (jnp.zeros((), jnp.int32), carry))
    return (out[4], out[5], out[0], out[1]) if ends else (out[4], out[5])
