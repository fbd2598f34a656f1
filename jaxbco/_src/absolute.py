"""x* of the absolute loss exactly: F(x) = (1/T) ∑ₜ ‖x − θₜ‖₁ = ∑ᵢ φᵢ(xᵢ) is separable and
piecewise linear, each φᵢ with breakpoints θₜ,ᵢ.

From a point x̂ (the Huber smoothing's FISTA x*), two passes over the rounds give, for each
coordinate, the breakpoint bᵢ nearest x̂ᵢ, φᵢ(bᵢ), the slopes sᵢ⁻ and sᵢ⁺ of φᵢ left and right of
bᵢ (counts of θₜ,ᵢ below, at and above bᵢ, over T) and the neighbouring breakpoints lᵢ < bᵢ < uᵢ.
On lᵢ ≤ xᵢ ≤ uᵢ, F equals the model ∑ᵢ max(φᵢ(bᵢ) + sᵢ⁻(xᵢ − bᵢ), φᵢ(bᵢ) + sᵢ⁺(xᵢ − bᵢ)), whose
minimum over X ∩ C and the box [l, u] is a linear programme in (x, e) (eᵢ above both pieces):
the log-barrier method solves it (``jaxbco._src.barrier``; C's rows as rows, a ball or
ellipsoid g as one more slack).  Where its answer lies inside [l, u] it is x*: a local
minimum of the convex F over X ∩ C.  Where it meets a bound of [l, u], the model is rebuilt
there, ``_ROUNDS`` times in all; the certificate judges the answer.

Applies to a loss declaring ``l1_breakpoints`` (``Absolute``) with a constraint of rows or a
quadratic form on a set with ``barrier_slacks``, one run at a time (``applies``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco import constraints as C
from jaxbco._src import barrier
from jaxbco.draws import LOSS, sample

_ROUNDS = 4


def applies(problem, fam, x) -> bool:
    """Whether ``polish`` takes this problem (decided from declarations and shapes)."""
    if not problem.loss.l1_breakpoints or x.ndim != 1:
        return False
    if problem.domain.barrier_slacks(x) is None:
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
    """w -> (a, s): a cut of F moved to x (a + s.(y - x) <= F(y) for every y), s the
    subgradient maximising <s, w> over F's box subdifferential at x's breakpoints: sᵢ = sᵢ⁺
    where wᵢ > 0, sᵢ⁻ where wᵢ < 0, for coordinates within √ε D of their breakpoint; the slope
    of x's own piece for the others.  Each sᵢ is a piece of φᵢ, whose linear extension lies
    below the convex φᵢ, so the cut holds globally; at x it is below F by
    ∑ |sᵢ⁺ − sᵢ⁻| |xᵢ − bᵢ| over the kinked coordinates.  The x* certificate steers w
    (``jaxbco.certificate``): the probes at x ± h eᵢ do not span the box's corners, nor reach
    a kink more than h away."""
    b, phi_b, s_lo, s_hi, _, _ = breakpoints(problem, seed_key, horizon, x)
    D = problem.domain.diameter().astype(x.dtype)
    near = jnp.abs(x - b) <= jnp.sqrt(jnp.finfo(x.dtype).eps) * D
    own = jnp.where(x >= b, s_hi, s_lo)

    def cut(w):
        s = jnp.where(near, jnp.where(w > 0, s_hi, jnp.where(w < 0, s_lo, own)), own)
        return jnp.sum(phi_b + s * (x - b)), s

    return cut


def _model_step(problem, fam, phi, seed_key, horizon, x):
    """The minimiser of the local model around x (module docstring), and whether it lies
    strictly inside the model's box."""
    domain = problem.domain
    dtype, d = x.dtype, x.shape[0]
    b, phi_b, s_lo, s_hi, lo, hi = breakpoints(problem, seed_key, horizon, x)
    c, _ = domain.inscribed_ball()
    D = domain.diameter().astype(dtype)
    far = jnp.max(jnp.abs(c)) + 4 * D  # no breakpoint on a side: a bound outside X
    lo_f, hi_f = jnp.where(jnp.isfinite(lo), lo, -far), jnp.where(jnp.isfinite(hi), hi, far)
    eye = jnp.eye(d, dtype=dtype)
    rows_x, rhs_x = jnp.concatenate([eye, -eye]), jnp.concatenate([hi_f, -lo_f])
    curved = barrier._none
    if fam.kind in ("linear", "polyhedral"):
        A, r = fam.rows(phi)
        rows_x = jnp.concatenate([rows_x, A.astype(dtype)])
        rhs_x = jnp.concatenate([rhs_x, jnp.reshape(r, (-1,)).astype(dtype)])
    else:
        curved = lambda z: -fam.value(z, phi)[None]
    x0, found = barrier.phase_one(domain, rows_x, rhs_x, c.astype(dtype), None, curved)
    # e_i >= phi_b + s (x_i - b): rows [diag(s), -I] (x, e) <= s b - phi_b
    pieces = jnp.maximum(s_lo * (x0 - b), s_hi * (x0 - b)) + phi_b
    z0 = jnp.concatenate([x0, pieces + 1.0 + jnp.abs(pieces)])
    A = jnp.concatenate(
        [
            jnp.concatenate([jnp.diag(s_lo), -eye], axis=1),
            jnp.concatenate([jnp.diag(s_hi), -eye], axis=1),
            jnp.concatenate([rows_x, jnp.zeros((rows_x.shape[0], d), dtype)], axis=1),
        ]
    )
    rhs = jnp.concatenate([s_lo * b - phi_b, s_hi * b - phi_b, rhs_x])
    slacks = lambda z: jnp.concatenate([domain.barrier_slacks(z[:d]), curved(z[:d])])
    P = jax.scipy.linalg.block_diag(domain.hull_projector(dtype), eye)
    lin = jnp.concatenate([jnp.zeros(d, dtype), jnp.ones(d, dtype)])
    scale = D * jnp.sqrt(jnp.asarray(d, dtype)) + jnp.sum(phi_b)
    z = barrier.central_path(z0, found, lin, jnp.zeros(2 * d, dtype), A, rhs, slacks, P, scale)
    x_new = z[:d]
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
