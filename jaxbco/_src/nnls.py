"""Non-negative least squares with free and barred weights: the certificate's choice of cut
weights (``jaxbco.certificate``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def solve(M, b, free, allowed, eps):
    """argmin ||M z - b|| over z with z_j >= 0 where not ``free``, z_j = 0 where not
    ``allowed``: Lawson & Hanson's active-set method (1974), at most 2 n + 8 steps.  Each
    least-squares solve drops singular values below eps^0.6 of the largest (near-parallel
    cuts, probes h apart, make M nearly rank-deficient: the min-norm weights, never huge ones)."""
    n = M.shape[1]
    tiny = jnp.finfo(M.dtype).tiny

    def lsq(P):
        return jnp.where(P, jnp.linalg.lstsq(M * P[None], b, rcond=eps**0.6)[0], 0.0)

    def cond(s):
        z, P, k, done = s
        return (k < 2 * n + 8) & ~done

    def body(s):
        z, P, k, _ = s
        w = M.T @ (b - M @ z)
        cand = allowed & ~P & (w > 64 * eps * jnp.max(jnp.abs(w)) + tiny)
        done = ~jnp.any(cand)
        P = jnp.where(done, P, P.at[jnp.argmax(jnp.where(cand, w, -jnp.inf))].set(True))
        trial = lsq(P)
        # a constrained weight turned non-positive: step back to the boundary, drop it
        bad = P & ~free & (trial <= 0)
        ratio = jnp.where(bad, z / jnp.maximum(z - trial, tiny), jnp.inf)
        t = jnp.minimum(jnp.min(ratio), 1.0)
        z_new = z + t * (trial - z)
        P = P & (free | (z_new > tiny)) & ~(bad & (ratio <= t))
        return jnp.where(done, z, jnp.where(free, z_new, jnp.maximum(z_new, 0.0))), P, k + 1, done

    P0 = free
    z0 = lsq(P0)
    z, _, _, _ = jax.lax.while_loop(
        cond, body, (z0, P0, jnp.zeros((), jnp.int32), jnp.zeros((), bool))
    )
    return z
