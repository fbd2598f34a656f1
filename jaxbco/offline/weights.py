"""The comparator's certificate's cut weights (``jaxbco.certificate``'s docstring: how and
why): omega over F's cuts and mu over the constraints' from the KKT conditions at x by
non-negative least squares (``weights``), and the cuts of kinked functions steered to where the
residual needs them (``steered_cuts``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco._src import nnls
from jaxbco.offline.cuts import cuts_at, norms
from jaxbco.solvers.gap import tolerance


def unit(c, q):
    """Cuts scaled to unit normals (a g given as 1e-20 or 1e20 times a well-scaled one has
    the same cuts; least squares would drop its columns beside F's)."""
    n = norms(q)
    n = jnp.where(n > 0, n, 1.0)
    return c / n, q / n[:, None]


def weights(domain, x, F, a, S, c, q):
    """(omega, mu, v, r): the cut weights chosen from the KKT conditions at x (module
    docstring), v = S^T omega + Q^T mu and its residual r = P v off X's normal cone."""
    dtype = x.dtype
    eps = jnp.finfo(dtype).eps
    D = domain.diameter().astype(dtype)
    okF = jnp.isfinite(a) & jnp.all(jnp.isfinite(S), axis=1)
    a, S = jnp.where(okF, a, F), jnp.where(okF[:, None], S, 0.0)
    okg = jnp.isfinite(c) & jnp.all(jnp.isfinite(q), axis=1)
    c, q = unit(jnp.where(okg, c, 0.0), jnp.where(okg[:, None], q, 0.0))
    active = okg & (c >= -(eps**0.5) * D)

    # rows: P v = 0; rho (sum omega - 1) = 0 with rho = |s| (omega in the simplex after
    # omega and mu are divided by its sum below: the gap is homogeneous in them, so a short sum
    # costs nothing; a heavier rho made F's cuts near-parallel columns, their differences
    # ~2/T in float32 below lstsq's cut-off); the gap's other terms omega_j (F - a_j) / D,
    # mu_k c_k / D = 0 (so weight goes to the tightest of parallel cuts).  omega >= 0 and
    # mu >= 0 both: free weights on near-identical probe cuts would cancel in huge pairs.
    J, K = S.shape[0], c.shape[0]
    P = domain.hull_projector(dtype)
    rho = jnp.maximum(jnp.max(norms(S)), jnp.finfo(dtype).tiny)
    wF, wg = (F - a) / D, c / D
    M = jnp.concatenate(
        [
            jnp.concatenate([P @ S.T, P @ q.T], axis=1),
            jnp.concatenate([rho * jnp.ones((1, J), dtype), jnp.zeros((1, K), dtype)], axis=1),
            jnp.concatenate([jnp.diag(wF), jnp.zeros((J, K), dtype)], axis=1),
            jnp.concatenate([jnp.zeros((K, J), dtype), jnp.diag(wg)], axis=1),
        ]
    )
    rhs = jnp.concatenate([jnp.zeros(S.shape[1], dtype), rho[None], jnp.zeros(J + K, dtype)])
    none = jnp.zeros(J + K, bool)
    z = nnls.solve(M, rhs, none, jnp.concatenate([okF, active]), eps)
    omega, mu = jnp.maximum(z[:J], 0.0), jnp.maximum(z[J:], 0.0)
    total = jnp.sum(omega)
    scale = jnp.maximum(total, jnp.finfo(dtype).tiny)
    omega = jnp.where(total > 0, omega / scale, jnp.eye(J, dtype=dtype)[0])
    mu = jnp.where(total > 0, mu / scale, mu)
    v = S.T @ omega + q.T @ mu
    return omega, mu, v, P @ v


def steered_cuts(fns, corner, domain, x, F, a, S, c, q, h, rounds: int):
    """Cuts of kinked functions added where they help most, ``rounds`` times, each from the
    weights of the cuts so far (``weights``) and the direction w = -P v / |P v| they leave
    unexplained: of ``fns`` (a fixed g, X's membership), the gradient at x + h w, their
    subgradient at x maximising <s, w> (its directional derivative's argmax), and in odd
    rounds at x + H w, H = tolerance D / 16 (an ε-subgradient: a kink within H of x); of F, where
    ``corner`` (target, p) -> (a, s) is given, the cut at p (a user's kinked loss: F's
    gradient there, one pass over the rounds), or (``Absolute``) the cut whose subgradient is
    nearest the target, F's part of v moved along w, a corner of its box subdifferential:
    cuts the probes at x +- h e_i do not span.  Columns of the minimum-norm problem over the subdifferentials
    (Wolfe 1975); F's and the constraints' are steered together (an L1 ball's face and the
    loss's kinks at one x* need both)."""
    dtype, k, d = x.dtype, len(fns), x.shape[0]
    nl = 0 if corner is None else 1
    c = jnp.concatenate([c, jnp.full((rounds * k,), -jnp.inf, dtype)])
    q = jnp.concatenate([q, jnp.zeros((rounds * k, d), dtype)])
    a = jnp.concatenate([a, jnp.full((rounds * nl,), jnp.nan, dtype)])
    S = jnp.concatenate([S, jnp.zeros((rounds * nl, d), dtype)])
    start, start_F = c.shape[0] - rounds * k, a.shape[0] - rounds * nl
    # odd rounds step farther: a kink ~1e-10 beside x (an LP's x* on an L1 ball's face) is
    # crossed, at a cost of 2 far |q| per unit cut, tolerance / 8 of the gap's scale
    far = jnp.maximum(h, tolerance(dtype) / 16 * domain.diameter().astype(dtype))

    def body(i, so_far):
        a, S, c, q = so_far
        omega, _, _, r = weights(domain, x, F, a, S, c, q)
        n = jnp.sqrt(jnp.sum(r * r))
        p = x - jnp.where(i % 2 == 0, h, far) * r / jnp.where(n > 0, n, 1.0)
        for j, fn in enumerate(fns):
            ci, qi = cuts_at(fn, x, p[None])
            c = c.at[start + k * i + j].set(jnp.where(n > 0, ci[0], -jnp.inf))
            q = q.at[start + k * i + j].set(jnp.where(n > 0, qi[0], 0.0))
        if corner is not None:
            ok = jnp.isfinite(a)[:, None] & jnp.all(jnp.isfinite(S), axis=1, keepdims=True)
            # F's cut steps h, H, 8 H in turn: a float32 x* may lie ~1e-4 D off the kink of a
            # user's piecewise-linear F (a cut at p is valid however far: it only costs)
            step = jnp.where(i % 3 == 0, h, jnp.where(i % 3 == 1, far, 8 * far))
            p_F = x - step * r / jnp.where(n > 0, n, 1.0)
            ai, si = corner(jnp.where(ok, S, 0.0).T @ omega - r, p_F)
            a = a.at[start_F + i].set(jnp.where(n > 0, ai, jnp.nan))
            S = S.at[start_F + i].set(si)
        return a, S, c, q

    return jax.lax.fori_loop(0, rounds, body, (a, S, c, q))
