"""How much F varies over the feasible region: the scale the comparator's duality gap is judged
against (``jaxbco.certificate``), so that its verdict is scale-free in the right quantity.

The gap bounds F(x) − F* in F's units.  Judged relative to |F(x)| it passes anything when F
carries a large constant; relative to |s| D (s a subgradient, D X's diameter) it passes anything
when X is much larger than the feasible region K = X ∩ {g_t ≤ 0 for all t}.  The right unit is
F's variation over K.  It is estimated from below by walking from x along ``N_DIRECTIONS``
directions of X's hull (toward X's centre, against the most active constraint's gradient, and
both ways along one fixed direction), each first turned into the cone of the cuts binding at
x (``inward``: a vertex of many rows blocks a fixed direction), to the farthest feasible point
of the grid x + D 2^−k u (k = 0..n, n the dtype's mantissa bits): K is convex, so along a ray
it is an interval, and these points lie in K.  Then

    V = max − min of F over x and the y_u   (at an optimum, max_u F(y_u) − F(x)),

or, where larger, s·(y − x) at the farthest feasible grid point y along F's subgradient s
and toward X's support point in s, turned inward (``ascent``: at most F(y) − F(x) by
convexity, no value of F needed),

    relative gap = (max(gap, 0) + ROUNDOFF ε |F(x)|) / V.

The second term is F's own round-off: where a constant dominates F so that the dtype cannot
resolve a gap of ``tolerance`` V, the relative gap exceeds the tolerance and x* is reported as
not certified (solve in float64), never as certified.  A constant added to f, or X grown
around a fixed K, leaves V and so the verdict unchanged.  V underestimates F's range (a few
directions): the verdict errs on the strict side.

Example:
    >>> import jax.numpy as jnp
    >>> from jaxbco import sets
    >>> from jaxbco.offline import variation
    >>> box = sets.Box(-jnp.ones(2), jnp.ones(2))
    >>> c, q = jnp.array([0.0]), jnp.array([[1.0, 0.0]])  # the face x_1 <= 1 binds
    >>> U = variation.directions(box, jnp.array([1.0, 0.0]), c, q)
    >>> bool(jnp.all(U[:, 0] < 0))  # every direction enters the box
    True
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco.draws import CONSTRAINT, sample
from jaxbco.offline import curved
from jaxbco.offline.cuts import constraint_cuts, loss_cuts, norms, probe_step, set_cuts

N_DIRECTIONS = 4
SWEEPS = 16  # cyclic projections onto the near-active cuts (``inward``)
MARGIN = 0.05  # how far a direction enters each near-active cut (per unit length)
ROUNDOFF = 4  # F's values carry round-off of about this many eps |F|


def directions(domain, x, c, q, extra=None):
    """(``N_DIRECTIONS``, d) unit directions from x into the feasible region: toward X's
    centre, against the most active cut's normal, and both ways along a fixed direction with no
    coordinate privileged; each then turned into the near-active cuts' cone (``inward``) and
    into X's hull; a zero row where one vanishes.

    Args:
        domain: the set X.
        x: the point, (d,).
        c, q: cuts at x, (K,) and (K, d): the constraints' and X's own (``cuts.set_cuts``).
        extra: None, or (k, d) directions turned inward instead of the four.
    """
    dtype, d = x.dtype, x.shape[0]
    centre = domain.inscribed_ball()[0].astype(dtype)
    w = jnp.cos(2.399963 * jnp.arange(1, d + 1, dtype=dtype))  # golden angle
    raw = jnp.stack([centre - x, -most_active(c, q), w, -w]) if extra is None else extra
    raw = jnp.where(jnp.isfinite(raw), raw, 0.0)
    raw = jax.vmap(lambda u: inward(u, c, q, domain.diameter().astype(dtype)))(_unit(raw))
    return _unit(raw @ domain.hull_projector(dtype).T)


def _unit(rows):
    n = norms(rows)
    return jnp.where(n[:, None] > 0, rows / jnp.where(n > 0, n, 1.0)[:, None], 0.0)


def inward(u, c, q, D):
    """u (a unit vector) moved by ``SWEEPS`` cyclic projections onto the half-spaces
    n_k.d <= -``MARGIN`` of the near-active cuts (c_k >= -sqrt(eps) |q_k| D; n_k = q_k / |q_k|):
    a direction that enters every cut binding at x, curved ones too (a vertex of many rows
    blocks a fixed direction)."""
    eps = jnp.finfo(u.dtype).eps
    n = norms(q)
    ok = jnp.isfinite(c) & jnp.all(jnp.isfinite(q), axis=1) & (n > 0)
    unit = jnp.where(ok[:, None], q / jnp.where(ok, n, 1.0)[:, None], 0.0)
    near = ok & (c >= -(eps**0.5) * n * D)

    def project(k, dirn):
        excess = jnp.dot(unit[k], dirn) + MARGIN
        return jnp.where(near[k] & (excess > 0), dirn - excess * unit[k], dirn)

    sweep = lambda _, dirn: jax.lax.fori_loop(0, c.shape[0], project, dirn)
    return jax.lax.fori_loop(0, SWEEPS, sweep, u)


def grid(domain, x, U):
    """(N, n, d): x + D 2^−k u for every direction u and k = 0..n, farthest first."""
    dtype = x.dtype
    n = jnp.finfo(dtype).nmant + 2
    steps = domain.diameter().astype(dtype) * 2.0 ** -jnp.arange(n, dtype=dtype)
    return x[None, None] + steps[None, :, None] * U[:, None, :]


def _in_X(domain, x, Y):
    """Whether each point of Y (N, n, d) is in X, as far as x is (x* may lie round-off
    outside it)."""
    dist = lambda y: norms((y - domain.project(y))[None])[0]
    eps = jnp.finfo(x.dtype).eps
    slack = dist(x) + 4 * eps * domain.diameter().astype(x.dtype)
    flat = Y.reshape(-1, Y.shape[-1])
    return (jax.vmap(dist)(flat) <= slack).reshape(Y.shape[:2])


def max_constraint(problem, seed_key, horizon: int, points):
    """max over t of g_t at each of ``points`` (k, d): one evaluation for fixed data, else a
    pass over the seed's rounds (the constraint data regenerated)."""
    fam, data = problem.constraint, problem.constraint_data
    at = lambda phi: jax.vmap(lambda p: fam.value(p, phi))(points)
    if data.constant:
        return at(data.every_round())

    def body(worst, t):
        return jnp.maximum(worst, at(sample(data, seed_key, t, CONSTRAINT))), None

    start = jnp.full(points.shape[:1], -jnp.inf, points.dtype)
    ts = jnp.arange(1, horizon + 1, dtype=jnp.int32)
    return jax.lax.scan(body, start, ts)[0]


def points(problem, seed_key, horizon: int, x, c, q):
    """(``N_DIRECTIONS``, d): ``farthest`` with the problem's max_t g_t (``max_constraint``)."""
    g_max = lambda P: max_constraint(problem, seed_key, horizon, P)
    return farthest(problem.domain, x, directions(problem.domain, x, c, q), g_max)


def ascent(problem, seed_key, horizon: int, x, c, q, s, sigma):
    """max over two rays of s.(y − x) + (σ/2)|y − x|², y the farthest feasible grid point
    along s, and toward X's point farthest along s (the support point, ∇σ_X(s)), each turned
    inward; σ F's modulus about x (0 where unknown).  By convexity at most F(y) − F(x): a
    lower bound on F's variation from F's cut alone, with no value of F, in the directions
    where F rises fastest, which the four directions may miss; 0 where s is not finite."""
    ok = jnp.all(jnp.isfinite(s))
    s = jnp.where(ok, s, 0.0)
    top = jax.grad(problem.domain.support)(s)
    U = directions(problem.domain, x, c, q, jnp.stack([s, top - x]))
    g_max = lambda P: max_constraint(problem, seed_key, horizon, P)
    steps = farthest(problem.domain, x, U, g_max) - x[None]
    rise = steps @ s + 0.5 * sigma * jnp.sum(steps * steps, axis=1)
    return jnp.where(ok, jnp.max(rise), 0.0)


def farthest(domain, x, U, g_max):
    """(k, d): along each direction of ``U`` (k, d), the farthest grid point (``grid``) in X
    with ``g_max`` (points (n, d) -> (n,), the constraints' maximum) at most
    max(g_max(x), 0); x itself where none is."""
    Y = grid(domain, x, U)
    d = x.shape[0]
    g = g_max(jnp.concatenate([x[None], Y.reshape(-1, d)]))
    ok = _in_X(domain, x, Y) & (g[1:].reshape(Y.shape[:2]) <= jnp.maximum(g[0], 0.0))
    first = jnp.argmax(ok, axis=1)  # the farthest feasible level (K is convex along a ray)
    found = jnp.any(ok, axis=1)
    far = jnp.take_along_axis(Y, first[:, None, None], axis=1)[:, 0]
    return jnp.where(found[:, None], far, x[None])


def cuts_at_x(problem, seed_key, horizon: int, x):
    """(c, q): the constraints' cuts (``cuts.constraint_cuts``) and X's (``cuts.set_cuts``)."""
    _, c, q, _ = constraint_cuts(problem, seed_key, horizon, x)
    cx, qx = set_cuts(problem.domain, x, probe_step(problem, x.dtype))
    return jnp.concatenate([c, cx]), jnp.concatenate([q, qx])


def most_active(c, q):
    """The gradient of the cut with the largest c / |q| (the most violated or least slack)."""
    rank = c / jnp.maximum(norms(q), jnp.finfo(q.dtype).tiny)
    return q[jnp.argmax(jnp.where(jnp.isfinite(rank), rank, -jnp.inf))]


def spread(F, F_points, rise):
    """V: the range of F over x and the points y_u (max − min of F and ``F_points``), or the
    rise along F's subgradient (``ascent``) where that is larger."""
    return jnp.maximum(jnp.maximum(jnp.max(F_points), F) - jnp.minimum(jnp.min(F_points), F), rise)


def measured(problem, seed_key, horizon: int, x):
    """V at x as the full certificate measures it (``jaxbco.certificate``), F from a pass over
    the seed's rounds."""
    c, q = cuts_at_x(problem, seed_key, horizon, x)
    Y = points(problem, seed_key, horizon, x, c, q)
    F, _, S, F_points = loss_cuts(problem, seed_key, horizon, x, Y)
    sigma = curved.loss_modulus(problem)
    return spread(F, F_points, ascent(problem, seed_key, horizon, x, c, q, S[0], sigma))


def relative_gap(gap, F, V):
    """(max(gap, 0) + ``ROUNDOFF`` ε |F|) / V, V from ``spread`` (module docstring); inf where
    F or V is not finite (F undefined at a feasible point)."""
    dtype = jnp.result_type(F)
    eps, tiny = jnp.finfo(dtype).eps, jnp.finfo(dtype).tiny
    rel = (jnp.maximum(gap, 0.0) + ROUNDOFF * eps * jnp.abs(F)) / jnp.maximum(V, tiny)
    return jnp.where(jnp.isfinite(F) & jnp.isfinite(V), rel, jnp.inf)
