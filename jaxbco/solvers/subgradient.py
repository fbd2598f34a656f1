"""A naive prox solver: K projected-subgradient steps on P with step 1/(αk).

Kept for comparison: it is inaccurate when β = λₜγₜ is much larger than αₜ (the penalty's
subgradient jumps by β‖∇g‖ across the boundary and 1/(αk) steps overshoot it).  Returns the
last iterate.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco.solvers._base import AbstractProxSolver, shrunk_projector


class Subgradient(AbstractProxSolver):
    """The inexact fixed-step alternative to ``Dual``: K projected-subgradient steps on P.

    xₖ₊₁ = Π_S(xₖ − (1/(αk)) [α(xₖ − y) + βsₖ]), x₁ = xₜ, S = (1 − ξ)X, with
    sₖ = ∇g(xₖ) where g(xₖ) is positive, else 0.

    Args:
        steps: K, the number of steps, an int ≥ 1 (static; default 20).
        unroll: steps per iteration of the compiled loop (0: all K, straight-line code;
            default 1, rolled: unrolling compiles longer and is faster only on some GPUs).

    Raises:
        ValueError: for ``steps`` below 1 or a negative ``unroll``.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints, sets, solvers
        >>> X, g = sets.L2Ball(jnp.zeros(2), 1.0), constraints.Linear()
        >>> phi = (jnp.array([1.0, 0.0]), jnp.asarray(0.5))   # x₁ ≤ 0.5
        >>> x = solvers.Subgradient(steps=200).solve(X, 0.0, g, phi, jnp.zeros(2),
        ...                                          jnp.array([2.0, 0.0]), 1.0, 2.0)
        >>> round(float(x[0]), 3)   # inexact: the minimiser has x₁ = 0.5
        0.505
    """

    blocks = True
    kernel = True
    steps: int = eqx.field(static=True, default=20)
    # Steps per iteration of the compiled loop (0: all K); rolled by default (see ``unroll``).
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

        return jax.lax.fori_loop(
            0,
            self.steps,
            body,
            x0,
            unroll=self.steps if self.unroll == 0 else min(self.unroll, self.steps),
        )
