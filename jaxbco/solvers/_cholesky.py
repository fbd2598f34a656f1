"""Triangular solves with many small Cholesky factors, element-wise across lanes.

L L^T x = b for L (K, d, d) lower triangular (``jnp.linalg.cholesky``, LAPACK's potrf per
lane) and b (K, d): forward then back substitution, one row per step of a ``fori_loop``, every
operation element-wise or a reduction over a lane's own row (a lane's numbers do not depend on
the lanes beside it).  Not ``jax.scipy.linalg.cho_solve``: XLA's CPU runtime deadlocked (every
thread idle, the run never returning) with its batched triangular solve inside the interior
point's ``while_loop`` (on a portfolio problem).  Elsewhere (GPUs) the row loop is the wrong
shape: 2d steps of a ``fori_loop``, each a few kernel launches and a loop test read back by the
host, for every Newton step of every round (far too slow on the long portfolio runs); there
the library's batched triangular solves run instead (``jax.lax.platform_dependent``), the same
two solves.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def solve(L, b):
    """x with L L^T x = b, L (K, d, d) lower triangular, b (K, d): the row loop on a CPU, the
    library's triangular solves elsewhere."""
    return jax.lax.platform_dependent(L, b, cpu=solve_rows, default=solve_library)


def solve_library(L, b):
    """``solve`` by two batched triangular solves (``jax.lax.linalg.triangular_solve``)."""
    tri = jax.lax.linalg.triangular_solve
    z = tri(L, b[..., None], left_side=True, lower=True)
    return tri(L, z, left_side=True, lower=True, transpose_a=True)[..., 0]


def solve_rows(L, b):
    """``solve`` one row per step of a ``fori_loop`` (element-wise across lanes)."""
    d = b.shape[-1]

    def forward(j, z):  # L z = b
        row = jax.lax.dynamic_index_in_dim(L, j, axis=1, keepdims=False)
        s = jax.lax.dynamic_index_in_dim(b, j, axis=1, keepdims=False) - jnp.sum(row * z, -1)
        piv = jax.lax.dynamic_index_in_dim(row, j, axis=1, keepdims=False)
        return jax.lax.dynamic_update_index_in_dim(z, s / piv, j, axis=1)

    def backward(i, x):  # L^T x = z
        j = d - 1 - i
        col = jax.lax.dynamic_index_in_dim(L, j, axis=2, keepdims=False)
        s = jax.lax.dynamic_index_in_dim(z, j, axis=1, keepdims=False) - jnp.sum(col * x, -1)
        piv = jax.lax.dynamic_index_in_dim(col, j, axis=1, keepdims=False)
        return jax.lax.dynamic_update_index_in_dim(x, s / piv, j, axis=1)

    z = jax.lax.fori_loop(0, d, forward, jnp.zeros_like(b))
    return jax.lax.fori_loop(0, d, backward, jnp.zeros_like(b))
