"""x* of the absolute loss exactly: F(x) = (1/T) ∑ₜ ‖x − θₜ‖₁ = ∑ᵢ φᵢ(xᵢ) is separable and
piecewise linear, each φᵢ with breakpoints θₜ,ᵢ.

From a point x̂ (the Huber smoothing's FISTA x*), two passes over the rounds give, for each
coordinate, the breakpoint bᵢ nearest x̂ᵢ, φᵢ(bᵢ), the slopes sᵢ⁻ and sᵢ⁺ of φᵢ left and right of
bᵢ (counts of θₜ,ᵢ below, at and above bᵢ, over T) and the neighbouring breakpoints lᵢ < bᵢ < uᵢ.
On lᵢ ≤ xᵢ ≤ uᵢ, F equals the model ∑ᵢ max(φᵢ(bᵢ) + sᵢ⁻(xᵢ − bᵢ), φᵢ(bᵢ) + sᵢ⁺(xᵢ − bᵢ)), whose
minimum over X ∩ C and the box [l, u] is a linear programme in (x, e) (eᵢ above both pieces):
the log-barrier method solves it (``jaxbco.offline.barrier``; C's rows as rows, a ball or
ellipsoid g as one more slack).  Where its answer lies inside [l, u] it is x*: a local
minimum of the convex F over X ∩ C.  Where it meets a bound of [l, u], the model is rebuilt
there, ``_ROUNDS`` times in all; the certificate judges the answer.

Applies to a loss declaring ``l1_breakpoints`` (``Absolute``) with a constraint of rows or a
quadratic form on a set with a barrier (``barrier.form``), one run at a time (``applies``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco import constraints as C
from jaxbco.draws import LOSS, sample
from jaxbco.offline import barrier

_ROUNDS = 4


def applies(problem, fam, x) -> bool:
    """Whether ``polish`` takes this problem (decided from declarations and shapes)."""
    if not problem.loss.l1_breakpoints or x.ndim != 1:
        return False
    if barrier.form(problem.domain, x) is None:
        return False
    return fam.kind in ("linear", "polyhedral") or C.unshifted(fam).quadratic_form is not None


def _scan(problem, seed_key, horizon, fn, start):
    def body(carry, t):
        return fn(carry, sample(problem.loss_data, seed_key, t, LOSS)), None

    ts = jnp.arange(1, horizon + 1, dtype=jnp.int32)
    return jax.lax.scan(body, start, ts)[0]


def breakpoints(problem, seed_key, horizon, x):
    """(b, phi_b, s_lo, s_hi, lo, hi), each (d,): see the module docstring (lo, hi are +-inf
    where no breakpoint lies on that side)."""
    dtype = x.dtype
    inf = jnp.full_like(x, jnp.inf)

    def nearest(carry, theta):
        dist, b = carry
        closer = jnp.abs(theta - x) < dist
        return jnp.where(closer, jnp.abs(theta - x), dist), jnp.where(closer, theta, b)

    _, b = _scan(problem, seed_key, horizon, nearest, (inf, x))

    def count(carry, theta):
        below, above, at, total, lo, hi = carry
        return (
            below + (theta < b),
            above + (theta > b),
            at + (theta == b),
            total + jnp.abs(b - theta),
            jnp.maximum(lo, jnp.where(theta < b, theta, -jnp.inf)),
            jnp.minimum(hi, jnp.where(theta > b, theta, jnp.inf)),
        )

    zero = jnp.zeros_like(x)
    below, above, at, total, lo, hi = _scan(
        problem, seed_key, horizon, count, (zero, zero, zero, zero, -inf, inf)
    )
    T = jnp.asarray(horizon, dtype)
    return b, total / T, (below - above - at) / T, (below - above + at) / T, lo, hi


def corner_cuts(problem, seed_key, horizon, x):
    """target -> (a, s): a cut of F moved to x (a + s.(y - x) <= F(y) for every y) whose
    subgradient s is the target clipped to F's ε-subdifferential at x: each φᵢ is linear with
    slope oᵢ on the piece [Lᵢ, Rᵢ] holding xᵢ (its ends: xᵢ's nearest breakpoint bᵢ and that
    one's neighbour), and a slope σ < oᵢ is a subgradient of φᵢ at Lᵢ (down to the slope left of
    Lᵢ, or oᵢ − 2/T where only a neighbour's count is known), σ > oᵢ one at Rᵢ, so
    φᵢ(y) >= φᵢ(xᵢ) − (oᵢ − σ)(xᵢ − Lᵢ) + σ (y − xᵢ) for σ < oᵢ (alike at Rᵢ) holds for every y.
    Each coordinate's cost (oᵢ − σ)(xᵢ − Lᵢ) is kept within √ε (|F| + |s| D) / (8 d), so the
    cut lies at most an eighth of the float tolerance below F at x.  The x* certificate steers
    the target (``jaxbco.certificate``): x on a kink, or a float32 x a fraction of a piece off
    its kink on a degenerate face, is certified by the slopes of the pieces beside it, which
    the probes at x ± h eᵢ do not reach."""
    dtype, d = x.dtype, x.shape[0]
    b, phi_b, s_lo, s_hi, lo, hi = breakpoints(problem, seed_key, horizon, x)
    step = jnp.asarray(2.0 / horizon, dtype)  # a slope's change at one breakpoint
    right = x >= b
    own = jnp.where(right, s_hi, s_lo)
    phi_x = phi_b + own * (x - b)
    L, R = jnp.where(right, b, lo), jnp.where(right, hi, b)
    low = jnp.where(right, s_lo, own - step)  # the slope left of L, or a bound of it
    high = jnp.where(right, own + step, s_hi)
    D = problem.domain.diameter().astype(dtype)
    slope = jnp.sqrt(jnp.sum(jnp.maximum(jnp.abs(s_lo), jnp.abs(s_hi)) ** 2))
    budget = jnp.sqrt(jnp.finfo(dtype).eps) * (jnp.abs(jnp.sum(phi_x)) + slope * D) / (8 * d)
    tiny = jnp.finfo(dtype).tiny
    left_ok, right_ok = jnp.isfinite(L), jnp.isfinite(R)
    dl = jnp.where(left_ok, x - L, 0.0)
    dr = jnp.where(right_ok, R - x, 0.0)
    lowest = jnp.where(left_ok, jnp.maximum(low, own - budget / jnp.maximum(dl, tiny)), own)
    highest = jnp.where(right_ok, jnp.minimum(high, own + budget / jnp.maximum(dr, tiny)), own)

    def cut(target):
        s = jnp.clip(target, lowest, highest)
        cost = jnp.where(s < own, (own - s) * dl, (s - own) * dr)
        return jnp.sum(phi_x - cost), s

    return cut


def _model_step(problem, fam, phi, seed_key, horizon, x):
    """The minimiser of the local model around x (module docstring), and whether it lies
    strictly inside the model's box.  The LP is posed in local coordinates, y = x - b and
    e - phi(b) (so the barrier's slacks and its stopping gap are of the model box's size, not
    of X's and F's: in float32 that is ~100x closer to the LP's optimum)."""
    domain = problem.domain
    dtype, d = x.dtype, x.shape[0]
    b, phi_b, s_lo, s_hi, lo, hi = breakpoints(problem, seed_key, horizon, x)
    c, _ = domain.inscribed_ball()
    D = domain.diameter().astype(dtype)
    far = jnp.max(jnp.abs(c)) + 4 * D  # no breakpoint on a side: a bound outside X
    lo_f, hi_f = jnp.where(jnp.isfinite(lo), lo, -far), jnp.where(jnp.isfinite(hi), hi, far)
    eye = jnp.eye(d, dtype=dtype)
    rows_y, rhs_y = jnp.concatenate([eye, -eye]), jnp.concatenate([hi_f - b, b - lo_f])
    curved = barrier._none
    if fam.kind in ("linear", "polyhedral"):
        A, r = fam.rows(phi)
        A = A.astype(dtype)
        rows_y = jnp.concatenate([rows_y, A])
        rhs_y = jnp.concatenate([rhs_y, jnp.reshape(r, (-1,)).astype(dtype) - A @ b])
    else:
        curved = lambda y: -fam.value(b + y, phi)[None]
    local = barrier.Shifted(domain, b)
    y0, found = barrier.phase_one(local, rows_y, rhs_y, c.astype(dtype) - b, None, curved)
    # e_i - phi_b,i >= s (x_i - b_i): rows [diag(s), -I] (y, e - phi_b) <= 0; after (y, e), a
    # lifted set's k coordinates t (``barrier.form``)
    space, k = barrier.form(local, y0)
    pieces = jnp.maximum(s_lo * y0, s_hi * y0)
    t0 = local.lift(y0) if k else jnp.zeros((0,), dtype)
    z0 = jnp.concatenate([y0, pieces + 1.0 + jnp.abs(pieces), t0])
    pad = lambda M: jnp.concatenate([M, jnp.zeros((M.shape[0], k), dtype)], axis=1)
    A = jnp.concatenate(
        [
            pad(jnp.concatenate([jnp.diag(s_lo), -eye], axis=1)),
            pad(jnp.concatenate([jnp.diag(s_hi), -eye], axis=1)),
            jnp.concatenate([rows_y, jnp.zeros((rows_y.shape[0], d + k), dtype)], axis=1),
        ]
    )
    rhs = jnp.concatenate([jnp.zeros(2 * d, dtype), rhs_y])
    own = lambda z: jnp.concatenate([z[:d], z[2 * d :]])  # (y, t)
    slacks = lambda z: jnp.concatenate([space.barrier_slacks(own(z)), curved(z[:d])])
    P = jax.scipy.linalg.block_diag(domain.hull_projector(dtype), eye, jnp.eye(k, dtype=dtype))
    lin = jnp.concatenate([jnp.zeros(d, dtype), jnp.ones(d, dtype), jnp.zeros(k, dtype)])
    width = jnp.minimum(jnp.max(hi_f - lo_f), D)
    slope = jnp.maximum(jnp.max(jnp.abs(s_lo)), jnp.max(jnp.abs(s_hi)))
    scale = width * slope * jnp.sqrt(jnp.asarray(d, dtype)) + jnp.finfo(dtype).tiny
    w = jnp.zeros(2 * d + k, dtype)
    z = barrier.central_path(z0, found, lin, w, A, rhs, slacks, P, scale)
    x_new = b + z[:d]
    tol = jnp.sqrt(jnp.finfo(dtype).eps) * D
    inside = jnp.all((x_new > lo + tol) & (x_new < hi - tol))
    return jnp.where(found, x_new, x), found & inside


def polish(problem, fam, phi, seed_key, horizon, x):
    """x* from a point x near it (module docstring): at most ``_ROUNDS`` local models, stopping
    once a model's minimiser lies inside its box."""

    def body(_, carry):
        x, done = carry
        x_new, inside = _model_step(problem, fam, phi, seed_key, horizon, x)
        return jnp.where(done, x, x_new), done | inside

    return jax.lax.fori_loop(0, _ROUNDS, body, (x, jnp.zeros((), bool)))[0]
