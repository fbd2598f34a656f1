"""Naive solver: K projected-subgradient steps on P with step 1/(alpha k) (a rolled loop;
JAXBCO_INNER_UNROLL unrolls it, see jaxbco._xla).

Kept for comparison: it is what the design first asked for, and it is inaccurate when
beta = lam_t gamma_t >> alpha_t (the penalty's subgradient jumps by beta ||grad g|| across the
boundary and 1/(alpha k) steps overshoot it).  Returns the last iterate.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco import _xla
from jaxbco.solvers._base import AbstractProxSolver, shrunk_projector


class Subgradient(AbstractProxSolver):
    """x_{k+1} = Pi_S(x_k - (1/(alpha k)) [alpha (x_k - y) + beta 1{g(x_k) > 0} grad g(x_k)]), x_1 = x_t."""

    steps: int = eqx.field(static=True, default=20)

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

        return jax.lax.fori_loop(0, self.steps, body, x0, unroll=_xla.inner_unroll(self.steps))
