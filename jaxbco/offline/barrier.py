"""x* over X ∩ {A x ≤ b} (∩ smooth convex constraints) with many linear rows, or a linear loss
on a curved set: a log-barrier Newton method.

    min_x  (w/2)‖x‖² + ⟨s, x⟩   s.t.  A x ≤ b (m rows),  x ∈ X,  [g(x) ≤ 0, g smooth],

w = 1, s = −y: the projection of y (a quadratic loss's x*); w = 0, s = mean θ: a linear
loss's x*.  Boyd & Vandenberghe (2004, §11.3): Newton's method on
t q(x) − ∑ log(b − A x) − ∑ log σ(x), σ the set's ``barrier_slacks`` (positive exactly inside
X; a simplex's sum row is its affine hull, kept by Newton steps projected onto the hull's
directions) and −g, with t growing by ``_GROWTH`` each time x is centred (Newton decrement² ≤
√ε, or no step of the line search decreases the barrier function in this dtype), until the
barrier's duality gap ν/t (ν logs) is below ``_gap`` times q's scale (|s| D + w D²).  A
strictly feasible start comes from phase I, the same method on (x, σ): min σ s.t.
A x − b ≤ σ, −g(x) + σ > 0, x ∈ X, from X's centre, stopped once σ < 0.  Each Newton step is
one d × d Cholesky solve; the rows enter as Aᵀ diag(1/r²) A, so m rows cost O(m d²) a step,
never an enumeration of their faces.  Line search: the largest of the steps 2⁻ʲ, j < ``_STEPS``,
that stays inside and satisfies Armijo's condition (1/4) on the barrier function's exact
differences, all tried at once.

One flat ``while_loop`` over Newton steps (at most ``_ITERATIONS``; a lane's stage is part of
its state), with no loop nested in it: under ``vmap`` the batch runs its slowest lane's count
of steps.  (Nested stage/Newton/backtracking loops ran for minutes at 48 float32 lanes of
box-ellipsoid, each lane alone in 4 ms; benchmarks/NOTES.md, session 25.)

Used by the comparator where the rows are more than the dual Newton's count
(``PolyhedralDual.exact_rows``), and for a linear loss on a ball or ellipsoid constraint,
where X declares ``barrier_slacks`` (``jaxbco.offline.region``), or ``lift`` and
``lifted_slacks``: then the method runs on (x, t), X the shadow of the lifted set (an L1 ball
past 2^10 facets: |xᵢ − cᵢ| < tᵢ, ∑ t < r, ``Lifted``).  Where phase I finds
no interior point, the least violating point is returned and the x* certificate flags it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco.solvers import _cholesky

_GROWTH = 4.0  # t's growth each time x is centred
_ITERATIONS = 400  # Newton steps in all, at most
_STEPS = 30  # line-search steps 2^-j tried


def _gap(dtype) -> float:
    return 1e-13 if jnp.dtype(dtype).name == "float64" else 1e-5


def _none(x):
    return jnp.zeros((0,), x.dtype)


def _newton(z, t, lin, w, A, b, slacks, P, tol):
    """One damped Newton step on t (w/2 |z|^2 + lin.z) - sum log(b - A z) - sum log slacks(z)
    over the directions P: (z_new, centred)."""
    x_barrier = lambda u: -jnp.sum(jnp.log(slacks(u)))
    dtype = z.dtype
    r = b - A @ z
    g = t * (w * z + lin) + A.T @ (1.0 / r) + jax.grad(x_barrier)(z)
    H = t * jnp.diag(w) + (A.T * (1.0 / r**2)) @ A + jax.hessian(x_barrier)(z)
    PHP = P @ H @ P
    # off the hull's directions, a curvature of PHP's size: PHP's round-off (eps |H|, 1e17 near
    # the end of the path) along them then never makes the sum indefinite
    big = jnp.maximum(jnp.max(jnp.abs(jnp.diag(PHP))), 1.0)
    Hp = PHP + big * (jnp.eye(z.shape[0], dtype=dtype) - P)
    # Cholesky and row-loop substitutions (``jaxbco.solvers._cholesky``: XLA's CPU runtime
    # deadlocked on batched LAPACK solves inside loops)
    du = P @ -_cholesky.solve(jnp.linalg.cholesky(Hp)[None], (P @ g)[None])[0]
    dec = -(g @ du)  # the Newton decrement squared
    steps = 0.5 ** jnp.arange(_STEPS, dtype=dtype)

    def trial(step):  # inside, and the barrier function's exact change f(z + step du) - f(z)
        v = z + step * du
        quad = t * (jnp.sum(w * (z * (step * du) + 0.5 * (step * du) ** 2)) + step * lin @ du)
        rows = -jnp.sum(jnp.log1p(-(step * (A @ du)) / r))
        own = -jnp.sum(jnp.log(slacks(v) / slacks(z)))
        inside = jnp.all(b - A @ v > 0) & jnp.all(slacks(v) > 0) & jnp.all(jnp.isfinite(v))
        return inside & (quad + rows + own <= -0.25 * step * dec)

    ok = jax.vmap(trial)(steps)
    j = jnp.argmax(ok)  # the largest acceptable step
    moved = jnp.any(ok) & (dec > 0)
    z_new = jnp.where(moved, z + steps[j] * du, z)
    return z_new, (dec <= tol) | ~moved


def _path(z0, t0, lin, w, A, b, slacks, P, tol, finished):
    """Newton steps along the central path from z0 at t0 until ``finished(z, t, centred)``
    (t multiplied by ``_GROWTH`` each time z is centred)."""

    def body(carry):
        z, t, k, done = carry
        z_new, centred = _newton(z, t, lin, w, A, b, slacks, P, tol)
        stop = finished(z_new, t, centred)
        keep = lambda old, new: jnp.where(done, old, new)
        return keep(z, z_new), keep(t, jnp.where(centred, t * _GROWTH, t)), k + 1, done | stop

    start = (z0, t0, jnp.zeros((), jnp.int32), finished(z0, t0, jnp.zeros((), bool)))
    z, _, _, _ = jax.lax.while_loop(lambda c: (c[2] < _ITERATIONS) & ~c[3], body, start)
    return z


class Shifted:
    """X seen from a point o (its members y = x - o): the set's ``barrier_slacks``, ``lift``,
    ``lifted_slacks`` and ``hull_projector`` in local coordinates, for a problem posed there
    (``jaxbco.offline.absolute``)."""

    def __init__(self, domain, origin):
        self.domain, self.origin = domain, origin

    def barrier_slacks(self, y):
        return self.domain.barrier_slacks(self.origin + y)

    def lift(self, y):
        return self.domain.lift(self.origin + y)

    def lifted_slacks(self, z):
        d = self.origin.shape[0]
        return self.domain.lifted_slacks(jnp.concatenate([self.origin + z[:d], z[d:]]))

    def hull_projector(self, dtype):
        return self.domain.hull_projector(dtype)


class Lifted:
    """X as the shadow of a lifted set {(x, t) : ``lifted_slacks``(x, t) > 0} in ℝᵈ⁺ᵏ (an L1
    ball's |xᵢ − cᵢ| < tᵢ, ∑ t < r: 2d + 1 slacks where its facets are 2ᵈ): the barrier method
    runs on (x, t), the objective and rows ignoring t, and keeps x."""

    def __init__(self, domain, k):
        self.domain, self.k = domain, k

    def barrier_slacks(self, z):
        return self.domain.lifted_slacks(z)

    def hull_projector(self, dtype):
        P = self.domain.hull_projector(dtype)
        return jax.scipy.linalg.block_diag(P, jnp.eye(self.k, dtype=dtype))


def form(domain, x):
    """(the set the barrier method runs on, k extra coordinates) for X at a point x (d,): X
    where it declares ``barrier_slacks``, its ``Lifted`` form where it declares ``lift``; None
    where it declares neither.  Shapes only (``jax.eval_shape``): nothing is computed, so a
    host-side check compiles no program."""
    if jax.eval_shape(domain.barrier_slacks, x) is not None:
        return domain, 0
    t = jax.eval_shape(domain.lift, x)
    if t is None:
        return None
    return Lifted(domain, t.shape[0]), t.shape[0]


def _lift(domain, A, c, curved):
    """The problem in the coordinates of ``form``: (its set, A padded, c lifted, curved of
    the lifted point, k)."""
    space, k = form(domain, c)
    if k == 0:
        return space, A, c, curved, 0
    d = c.shape[0]
    A = jnp.concatenate([A, jnp.zeros((A.shape[0], k), A.dtype)], axis=1)
    return space, A, jnp.concatenate([c, domain.lift(c)]), lambda z: curved(z[:d]), k


def phase_one(domain, A, b, c, tol=None, curved=None):
    """(x, found): a point of X with A x < b and ``curved(x)`` > 0 (strictly), or the least
    violating one found, from c, a point of X's relative interior."""
    curved = _none if curved is None else curved
    space, A, z, curved, _ = _lift(domain, A.astype(c.dtype), c, curved)
    z, found = _phase_one(space, A, b, z, tol, curved)
    return z[: c.shape[0]], found


def _phase_one(domain, A, b, c, tol, curved):
    dtype = c.dtype
    tol = jnp.finfo(dtype).eps ** 0.5 if tol is None else tol
    d, m = c.shape[0], A.shape[0]
    sigma0 = jnp.max(jnp.concatenate([A @ c - b, -curved(c), jnp.full((1,), -jnp.inf, dtype)]))
    pad = 1.0 + jnp.abs(sigma0)
    z0 = jnp.concatenate([c, (sigma0 + pad)[None]])
    Az = jnp.concatenate([A, -jnp.ones((m, 1), dtype)], axis=1)
    lin = jnp.zeros(d + 1, dtype).at[d].set(1.0)
    P = jax.scipy.linalg.block_diag(domain.hull_projector(dtype), jnp.ones((1, 1), dtype))
    slacks = lambda z: jnp.concatenate([domain.barrier_slacks(z[:d]), curved(z[:d]) + z[d]])
    size = jnp.max(jnp.abs(jnp.concatenate([b, curved(c), jnp.ones((1,), dtype)])))
    margin = (
        64 * jnp.finfo(dtype).eps * (size + jnp.max(jnp.abs(A), initial=0.0) * jnp.max(jnp.abs(c)))
    )
    # t's growth is harmless here: phase I stops as soon as sigma < 0
    z = _path(
        z0, 1.0 / pad, lin, jnp.zeros(d + 1, dtype), Az, b, slacks, P, tol,
        lambda z, t, centred: z[d] < -margin,
    )  # fmt: skip
    return z[:d], z[d] < -margin


def solve(domain, A, b, w, s, curved=None) -> jax.Array:
    """argmin (w/2)|x|^2 + s.x over X ∩ {A x ≤ b} ∩ {curved > 0} for one run (module
    docstring).

    Args:
        domain: X, declaring ``barrier_slacks`` or ``lift`` (``form``).
        A, b: the rows, (m, d) and (m,) (m may be 0).
        w: 0 (a linear objective) or 1 (a projection), a scalar.
        s: the linear term, (d,).
        curved: None, or x -> (k,) smooth concave slacks of more constraints (-g(x) for a
            smooth convex g).

    Returns:
        x, (d,).
    """
    c, _ = domain.inscribed_ball()
    dtype = s.dtype
    d = s.shape[0]
    A, b, c = A.astype(dtype), b.astype(dtype), c.astype(dtype)
    tol = jnp.finfo(dtype).eps ** 0.5
    curved = _none if curved is None else curved
    space, A, z, curved, k = _lift(domain, A, c, curved)
    z, found = _phase_one(space, A, b, z, tol, curved)
    slacks = lambda z: jnp.concatenate([space.barrier_slacks(z), curved(z)])
    D = domain.diameter().astype(dtype)
    x = z[:d]
    scale = jnp.sqrt(s @ s) * D + w * D * D + jnp.sqrt(jnp.sum(x * x)) * w * D
    ws = jnp.concatenate([jnp.full((d,), w, dtype), jnp.zeros((k,), dtype)])
    lin = jnp.concatenate([s, jnp.zeros((k,), dtype)])
    P = space.hull_projector(dtype)
    return central_path(z, found, lin, ws, A, b, slacks, P, scale)[:d]


def central_path(z0, found, s, w, A, b, slacks, P, scale):
    """From a strictly feasible z0 (where ``found``), argmin (1/2) sum w z^2 + s.z subject to
    A z <= b and slacks(z) > 0 over z0 + range(P), to a duality gap ``_gap`` times ``scale``."""
    dtype = z0.dtype
    nu = A.shape[0] + slacks(z0).shape[0]
    scale = jnp.maximum(scale, jnp.finfo(dtype).tiny)
    target = _gap(dtype) * scale
    return _path(
        z0, 1.0 / scale, s, w, A, b, slacks, P, jnp.finfo(dtype).eps ** 0.5,
        lambda z, t, centred: ~found | (centred & (nu / t <= target)),
    )  # fmt: skip
