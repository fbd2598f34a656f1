"""The certificate's cuts: F's, the constraints' and X's own, each a value and a subgradient
at a point moved to x (``jaxbco.certificate``'s docstring says which are taken and why)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco.draws import round_data
from jaxbco.offline.round_sums import mean_over_rounds

KEEP = 8  # time-varying constraints: the most violated rounds' cuts kept


def probes(x, h, smooth: bool):
    """The points cuts are taken at: x, and x +- h e_i unless ``smooth``: (J, d)."""
    if smooth:
        return x[None]
    eye = h * jnp.eye(x.shape[0], dtype=x.dtype)
    return jnp.concatenate([x[None], x[None] + eye, x[None] - eye])


def cuts_at(fn, x, points):
    """Cuts (a, s) of a convex ``fn`` at ``points``, moved to x: a = fn(p) + s.(x - p)."""
    vals, grads = jax.vmap(jax.value_and_grad(fn))(points)
    return vals + jnp.sum(grads * (x[None] - points), axis=1), grads


def loss_cuts(problem, seed_key, horizon: int, x, extra):
    """(F(x), a (J,), S (J, d), F at ``extra`` (k,)): F's cuts at x (and its probes), and F's
    values at the points ``extra`` (k, d), from one pass over the rounds; F(x) NaN where F is
    NaN at any probe (f undefined there fails the certificate; a NaN gradient at a kink only
    drops its cut)."""
    h = probe_step(problem, x.dtype)
    points = probes(x, h, problem.loss.smooth)
    value = lambda p, th: problem.loss.value(p, th)

    def per_round(theta):
        vals, grads = jax.vmap(jax.value_and_grad(value), (0, None))(points, theta)
        return vals, grads, jax.vmap(value, (0, None))(extra, theta)

    vals, grads, at_extra = mean_over_rounds(problem, seed_key, horizon, per_round)
    F = jnp.where(jnp.any(jnp.isnan(vals)), jnp.nan, vals[0])
    return F, vals + jnp.sum(grads * (x[None] - points), axis=1), grads, at_extra


def loss_cut_at(problem, seed_key, horizon: int, x, p):
    """(a, s): F's cut at the point p moved to x, a = F(p) + s.(x - p), s = F's gradient at p
    (one pass over the rounds); a NaN where F is NaN at p."""
    value, grad = mean_over_rounds(
        problem, seed_key, horizon, lambda th: jax.value_and_grad(problem.loss.value)(p, th)
    )
    return value + jnp.dot(grad, x - p), grad


def probe_step(problem, dtype):
    return jnp.finfo(dtype).eps ** (2.0 / 3.0) * problem.domain.diameter().astype(dtype)


def round_cuts(problem, phi, x, h):
    """One round's constraint cuts at x: (c (m,), q (m, d)), and its violation scale |q|."""
    fam = problem.constraint
    if fam.kind in ("linear", "polyhedral"):
        A, b = fam.rows(phi)
        A = jnp.broadcast_to(A, (A.shape[0], x.shape[0])).astype(x.dtype)
        return A @ x - jnp.reshape(b, (-1,)).astype(x.dtype), A
    points = probes(x, h, not fam.probe_kinks)
    return cuts_at(lambda p: fam.value(p, phi), x, points)


def nan_values(problem, phi, x, h):
    """Whether g(., phi) is NaN at x or at any of its probes (the points ``round_cuts``
    takes cuts at): a NaN value is g undefined there, which fails the certificate; a NaN
    gradient at a kink with a finite value only drops its cut."""
    fam = problem.constraint
    if fam.kind in ("linear", "polyhedral"):
        A, b = fam.rows(phi)
        return jnp.any(jnp.isnan(A @ x.astype(A.dtype) - jnp.reshape(b, (-1,))))
    points = probes(x, h, not fam.probe_kinks)
    return jnp.any(jnp.isnan(jax.vmap(lambda p: fam.value(p, phi))(points)))


def constraint_cuts(problem, seed_key, horizon: int, x):
    """(violation, c (K,), q (K, d), t (K,)): max_t [g_t(x)]_+ / (|q_t| D), the constraints'
    cuts (the max(``KEEP``, d + 1) most violated rounds' for time-varying data) and the round
    each cut is of (1 for fixed data); the violation is inf where some g_t is NaN at x or a
    probe (``nan_values``)."""
    dtype = x.dtype
    D = problem.domain.diameter().astype(dtype)
    h = probe_step(problem, dtype)
    data = problem.constraint_data

    def scaled(c, q):  # per cut: value / (|q| D); a non-finite cut never ranks
        norm = norms(q)
        r = c / jnp.maximum(norm * D, jnp.finfo(dtype).tiny)
        return jnp.where(jnp.isfinite(r) & jnp.all(jnp.isfinite(q), axis=1), r, -jnp.inf)

    def violation(c, q):
        r = jnp.max(scaled(c, q))
        raw = jnp.max(jnp.where(jnp.isfinite(c), c, -jnp.inf))  # every cut non-finite: g itself
        return jnp.where(jnp.isfinite(r), jnp.maximum(r, 0.0), jnp.where(raw > 0, jnp.inf, 0.0))

    if data.constant:
        phi = data.every_round()
        c, q = round_cuts(problem, phi, x, h)
        nan = nan_values(problem, phi, x, h)
        return jnp.where(nan, jnp.inf, violation(c, q)), c, q, jnp.ones(c.shape, jnp.int32)

    one = jnp.ones((), jnp.int32)
    c0, q0 = jax.eval_shape(
        lambda: round_cuts(problem, round_data(problem, seed_key, one)[1], x, h)
    )
    keep = max(KEEP, x.shape[0] + 1) * c0.shape[0]

    def body(carry, t):
        worst, c_kept, q_kept, t_kept = carry
        phi = round_data(problem, seed_key, t)[1]
        c, q = round_cuts(problem, phi, x, h)
        nan = nan_values(problem, phi, x, h)
        worst = jnp.maximum(worst, jnp.where(nan, jnp.inf, violation(c, q)))
        c_all, q_all = jnp.concatenate([c_kept, c]), jnp.concatenate([q_kept, q])
        t_all = jnp.concatenate([t_kept, jnp.full(c.shape, t)])
        rank = jnp.concatenate([scaled(c_kept, q_kept), scaled(c, q)])
        _, idx = jax.lax.top_k(rank, keep)
        return (worst, c_all[idx], q_all[idx], t_all[idx]), None

    start = (
        jnp.zeros((), dtype),
        jnp.full((keep,), -jnp.inf, dtype),
        jnp.zeros((keep, x.shape[0]), dtype),
        jnp.ones((keep,), jnp.int32),
    )
    ts = jnp.arange(1, horizon + 1, dtype=jnp.int32)
    return jax.lax.scan(body, start, ts)[0]


def norms(rows):
    """Euclidean norm of each row, scaled first (a float32 g of size 1e20 squares past the
    range)."""
    m = jnp.max(jnp.abs(rows), axis=1)
    m = jnp.where(m > 0, m, 1.0)
    return m * jnp.sqrt(jnp.sum((rows / m[:, None]) ** 2, axis=1))


def set_cuts(domain, x, h):
    """X's own cuts, X's normal cone at x: its affine ``membership_pieces`` where it declares
    them, else its ``membership`` function at x, and at x +- h e_i unless it is smooth."""
    pieces = domain.membership_pieces(x)
    if pieces is not None:
        return pieces, jax.jacfwd(domain.membership_pieces)(x)
    return cuts_at(domain.membership, x, probes(x, h, domain.smooth_membership))
