"""x* over X ∩ {A x ≤ b} with many linear rows: a log-barrier Newton method.

    min_x  (w/2)‖x‖² + ⟨s, x⟩   s.t.  A x ≤ b (m rows),  x ∈ X,

w = 1, s = −y: the projection of y (a quadratic loss's x*); w = 0, s = mean θ: a linear
loss's x*.  Boyd & Vandenberghe (2004, §11.3): for t growing by ``_GROWTH`` per stage,
Newton's method on t q(x) − ∑ log(b − A x) − ∑ log σ_X(x), σ_X the set's ``barrier_slacks``
(positive exactly inside X; a simplex's sum row is its affine hull, kept by Newton steps
projected onto the hull's directions), until the barrier's duality gap ν/t (ν the number of
logs) is below ``_GAP`` times q's scale (|s| D + w D²).  A strictly feasible start comes from
phase I, the same method on (x, σ): min σ s.t. A x − b ≤ σ, x ∈ X, from X's centre, stopped
once σ < 0.  Each Newton step is one d × d solve; the rows enter as Aᵀ diag(1/r²) A, so m
rows cost O(m d²) a step, never an enumeration of their faces.  Line search: backtracking
on the barrier function's exact differences (Armijo, 1/4), inside the slacks' domain.

Used by the comparator where the rows are more than the dual Newton's count
(``PolyhedralDual.exact_rows``) and X declares ``barrier_slacks`` (``jaxbco._src.offline_solvers``).
Where phase I finds no interior point, the least violating point is returned and the x*
certificate flags it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

_GROWTH = 10.0  # t's growth per stage
_STAGES = 40  # at most
_NEWTON = 60  # Newton steps per stage, at most
_HALVINGS = 60  # backtracking steps, at most


def _gap(dtype) -> float:
    return 1e-13 if jnp.dtype(dtype).name == "float64" else 1e-6


def _centre(z, t, lin, w, A, b, slacks, P, tol):
    """Newton's method on t (w/2 |z|^2 + lin.z) - sum log(b - A z) - sum log slacks(z) over the
    directions P (a projector), from a strictly feasible z."""
    x_barrier = lambda u: -jnp.sum(jnp.log(slacks(u)))
    dtype = z.dtype
    n = z.shape[0]
    eye = jnp.eye(n, dtype=dtype)

    def change(u, du, step):  # the barrier function's exact difference f(u + step du) - f(u)
        v = u + step * du
        quad = t * (jnp.sum(w * (u * (step * du) + 0.5 * (step * du) ** 2)) + step * lin @ du)
        rows = -jnp.sum(jnp.log1p(-(step * (A @ du)) / (b - A @ u)))
        own = -jnp.sum(jnp.log(slacks(v) / slacks(u)))
        return quad + rows + own

    def inside(v):
        return jnp.all(b - A @ v > 0) & jnp.all(slacks(v) > 0)

    def body(carry):
        u, k, _ = carry
        r = b - A @ u
        g = t * (w * u + lin) + A.T @ (1.0 / r) + jax.grad(x_barrier)(u)
        H = t * jnp.diag(w) + (A.T * (1.0 / r**2)) @ A + jax.hessian(x_barrier)(u)
        Hp = P @ H @ P + (eye - P)
        du = -jnp.linalg.solve(Hp, P @ g)
        du = P @ du
        dec = -(g @ du)  # the Newton decrement squared

        def shorter(c):
            step, i = c
            return 0.5 * step, i + 1

        def worse(c):
            step, i = c
            v = u + step * du
            bad = ~inside(v)
            bad = bad | ~(change(u, du, step) <= -0.25 * step * dec)
            return bad & (i < _HALVINGS)

        step, _ = jax.lax.while_loop(worse, shorter, (jnp.ones((), dtype), 0))
        v = u + step * du
        ok = inside(v) & jnp.all(jnp.isfinite(v))
        return jnp.where(ok, v, u), k + 1, (dec <= tol) | ~ok

    z, _, _ = jax.lax.while_loop(
        lambda c: (c[1] < _NEWTON) & ~c[2], body, (z, 0, jnp.zeros((), bool))
    )
    return z


def phase_one(domain, A, b, c, tol=None):
    """(x, found): a point of X with A x < b (strictly), or the least violating one found."""
    dtype = c.dtype
    tol = jnp.finfo(dtype).eps ** 0.5 if tol is None else tol
    d, m = c.shape[0], A.shape[0]
    sigma0 = jnp.max(A @ c - b)
    pad = 1.0 + jnp.abs(sigma0)
    z0 = jnp.concatenate([c, (sigma0 + pad)[None]])
    Az = jnp.concatenate([A, -jnp.ones((m, 1), dtype)], axis=1)
    lin = jnp.zeros(d + 1, dtype).at[d].set(1.0)
    w = jnp.zeros(d + 1, dtype)
    P = jax.scipy.linalg.block_diag(domain.hull_projector(dtype), jnp.ones((1, 1), dtype))
    slacks = lambda z: domain.barrier_slacks(z[:d])
    margin = (
        64
        * jnp.finfo(dtype).eps
        * (jnp.max(jnp.abs(b)) + jnp.max(jnp.abs(A)) * jnp.max(jnp.abs(c)) + 1.0)
    )

    def stage(carry):
        z, t, k = carry
        return _centre(z, t, lin, w, Az, b, slacks, P, tol), t * _GROWTH, k + 1

    start = (z0, 1.0 / pad, 0)
    z, _, _ = jax.lax.while_loop(lambda c_: (c_[2] < _STAGES) & (c_[0][d] >= -margin), stage, start)
    return z[:d], z[d] < -margin


def solve(domain, A, b, w, s) -> jax.Array:
    """argmin (w/2)|x|^2 + s.x over X ∩ {A x ≤ b} for one run (module docstring).

    Args:
        domain: X, declaring ``barrier_slacks``.
        A, b: the rows, (m, d) and (m,).
        w: 0 (a linear objective) or 1 (a projection), a scalar.
        s: the linear term, (d,).

    Returns:
        x, (d,).
    """
    c, _ = domain.inscribed_ball()
    dtype = s.dtype
    A, b, c = A.astype(dtype), b.astype(dtype), c.astype(dtype)
    eps = jnp.finfo(dtype).eps
    tol = eps**0.5
    x, found = phase_one(domain, A, b, c, tol)
    D = domain.diameter().astype(dtype)
    nu = A.shape[0] + domain.barrier_slacks(c).shape[0]
    scale = jnp.sqrt(s @ s) * D + w * D * D + jnp.sqrt(jnp.sum(x * x)) * w * D
    scale = jnp.maximum(scale, jnp.finfo(dtype).tiny)
    ws = jnp.full(c.shape, w, dtype)
    P = domain.hull_projector(dtype)

    def stage(carry):
        z, t, k, _ = carry
        z = _centre(z, t, s, ws, A, b, domain.barrier_slacks, P, tol)
        return z, t * _GROWTH, k + 1, nu / t <= _gap(dtype) * scale  # the gap at this t

    start = (x, 1.0 / scale, 0, ~found)
    x = jax.lax.while_loop(lambda c_: (c_[2] < _STAGES) & ~c_[3], stage, start)[0]
    return x
