"""The one-cut duality bound: a certificate of x from F's and g's gradients at x alone.

For a subgradient s of F at x and a subgradient q of one convex constraint g at x, c = g(x),
every feasible y (y ∈ X, g(y) ≤ 0) and every μ ≥ 0 give

    F(y) ≥ F(y) + μ g(y) ≥ F(x) + s·(y − x) + μ (c + q·(y − x)),

so, minimising over y ∈ X (σ_X the support function of X),

    F(x) − F* ≤ φ(μ) := σ_X(−v) + v·x − μ c,    v = s + μ q,

a rigorous bound whatever μ; φ is convex in μ.  First (``search`` False) at μ = 0 and at
the KKT multiplier read off the face of X holding x, μ = max(0, −⟨T s, T q⟩ / |T q|²), T the
projection onto its directions (``AbstractSet.face``; φ is flat at its minimiser, so next to
an exact x this one guess is tight to second order); then (``search`` True, where that
fails) minimised over μ ≥ 0 by a log-spaced scan and a golden-section search.  At a KKT
point of a smooth problem whose only constraint besides X is g, φ(μ*) = 0.
``jaxbco.certificate``'s many cuts and least squares handle the rest (kinks, many
constraints); this bound needs no least squares, so ``jaxbco.comparator`` asks it first and
skips the second prox path and the full certificate where it already certifies x.  Reported
like the full certificate (``jaxbco.certificate``): relative to F's variation over the
feasible region (``jaxbco.offline.variation``), with X's and g's violations.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco.offline import curved, variation
from jaxbco.offline.cuts import norms
from jaxbco.offline.round_sums import mean_over_rounds

_SCAN = tuple(range(-36, 12))  # mu = |s| 2^k: the scan brackets phi's minimiser (no JAX
# array at import: importing jaxbco must not start the XLA backend)
_GOLDEN = 60  # golden-section steps in the bracket: its width falls by 0.618^60 ~ 3e-13


def _norm(v):
    return norms(v[None])[0]


def bound(domain, x, F, s, c, q, V, search: bool = True, moduli=(0.0, 0.0)):
    """(set_violation, constraint_violation, gap) of x, each relative (module docstring).

    Args:
        domain: the set X (its ``support``, ``project`` and ``face``).
        x: the point, (d,).
        F: F(x), a scalar; s: a subgradient of F at x, (d,).
        c: g(x), a scalar; q: a subgradient of g at x, (d,).
        V: F's variation over the feasible region (``jaxbco.offline.variation.spread``): the
            gap's scale.
        search: minimise φ by a scan and a golden-section search (static); False: φ at 0 and
            at the multiplier read off x's face only (a smaller program).
        moduli: (σ, m), the strong-convexity moduli of F's cut and g's: φ also takes the
            curved cuts' bound (``jaxbco.offline.curved``) where σ + μ m / |q| > 0.

    Returns:
        Three scalars: |x − Π_X(x)| / D, [c]₊ / (|q| D) and min over μ ≥ 0 of φ(μ) relative to
        F's variation over the feasible region (``variation.relative_gap``); inf where an
        input is not finite.
    """
    dtype = x.dtype
    tiny = jnp.finfo(dtype).tiny
    D = domain.diameter().astype(dtype)
    nq, ns = _norm(q), _norm(s)
    ok = jnp.isfinite(F) & jnp.all(jnp.isfinite(s)) & jnp.isfinite(c) & jnp.all(jnp.isfinite(q))
    ok = ok & jnp.all(jnp.isfinite(x)) & (nq > 0)
    unit = jnp.where(nq > 0, nq, 1.0)
    qn, cn = jnp.where(ok, q / unit, 0.0), jnp.where(ok, c / unit, 0.0)
    s0 = jnp.where(ok, s, 0.0)
    x0 = jnp.where(ok, x, 0.0)

    sigma, m = moduli
    m_unit = m / unit

    def phi(mu):
        v = s0 + mu * qn
        flat = domain.support(-v) + jnp.dot(v, x0)
        return jnp.minimum(flat, curved.bound(domain, x0, v, sigma + mu * m_unit)) - mu * cn

    best = _searched(phi, ns, dtype) if search else _guessed(phi, domain, x0, s0, qn, D)
    gap = variation.relative_gap(best, F, V)
    set_violation = _norm(x - domain.project(x)) / D
    violation = jnp.maximum(c, 0.0) / jnp.maximum(nq * D, tiny)
    inf = jnp.asarray(jnp.inf, dtype)
    return (
        jnp.where(jnp.all(jnp.isfinite(x)), set_violation, inf),
        jnp.where(ok, violation, inf),
        jnp.where(ok, gap, inf),
    )


def _guessed(phi, domain, x, s, q, D):
    """min(φ(0), φ(μ)) at the multiplier μ read off x's face (module docstring)."""
    tol = jnp.sqrt(jnp.finfo(x.dtype).eps) * D
    ts, tq = domain.face(x, s, tol), domain.face(x, q, tol)
    nt = jnp.dot(tq, tq)
    mu = jnp.maximum(-jnp.dot(ts, tq) / jnp.where(nt > 0, nt, 1.0), 0.0)
    return jnp.minimum(phi(jnp.zeros_like(mu)), phi(mu))


def _searched(phi, ns, dtype):
    """min over μ ≥ 0 of φ: a log-spaced scan, then a golden-section search in its bracket."""
    mus = jnp.concatenate([jnp.zeros((1,), dtype), ns * (2.0 ** jnp.asarray(_SCAN, dtype))])
    vals = jax.vmap(phi)(mus)
    j = jnp.argmin(vals)
    lo, hi = mus[jnp.maximum(j - 1, 0)], mus[jnp.minimum(j + 1, mus.shape[0] - 1)]
    r = jnp.asarray((5.0**0.5 - 1.0) / 2.0, dtype)

    def golden(_, ab):
        a, b = ab
        m1, m2 = b - r * (b - a), a + r * (b - a)
        left = phi(m1) <= phi(m2)
        return jnp.where(left, a, m1), jnp.where(left, m2, b)

    a, b = jax.lax.fori_loop(0, _GOLDEN, golden, (lo, hi))
    return jnp.minimum(vals[j], phi(0.5 * (a + b)))


def loss_cut(problem, seed_key, horizon: int, x, extra):
    """(F(x), a subgradient of F at x, F at the points ``extra`` (k, d)): one pass over the
    seed's rounds (autodiff's gradient of each f_t; at a kink of a convex jnp function, an
    element of its subdifferential)."""
    value = problem.loss.value

    def per_round(theta):
        F, s = jax.value_and_grad(value)(x, theta)
        return F, s, jax.vmap(value, (0, None))(extra, theta)

    return mean_over_rounds(problem, seed_key, horizon, per_round)


def constraint_cut(problem, x):
    """(g(x), its gradient) of a fixed constraint."""
    phi = problem.constraint_data.every_round()
    return jax.value_and_grad(lambda z: problem.constraint.value(z, phi))(x)
