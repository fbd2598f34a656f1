"""Naive solver: K projected-subgradient steps on P with step 1/(alpha k).

Kept for comparison: it is what the design first asked for, and it is inaccurate when
beta = lam_t gamma_t >> alpha_t (the penalty's subgradient jumps by beta ||grad g|| across the
boundary and 1/(alpha k) steps overshoot it).  Returns the last iterate.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco.solvers._base import AbstractProxSolver, shrunk_projector


class Subgradient(AbstractProxSolver):
    """x_{k+1} = Pi_S(x_k - (1/(alpha k)) [alpha (x_k - y) + beta 1{g(x_k) > 0} grad g(x_k)]), x_1 = x_t."""

    blocks = True
    kernel = True
    steps: int = eqx.field(static=True, default=20)
    # Steps per iteration of the compiled loop (0: all K, straight-line code).  Measured
    # (benchmarks/NOTES.md): on an NVIDIA H100, K = 20 fully unrolled ran 2.4x faster at
    # 1e4 seeds x 1e4 rounds but compiled 3.1-4.4 s instead of 2.3 s (23-28 s at 4096 and
    # 16384 seeds x 2000 rounds); on the 2-core CPU it ran 8x slower.  So rolled by default.
    unroll: int = eqx.field(static=True, default=1)

    def __check_init__(self):
        if not (isinstance(self.steps, (int, np.integer)) and self.steps >= 1):
            raise ValueError(f"steps must be an integer >= 1; got {self.steps!r}")
        if not (isinstance(self.unroll, (int, np.integer)) and self.unroll >= 0):
            raise ValueError(f"unroll must be an integer >= 0 (0: all steps); got {self.unroll!r}")

    def solve(self, domain, xi, constraint, phi, x0, y, alpha, beta):
        proj = shrunk_projector(domain, xi)
        def body(k, x):
            # value_and_grad of g, written as a VJP with cotangent 1 per run, so that it also
            # takes a seeds-minor block (d, ..., seeds) whose g is one value per run.
            gval, vjp = jax.vjp(lambda z: constraint.value(z, phi), x)
            (ggrad,) = vjp(jnp.ones_like(gval))
            sub = alpha * (x - y) + jnp.where(gval > 0, beta, 0.0) * ggrad
            step = 1.0 / (alpha * (k + 1).astype(x.dtype))
            return proj(x - step * sub)

        return jax.lax.fori_loop(0, self.steps, body, x0, unroll=self.steps if self.unroll == 0 else min(self.unroll, self.steps))
