"""A Newton finish for min ⟨θ̄, x⟩ over a box X ∩ {g ≤ 0}, g a user's smooth function, from a
point the proximal point steps left near x* (``comparator.ProximalPoint``).

Proximal point steps reach a curved boundary only to ~√ε in position, and the certificate's
gap then sits at float32's tolerance √ε (a user's box + ellipsoid: 2.6e-4 to 3.9e-4 against
3.45e-4, so x* was solved and certified a second way).  Here x's face is read off (the
coordinates within √ε D of a bound stay there, the others free, F) and Newton's method
runs on the KKT system of the active g:

    θ̄_F + μ ∇_F g(x) = 0,    g(x) = 0,

    [ μ ∇²_FF g   ∇_F g ] [dx_F]     [θ̄_F + μ ∇_F g]
    [ ∇_F gᵀ      0     ] [ dμ ] = − [     g(x)     ],

μ started at its least-squares value, each step clipped to X.  The finish is kept only where it
is finite, μ ≥ 0, each fixed coordinate's multiplier has its sign, and its KKT residual is
below the start's; else the start is kept (the comparator's certificate judges either).

Example:
    >>> import jax.numpy as jnp
    >>> from jaxbco import constraints, sets
    >>> X = sets.Box(-jnp.ones(2), jnp.ones(2))
    >>> g = constraints.CustomConstraint(lambda x, r: jnp.sum(x * x) - r)   # ‖x‖² ≤ r
    >>> x = finish(X, g, jnp.asarray(0.25), jnp.array([-1.0, 0.0]), jnp.array([0.49, 0.05]))
    >>> bool(jnp.allclose(x, jnp.array([0.5, 0.0]), atol=1e-6))   # min -x₁ over the disc
    True
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco._src import blocks

STEPS = 4


def finish(domain, fam, phi, theta_bar, x):
    """x after the Newton finish (module docstring), one run (d,) or a block (d, *runs) with
    ``phi`` laid out for blocks; x where the finish is not kept.

    Args:
        domain: a ``Box`` X.
        fam: a smooth constraint family g (its ``value``).
        phi: g's data.
        theta_bar: θ̄, shaped like x.
        x: the start, a point of X near x*.

    Returns:
        The finished x, x's shape.
    """
    d = x.shape[0]
    lo = jnp.reshape(domain.lower, (d,)).astype(x.dtype)
    hi = jnp.reshape(domain.upper, (d,)).astype(x.dtype)
    one = lambda data, z, theta: _finish_one(lambda v: fam.value(v, data), z, theta, lo, hi)
    runs = x.shape[1:]
    if not runs:
        return one(phi, x, theta_bar)
    flat = lambda a: jnp.reshape(a, (d, -1)).T
    n = flat(x).shape[0]
    done = blocks.lanes(phi, runs).map(one, n, flat(x), flat(jnp.broadcast_to(theta_bar, x.shape)))
    return blocks.runs_last(done, runs).reshape(x.shape)


def _finish_one(g, x, theta, lo, hi):
    dtype, d = x.dtype, x.shape[0]
    eps = jnp.finfo(dtype).eps
    tiny = jnp.finfo(dtype).tiny
    D = jnp.sqrt(jnp.sum((hi - lo) ** 2))
    tau = jnp.sqrt(eps) * D
    at_lo, at_hi = x <= lo + tau, x >= hi - tau
    free = ~(at_lo | at_hi)

    def residual(z, mu):
        """The KKT residual of (z, mu) relative to its terms' sizes; inf where a sign is wrong."""
        value, grad = jax.value_and_grad(g)(z)
        r = theta + mu * grad
        size = jnp.max(jnp.abs(theta)) + jnp.abs(mu) * jnp.max(jnp.abs(grad)) + tiny
        stationary = jnp.max(jnp.where(free, jnp.abs(r), 0.0)) / size
        on_g = jnp.abs(value) / (jnp.max(jnp.abs(grad)) * D + tiny)
        signs = jnp.all(jnp.where(at_lo, r >= 0, True) & jnp.where(at_hi, r <= 0, True))
        ok = signs & (mu >= 0) & jnp.all(jnp.isfinite(z)) & jnp.isfinite(mu)
        return jnp.where(ok, jnp.maximum(stationary, on_g), jnp.inf)

    grad = jax.grad(g)(x)
    gf = jnp.where(free, grad, 0.0)
    mu0 = -jnp.dot(jnp.where(free, theta, 0.0), gf) / jnp.maximum(jnp.dot(gf, gf), tiny)

    def step(carry, _):
        z, mu = carry
        value, grad = jax.value_and_grad(g)(z)
        gf = jnp.where(free, grad, 0.0)
        both = free[:, None] & free[None, :]
        H = jnp.where(both, mu * jax.hessian(g)(z), 0.0) + jnp.diag(jnp.where(free, 0.0, 1.0))
        M = jnp.concatenate(
            [
                jnp.concatenate([H, gf[:, None]], axis=1),
                jnp.concatenate([gf, jnp.zeros((1,), dtype)])[None],
            ]
        )
        rhs = jnp.concatenate([jnp.where(free, -(theta + mu * grad), 0.0), -value[None]])
        sol = jnp.linalg.solve(M, rhs)
        return (jnp.clip(z + sol[:d], lo, hi), mu + sol[d]), None

    (z, mu), _ = jax.lax.scan(step, (x, mu0), None, length=STEPS)
    keep = residual(z, mu) < residual(x, mu0)
    return jnp.where(keep, z, x)
