"""Quadratic g on a box, simplex, ball or L1 ball: an interior point on the lanes whose
constraint binds.

g(x) = (x − q)ᵀP(x − q) − s (``Ellipsoid``; ``Ball`` with P = I; ``Shifted`` of these).
A lane whose projection Π_S(y) satisfies g (or whose β is 0) takes it: exact, and the
common case late in a run.  The others solve Eq. (5) by a primal-dual interior point
(Mehrotra predictor-corrector, one Cholesky factorisation per lane and step, each lane
stopping at round-off): on seeds-minor blocks the binding lanes are gathered into chunks of
``lanes`` on a CPU (active lanes first, a ``while_loop`` over as many chunks as there are
binding lanes), so a round costs one chunk when few lanes bind; on a box or simplex of
d <= 10 each chunk first takes a few Newton steps on the face of the last round's answer
(``_ipm_face``), and only the lanes whose KKT conditions that leaves unmet go on to the
interior point; on a GPU every lane in one solve, the others masked.  Derivatives (tuning)
are the implicit ones of the KKT system at the solution (a ``custom_jvp``: nothing extra in a
run without derivatives); the constraint's data (P, q, s) are not differentiated.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco._src import ops
from jaxbco.solvers import _ipm, _ipm_face, _ipm_tangent, _tail
from jaxbco.solvers._base import AbstractProxSolver, shrunk_projector

#: Newton steps at most on the face of the last round's answer (``_ipm_face``)
FACE_STEPS = 6


def set_fields(domain, xi, dtype) -> dict:
    """The shrunk set (1 - xi) X = c + (1 - xi)(X - c) as ``_ipm.Data`` fields: a box
    (lo, hi), a simplex {x ≥ lo, sum x = total} or a ball (centre, radius); vectors (d,) for
    a scalar xi, lanes-major (runs, d) (radius (runs,)) for one xi per run."""
    s = (1.0 - jnp.asarray(xi, dtype))[..., None]
    d = domain.dim
    if domain.form == "box":
        lower = jnp.reshape(domain.lower, (d,)).astype(dtype)
        upper = jnp.reshape(domain.upper, (d,)).astype(dtype)
        c = 0.5 * (lower + upper)
        return dict(lo=c + s * (lower - c), hi=c + s * (upper - c), total=None)
    if domain.form == "simplex":
        total = jnp.reshape(domain.total, ()).astype(dtype)
        return dict(
            lo=jnp.broadcast_to((1.0 - s) * total / d, s.shape[:-1] + (d,)), hi=None, total=total
        )
    if domain.form == "l2-ball":
        return dict(
            lo=None,
            hi=None,
            total=None,
            centre=jnp.reshape(domain.center, (d,)).astype(dtype),
            radius=s[..., 0] * jnp.reshape(domain.radius, ()).astype(dtype),
        )
    if domain.form == "l1-ball":
        return dict(
            lo=None,
            hi=None,
            total=None,
            l1c=jnp.reshape(domain.center, (d,)).astype(dtype),
            l1r=s[..., 0] * jnp.reshape(domain.radius, ()).astype(dtype),
        )
    raise TypeError(
        f"QuadraticIPM takes a set of form box, simplex, l2-ball or l1-ball; got "
        f"{type(domain).__name__} (form {domain.form!r})"
    )


@jax.custom_jvp
def _attach(x, state, data):
    """x; its derivative: the implicit one of the KKT system at ``state`` (y and b only)."""
    return x


@_attach.defjvp
def _attach_jvp(primals, tangents):
    x, state, data = primals
    ddata = tangents[2]
    return x, _ipm_tangent.tangent(data, state, ddata.y, ddata.b)


def _lanes_major(P, q, s, runs):
    """The constraint's data of a block as the IPM takes them: P (d, d) shared or
    (runs, d, d), q (d,) or (runs, d), s () or (runs,)."""
    d = P.shape[0]
    P = P.reshape(d, d) if P.size == d * d else jnp.moveaxis(P.reshape(d, d, runs), -1, 0)
    q = q.reshape(d) if q.size == d else q.reshape(d, runs).T
    s = jnp.reshape(s, ()) if jnp.size(s) == 1 else jnp.reshape(s, (runs,))
    return P, q, s


def _divided(constraint, phi):
    """The data of g / c, c = g's scale (``normalised``), where c > 1; else phi."""
    big = constraint.scale(phi) > 1.0
    return jax.tree_util.tree_map(
        lambda a, u: jnp.where(big, u, a), phi, constraint.normalised(phi)
    )


class AbstractInteriorPoint(AbstractProxSolver):
    """Eq. (5) by the primal-dual interior point of ``_ipm`` on a set of form box, simplex,
    l2-ball or l1-ball, with its round-off guard on the active constraint; a final class
    supplies g's second-order model (``QuadraticIPM``: (P, q, s); ``SmoothIPM``: g's Hessian).
    Fields ``ipm_steps`` and ``lanes`` (``QuadraticIPM``'s Args), checked here.
    """

    ipm_steps: int = eqx.field(static=True, default=80)
    lanes: int | None = eqx.field(static=True, default=32)

    def __check_init__(self):
        if not (isinstance(self.ipm_steps, int) and self.ipm_steps >= 1):
            raise ValueError(f"ipm_steps must be an integer >= 1; got {self.ipm_steps!r}")
        if not (self.lanes is None or (isinstance(self.lanes, int) and self.lanes >= 1)):
            raise ValueError(
                f"lanes must be an integer >= 1 or None (every lane at once); got {self.lanes!r}"
            )

    def _solve_binding(self, data, need, x0=None):
        """The IPM's state for every lane, the others left at the start point: on a CPU the
        binding lanes solved in chunks of ``lanes`` (gathered, binding first: a chunk stays in
        cache, and a round with few binding lanes costs one chunk), each first on the face of
        ``x0`` (K, d) where given (``_ipm_face``: the interior point only where that face's
        KKT conditions fail); elsewhere (a GPU) every lane in one solve, the non-binding ones
        masked (chunks one after another would be as many launch-bound loops)."""
        runs = need.shape[0]
        at_once = lambda data, need, x0: _ipm.solve(data, self.ipm_steps, need)
        if self.lanes is None:
            return at_once(data, need, x0)
        K = min(self.lanes, runs)
        if K == runs:
            return self._chunks(data, need, K, x0)
        return jax.lax.platform_dependent(
            data,
            need,
            x0,
            cpu=lambda data, need, x0: self._chunks(data, need, K, x0),
            default=at_once,
        )

    def _chunks(self, data, need, K, x0=None):
        """``_solve_binding`` chunk by chunk: a ``while_loop`` over ceil(binding / K) chunks of
        the face's Newton (with ``x0``), then one over the lanes it left."""
        runs = need.shape[0]
        state = _ipm.start(data)

        def lane_data(idx):
            pick = lambda a, lane_axis: jnp.take(a, idx, axis=0) if lane_axis else a
            return data._replace(
                P=pick(data.P, data.P.ndim == 3),
                q=pick(data.q, data.q.ndim == 2),
                s=pick(data.s, data.s.ndim == 1),
                y=data.y[idx],
                b=data.b[idx],
                lo=None if data.lo is None else pick(data.lo, data.lo.ndim == 2),
                hi=None if data.hi is None else pick(data.hi, data.hi.ndim == 2),
                radius=None if data.radius is None else pick(data.radius, data.radius.ndim == 1),
                l1r=None if data.l1r is None else pick(data.l1r, data.l1r.ndim == 1),
                curv=None if data.curv is None else _lanes_of(data.curv, idx),
            )

        def over_chunks(solve_chunk, state, open_):
            order = _tail.open_first(~open_, runs)  # open lanes first, in lane order
            count = jnp.sum(open_.astype(jnp.int32))

            def body(c):
                k, state, ok = c
                start = jnp.minimum(k * K, runs - K)
                idx = jax.lax.dynamic_slice(order, (start,), (K,))
                solved, good = solve_chunk(lane_data(idx), idx)
                keep = open_[idx] & good
                put = lambda full, part: full.at[idx].set(
                    jnp.where(keep.reshape((K,) + (1,) * (part.ndim - 1)), part, full[idx])
                )
                return k + 1, jax.tree_util.tree_map(put, state, solved), put(ok, keep)

            init = (0, state, jnp.zeros_like(open_))
            return jax.lax.while_loop(lambda c: c[0] * K < count, body, init)[1:]

        if x0 is not None and _ipm_face.applies(data):
            face = lambda part, idx: _ipm_face.solve(part, x0[idx], FACE_STEPS, need[idx])
            state, done = over_chunks(face, state, need)
            need = need & ~done
        every = lambda part, idx: (_ipm.solve(part, self.ipm_steps), jnp.ones(idx.shape, bool))
        return over_chunks(every, state, need)[0]

    @staticmethod
    def _guard(constraint, phi, y, alpha, beta, x, x_s, g_s, ulp_g, project, need):
        """Round-off on the active constraint costs beta g(x) (beta/alpha to 1e10 late in a
        run), and a computed g(x) ≤ 0 does not prove it: within m = ``ulp_g(x)`` of 0, x is
        pulled toward a point z of S with g(z) < -m, x + theta (z - x),
        theta = 2 (g(x) + m) / (g(x) - g(z)) (then g ≤ -m by convexity, and it stays in S):
        z = x_s, or where Pi_S(q) is no Slater point (only then computed) a short projected
        step down g from x, z = Pi_S(x - tau grad g(x)), tau = 4 (|g(x)| + m) / ||grad g||^2.
        Of x and the pull, the one with the lower P when each g is taken m higher (the worst
        its round-off allows)."""
        stop = jax.lax.stop_gradient
        m = stop(ulp_g(x))
        g_x = stop(constraint.value(x, phi))
        worst = lambda v, g_v: (
            0.5 * alpha * ops.inner(v - y, v - y) + beta * jnp.maximum(g_v + m, 0.0)
        )

        def pull(best, target, g_t, lanes=True):
            best, best_p = best
            unsure = lanes & (g_x > -m) & (g_t < -m)
            theta = jnp.where(
                unsure, jnp.minimum(1.0, 2.0 * (g_x + m) / jnp.where(unsure, g_x - g_t, 1.0)), 0.0
            )
            pulled = x + stop(theta * (target - x))  # a round-off correction: dx/dx = I
            p = worst(pulled, stop(constraint.value(pulled, phi)))
            better = p < best_p
            return jnp.where(better, pulled, best), jnp.where(better, p, best_p)

        def step_down(best):
            grad = stop(constraint.value_and_gradient(x, phi)[1])
            tau = (
                4.0
                * (jnp.abs(g_x) + m)
                / jnp.maximum(ops.inner(grad, grad), jnp.finfo(x.dtype).tiny)
            )
            z = stop(project(x - tau * grad))
            return pull(best, z, stop(constraint.value(z, phi)), no_slater)

        best = pull((x, worst(x, g_x)), stop(x_s), g_s)
        no_slater = need & (g_x > -m) & (g_s >= -m)  # lane by lane: batch-independent
        return jax.lax.cond(jnp.any(no_slater), step_down, lambda b: b, best)[0]


class QuadraticIPM(AbstractInteriorPoint):
    """Eq. (5) for a quadratic g (``Ellipsoid``, ``Ball``, ``Shifted`` of these) on four sets.

    On a ``Box``, ``Simplex``, ``L2Ball`` or ``L1Ball``: exact (an interior point to
    round-off), see the module docstring.

    Args:
        ipm_steps: interior-point iterations at most (a lane stops at round-off; default 80).
        lanes: binding lanes solved at once on a seeds-minor block on a CPU (default 32;
            None: every lane in one solve, the non-binding ones masked, which a GPU always
            takes).

    Raises:
        ValueError: for ``ipm_steps`` or ``lanes`` below 1.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints, sets, solvers
        >>> X, g = sets.Box(-jnp.ones(2), jnp.ones(2)), constraints.Ball()
        >>> phi = (jnp.zeros(2), jnp.asarray(0.25))   # ‖x‖₂² ≤ 0.25
        >>> solvers.Dual.method(X, g).__name__
        'QuadraticIPM'
        >>> x = solvers.QuadraticIPM().solve(X, 0.0, g, phi, jnp.zeros(2), jnp.array([1.0, 0.0]),
        ...                                  1.0, 100.0)
        >>> bool(jnp.allclose(x, jnp.array([0.5, 0.0]), atol=1e-4))   # on the circle of radius 1/2
        True
    """

    name = "quadratic: interior point on the binding lanes (a checked face first, d <= 10)"
    blocks = True

    def solve(self, domain, xi, constraint, phi, x0, y, alpha, beta):
        # beta [g]_+ = (beta c) [g / c]_+: a g of scale c > 1 is solved on its data divided
        # by c, so a constraint given as 1e20 times a well-scaled one is solved alike (beta c
        # capped where it would overflow: a penalty that large is exact, see the Slater cap
        # below).  A small scale is left as given: b = beta c / alpha below float32's normal
        # range would flush the multiplier to zero, and 1e-20 P is solved right as it is.
        dtype = y.dtype
        c = jnp.maximum(jax.lax.stop_gradient(constraint.scale(phi)), 1.0)
        phi = jax.tree_util.tree_map(jax.lax.stop_gradient, _divided(constraint, phi))
        beta = jnp.minimum(beta * c, jnp.finfo(dtype).max * 1e-8)
        project = shrunk_projector(domain, xi)
        x_proj = project(y)
        need = (constraint.value(x_proj, phi) > 0) & (beta > 0)
        P, q, s = jax.lax.stop_gradient(constraint.quadratic(phi))
        # g's round-off scale at x: eps (|s| + ||P||_F ||x - q||^2) (``_guard``)
        frob = jnp.sqrt(jnp.sum(P * P, axis=(0, 1)))
        ulp_g = lambda x, q=q, s=s: (
            8.0 * jnp.finfo(dtype).eps * (jnp.abs(s) + frob * ops.inner(x - q, x - q))
        )
        # Slater cap (mu* <= cap, so min(b, cap) changes no answer and keeps the scales of a
        # b = 1e18 projection or a late round within float32): x_s = Pi_S(q), g(x_s) < 0,
        # mu*/alpha <= (||x_s - y||^2 - ||Pi_S(y) - y||^2) / (2 (-g(x_s))).
        x_s = project(q)
        g_s = jax.lax.stop_gradient(constraint.value(x_s, phi))
        cap = jax.lax.stop_gradient(
            0.5
            * (ops.inner(x_s - y, x_s - y) - ops.inner(x_proj - y, x_proj - y))
            / jnp.where(g_s < 0, -g_s, 1.0)
        )
        b = beta / alpha
        b = jnp.where(g_s < 0, jnp.minimum(b, 2.0 * cap + jnp.finfo(dtype).tiny), b)
        # Without a Slater point: b <= (1 + |y|^2) / eps, a penalty this precision does not
        # tell from +inf next to (1/2)|x - y|^2 (and zeta / t stays finite in float32).
        scale = 1.0 + jax.lax.stop_gradient(ops.inner(y, y))
        b = jnp.minimum(b, scale / jnp.finfo(dtype).eps)
        if y.ndim == 1:  # one run (the vmap back-end)
            data = _ipm.Data(
                P, q[None], jnp.reshape(s, (1,)), y[None], b[None], **set_fields(domain, xi, dtype)
            )
            state = _ipm.solve(jax.lax.stop_gradient(data), self.ipm_steps)
            x = _attach(jax.lax.stop_gradient(state.x), jax.lax.stop_gradient(state), data)[0]
            return jnp.where(
                need,
                self._guard(constraint, phi, y, alpha, beta, x, x_s, g_s, ulp_g, project, need),
                x_proj,
            )
        d, runs = y.shape[0], y.size // y.shape[0]
        P, q, s = _lanes_major(P, q, s, runs)
        yl = y.reshape(d, runs).T
        bl = jnp.broadcast_to(b, y.shape[1:]).reshape(runs)
        xis = jnp.broadcast_to(xi, y.shape[1:]).reshape(runs)
        data = _ipm.Data(P, q, s, yl, bl, **set_fields(domain, xis, dtype))
        x0l = jnp.broadcast_to(x0, y.shape).reshape(d, runs).T.astype(dtype)
        state = self._solve_binding(
            jax.lax.stop_gradient(data), need.reshape(runs), jax.lax.stop_gradient(x0l)
        )
        state = jax.lax.stop_gradient(state)
        x = _attach(state.x, state, data).T.reshape(y.shape)
        return jnp.where(
            need,
            self._guard(constraint, phi, y, alpha, beta, x, x_s, g_s, ulp_g, project, need),
            x_proj,
        )


def _lanes_of(curv, idx):
    """``curv`` (a ``Partial`` whose arguments are a ``blocks.Lanes`` and arrays with a leading
    lane axis) for the lanes ``idx``."""
    split, *rest = curv.args
    return jax.tree_util.Partial(curv.func, split.take(idx), *(jnp.take(a, idx, 0) for a in rest))
