"""Polyhedral g(x) = maxᵢ (Ax − b)ᵢ, m rows: the m-dimensional dual.

β max(0, maxᵢ rᵢ) = max over ν ∈ Δ of ⟨ν, r⟩ with Δ = {ν ≥ 0, ∑ν ≤ β}, so the dual is
ψ(ν) = min over S of (α/2)‖x − y‖² + ⟨ν, Ax − b⟩, concave on Δ, with x(ν) = Π_S(y − Aᵀν/α),
∇ψ = Ax(ν) − b and generalised Hessian −AJAᵀ/α (J the Jacobian of Π_S: piecewise constant
on a box, simplex or L1 ball, smooth off the sphere of a ball).

* m ≤ ``exact_rows``: Levenberg-Marquardt Newton ascent whose step is the exact maximiser of
  the regularised quadratic model over Δ, run until the lane converges; then one
  differentiable Newton step on the identified face (implicit derivatives).  Exact, up to
  round-off, on the pieces where ψ is quadratic.  In a run (``solve_warm``) the ascent starts
  from last round's ν and restarts once from ν = 0 if that start stalls.  On a seeds-minor
  block (CPU) the last open lanes finish by themselves, gathered (``tail_lanes``): most
  lanes converge in one or two steps, a few take many.
* larger m: ``dual_steps`` steps of accelerated projected gradient ascent (FISTA, Beck &
  Teboulle 2009) with adaptive restart (O'Donoghue & Candès 2015).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco._src import checks, ops
from jaxbco.solvers import _tail
from jaxbco.solvers._base import AbstractProxSolver, shrunk_projector
from jaxbco.solvers._capped_simplex import (
    face_step,
    into_capped_simplex,
    model_step,
    project_capped_simplex,
)


class PolyhedralDual(AbstractProxSolver):
    """Eq. (5) for ``constraints.MultiLinear`` (or ``Shifted`` of it) on any set.

    The m-dimensional dual (see the module docstring).

    Args:
        dual_steps: accelerated ascent steps when m is above ``exact_rows`` (default 1500).
        newton_steps: dual Newton steps (at most) when m ≤ ``exact_rows`` (default 60).
        exact_rows: the largest m that takes the dual Newton method (default 5).
        tail_lanes: on a seeds-minor block (CPU), the dual Newton runs over every lane until at
            most this many are open, then over those alone, gathered (default 128; None: every
            lane until the last converges).

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints, sets, solvers
        >>> X, g = sets.Box(-jnp.ones(2), jnp.ones(2)), constraints.MultiLinear()
        >>> phi = (jnp.eye(2), jnp.array([0.5, 0.25]))   # x₁ ≤ 0.5 and x₂ ≤ 0.25
        >>> solvers.Dual.method(X, g).__name__
        'PolyhedralDual'
        >>> x = solvers.PolyhedralDual().solve(X, 0.0, g, phi, jnp.zeros(2), jnp.array([1.0, 1.0]),
        ...                                    1.0, 100.0)
        >>> [round(float(v), 4) for v in x]
        [0.5, 0.25]
    """

    name = "polyhedral: dual Newton (m <= 5) or ascent"
    blocks = True
    dual_steps: int = eqx.field(static=True, default=1500)
    newton_steps: int = eqx.field(static=True, default=60)
    exact_rows: int = eqx.field(static=True, default=5)
    tail_lanes: int | None = eqx.field(static=True, default=128)

    def init_warm(self, problem, dtype):
        """The multiplier ν (zeros) carried between rounds when the Newton ascent applies
        (m ≤ ``exact_rows``), else () (no state)."""
        con = problem.constraint
        rows = jax.eval_shape(
            lambda: con.rows(
                problem.constraint_data.sample(checks.threefry_key(0), jnp.ones((), jnp.int32))
            )[0]
        )
        return jnp.zeros(rows.shape[0], dtype) if rows.shape[0] <= self.exact_rows else ()

    def solve_warm(self, domain, xi, constraint, phi, x0, y, alpha, beta, warm):
        """``(x, warm)``: as ``solve``, started from last round's multiplier where one is kept
        (consecutive prox problems differ by O(1/αₜ), so the dual Newton needs ~1 step)."""
        if not isinstance(warm, tuple):
            A, b = constraint.rows(phi)
            return self.newton(domain, xi, A, b, y, alpha, beta, nu_start=warm)
        return self.solve(domain, xi, constraint, phi, x0, y, alpha, beta), warm

    def cut(self, domain, constraint, phi, x, warm):
        """The rows averaged with the multiplier's weights ν/∑ν (a convex combination of the
        rows: below their maximum g), where the Newton ascent keeps ν and it is non-zero;
        else g(x) and its gradient (the most violated row's)."""
        value, grad = constraint.value_and_gradient(x, phi)
        if isinstance(warm, tuple):
            return value, grad
        A, b = constraint.rows(phi)
        total = jnp.sum(warm, axis=0)
        w = warm / jnp.where(total > 0, total, 1.0)
        rows = ops.sum_axis(A * jnp.expand_dims(x, 0), 1) - b  # (m, runs...)
        mixed = ops.sum_axis(A * jnp.expand_dims(w, 1), 0)
        return (
            jnp.where(total > 0, jnp.sum(w * rows, axis=0), value),
            jnp.where(total > 0, mixed, grad),
        )

    def solve(self, domain, xi, constraint, phi, x0, y, alpha, beta):
        A, b = constraint.rows(phi)
        if A.shape[0] <= self.exact_rows:
            return self.newton(domain, xi, A, b, y, alpha, beta)[0]
        return self.ascent(domain, xi, A, b, y, alpha, beta)

    def newton(self, domain, xi, A, b, y, alpha, beta, nu_start=None, stationary_stop=False):
        """``(x, nu)``: dual Newton ascent for m ≤ ``exact_rows`` (see the module docstring).

        Step: z = argmax over z ∈ Δ of q(z) = ⟨G, z − ν⟩ − ½(z − ν)ᵀ(H + ρI)(z − ν), with
        G = Ax(ν) − b, H = AJAᵀ/α, ρ from ‖A‖_F²/α (a projected gradient step) down to
        ρ₀ = 10⁻³√ε ‖A‖_F²/α; accepted when ψ(z) ≥ ψ(ν).  The increase is evaluated as
        differences, accurate to the step's size rather than ψ's,
        ψ(z) − ψ(ν) = (α/2)⟨dx, x_z + x_ν − 2y⟩ + ⟨z − ν, G(z)⟩ + ⟨ν, A dx⟩ with
        dx = x_z − x_ν.  In float32 that difference can be noise near ν*; concavity gives
        ψ(z) − ψ(ν) ≥ ⟨G(z), z − ν⟩, accurate in sign there, so the larger of the two is used.
        Trust ratio r = increase/q(z): ρ ← max(ρ/10, ρ₀) if r is above 3/4; if r is below 1/4,
        ρ ← max(4ρ, the curvature along z − ν that the model missed), so a step over a kink of
        ψ (e.g. into a flat piece, H = 0) is followed by a secant step.  A lane stops (and is
        then frozen, so the batch's trip count never changes it) when a step moves ν by a few
        ulps or eight steps in a row were rejected.  The loop runs on ``stop_gradient`` data;
        derivatives come from one Newton step on the final face {i : νᵢ > 0} (and ∑ν = β if
        so), the implicit-function derivative of ν*.
        """
        project = shrunk_projector(domain, xi)
        m, dtype = A.shape[0], A.dtype
        runs = y.shape[1:]  # () for one run, (R,) on a seeds-minor block
        eps = jnp.finfo(dtype).eps
        eye = jnp.eye(m, dtype=dtype).reshape((m, m) + (1,) * len(runs))
        Ab = jnp.broadcast_to(A, (m,) + y.shape)  # the rows for every run (tangents, row picks)
        b = jnp.broadcast_to(b, (m,) + runs)
        matvec = lambda M, v: ops.sum_axis(M * v[None], 1)  # M (k, n, ...) v (n, ...)
        rho0 = (
            1e-3
            * jnp.sqrt(eps)
            * jnp.maximum(jnp.sum(A * A, axis=(0, 1)) / alpha, jnp.finfo(dtype).tiny)
        )

        def state(nu, A, Ab, b, y, alpha, xi):
            """(x(nu), G = A x - b, H = A J A^T / alpha)."""
            x, jvp = jax.linearize(
                shrunk_projector(domain, xi), y - ops.sum_axis(A * nu[:, None], 0) / alpha
            )
            JA = jax.vmap(jvp)(Ab)
            H = ops.sum_axis(A[:, None] * JA[None], 2) / alpha
            return x, matvec(A, x) - b, 0.5 * (H + jnp.swapaxes(H, 0, 1))

        def increase(nu, x_nu, z, x_z, G_z, A, y, alpha):
            """psi(z) - psi(nu), as differences."""
            dx = x_z - x_nu
            return (
                0.5 * alpha * ops.inner(dx, x_z + x_nu - 2.0 * y)
                + ops.inner(z - nu, G_z)
                + ops.inner(nu, matvec(A, dx))
            )

        data = jax.lax.stop_gradient((A, Ab, b, y, alpha, xi))
        beta_, rho0_ = jax.lax.stop_gradient((beta, rho0))
        init_of = lambda rho0_: rho0_ / (1e-3 * jnp.sqrt(eps))  # |A|_F^2/alpha >= psi's curvature
        rho_init = init_of(rho0_)

        def body(consts, carry):
            """One trip of every open lane (``consts``: the data, beta, rho_0 and the cold start,
            each lane's own where ``_tail.tail`` runs it on a chunk of lanes)."""
            data, beta_, rho0_, cold = consts
            A_, _, b_, y_, alpha_, _ = data
            rho_init = init_of(rho0_)
            (nu, x, G, H, rho, it, fails, done), restarted = carry
            z, gain = model_step(nu, G, H + rho * eye, beta_)
            x_z, G_z, H_z = state(z, *data)
            d = z - nu
            slope_z = ops.inner(G_z, d)
            # psi(z) - psi(nu) >= G(z).d (concavity): exact in sign where the difference is noise.
            rise = jnp.maximum(increase(nu, x, z, x_z, G_z, A_, y_, alpha_), slope_z)
            up = rise >= 0
            ratio = rise / jnp.where(gain > 0, gain, 1.0)
            # Poor model: rho >= the secant curvature the model missed, (G - G(z)).d/|d|^2 - d.Hd/|d|^2.
            dd = jnp.maximum(ops.inner(d, d), jnp.finfo(dtype).tiny)
            missed = (ops.inner(G, d) - slope_z - ops.inner(d, matvec(H, d))) / dd
            rho_new = jnp.where(
                ratio > 0.75,
                jnp.maximum(0.1 * rho, rho0_),
                jnp.where(ratio < 0.25, jnp.maximum(4.0 * rho, missed), rho),
            )
            fails = jnp.where(up, 0, fails + 1)
            # With ``stationary_stop`` (the cutting-plane loop, whose new cut must get its
            # multiplier), a step of a few ulps stops the lane only where nu is stationary (a
            # projected gradient step, 1/L with L = |A|_F^2 / alpha, moves it by round-off): in
            # float32 an ill-conditioned model (rows dependent on S's face, rho = rho_0) can
            # propose no step away from a non-stationary nu.  There rho grows instead.  (Off
            # for a polyhedral g's own prox: 2x slower on switching-box, NOTES session 26.)
            small = jnp.max(jnp.abs(z - nu), axis=0) <= 32 * eps * jnp.max(jnp.abs(nu), axis=0)
            stationary = True  # static: the test costs nothing off the cutting-plane loop
            if stationary_stop:
                pg = project_capped_simplex(nu + G / rho_init, beta_) - nu
                size = matvec(jnp.abs(A_), jnp.abs(x)) + jnp.abs(b_)
                noise = 64 * eps * (jnp.max(jnp.abs(nu), axis=0) + jnp.max(size, axis=0) / rho_init)
                stationary = jnp.max(jnp.abs(pg), axis=0) <= noise
            rho_new = jnp.where(small & ~stationary, jnp.maximum(4.0 * rho, rho_new), rho_new)
            stop = (small & stationary) | (fails >= 8) | (it + 1 >= self.newton_steps)
            new = (
                jnp.where(up, z, nu),
                jnp.where(up, x_z, x),
                jnp.where(up, G_z, G),
                jnp.where(up, H_z, H),
                rho_new,
                it + 1,
                fails,
                stop,
            )
            # A warm start that stalls (eight rejected steps: the Newton model was poor there,
            # e.g. after a large change of beta) restarts once from the cold start.
            restart = (fails >= 8) & ~restarted & (nu_start is not None)
            new = jax.tree_util.tree_map(
                lambda n, c: jnp.where(restart, c, n),
                new,
                cold[:5] + (it + 1, jnp.zeros_like(it), stop & ~restart),
            )
            new = (new, restarted | restart)
            return jax.tree_util.tree_map(lambda o, n: jnp.where(done, o, n), carry, new)

        zero = jnp.zeros(runs, jnp.int32)  # per run: a lane stops (and is frozen) on its own
        nu_cold = jnp.zeros((m,) + runs, dtype)
        cold = (nu_cold, *state(nu_cold, *data), jnp.broadcast_to(rho_init, runs))
        if nu_start is None:
            start = cold
        else:  # warm start: last round's multiplier, in this round's Delta, with a Newton model
            nu0 = into_capped_simplex(jax.lax.stop_gradient(nu_start).astype(dtype), beta_)
            start = (nu0, *state(nu0, *data), jnp.broadcast_to(rho0_, runs))
        start = (start + (zero, zero, jnp.zeros(runs, bool)), jnp.zeros(runs, bool))
        n = runs[0] if len(runs) == 1 else 0
        lane = lambda v: jnp.ndim(v) > 0 and jnp.shape(v)[-1] == n
        consts = (data, beta_, rho0_, cold)
        per_lane = (
            (jnp.ndim(A) == 3 and lane(A), True, True, True, lane(alpha), lane(xi)),
            lane(beta_),
            lane(rho0_),
            (True,) * len(cold),
        )
        (nu, x_nu, _, _, _, _, _, _), _ = _tail.tail(
            body, consts, per_lane, start, lambda c: c[0][-1], self.tail_lanes
        )

        # Differentiable finish: one Newton step on the face where nu lies (value ~ unchanged).
        f = (nu > 0).astype(dtype)
        sat = jnp.sum(nu, axis=0) >= beta_ * (1 - 64 * eps)
        x_nu, G, H = state(nu, A, Ab, b, y, alpha, xi)
        z, _ = face_step(nu, G, H + rho0 * eye, beta, f[:, None], sat[None])
        z = into_capped_simplex(z[:, 0], beta)
        x_z, G_z, _ = state(z, A, Ab, b, y, alpha, xi)
        P = lambda v: (
            0.5 * alpha * ops.inner(v - y, v - y)
            + beta * jnp.maximum(jnp.max(matvec(A, v) - b, axis=0), 0.0)
        )
        # kept by the primal objective up to its round-off (a tie keeps the face step, which
        # carries the derivatives): psi is flat to round-off within sqrt(eps) of nu* (its
        # error there is second order), P is not (first order at a kink)
        size_P = lambda v: (
            0.5 * alpha * ops.inner(v - y, v - y)
            + beta * jnp.max(matvec(jnp.abs(A), jnp.abs(v)) + jnp.abs(b), axis=0)
        )
        keep = jax.lax.stop_gradient(P(x_z) <= P(x_nu) + 16 * eps * size_P(x_nu))
        x = jnp.where(keep, x_z, x_nu)
        # Round-off guard (beta can be ~1e8 alpha): a violation of one ulp costs beta times it;
        # try x moved off the most violated row by it plus a few ulps, keep the better by P.
        r = matvec(A, x) - b
        k = jnp.argmax(r, axis=0)[None]
        pick = lambda v: jnp.take_along_axis(
            v, k.reshape(k.shape[:1] + (1,) * (v.ndim - 1 - len(runs)) + runs), axis=0
        )[0]
        a_k, r_k, b_k = pick(Ab), pick(r), pick(b)
        margin = 4 * eps * (ops.inner(jnp.abs(a_k), jnp.abs(x)) + jnp.abs(b_k))
        x_in = project(
            x
            - (
                (jnp.maximum(r_k, 0.0) + margin)
                / jnp.maximum(ops.inner(a_k, a_k), jnp.finfo(dtype).tiny)
            )
            * a_k
        )
        better = jax.lax.stop_gradient((r_k > 0) & (P(x_in) < P(x)))
        return jnp.where(better, x_in, x), nu

    def ascent(self, domain, xi, A, b, y, alpha, beta):
        """x(ν) after ``dual_steps`` accelerated projected gradient ascent steps on ψ."""
        project = shrunk_projector(domain, xi)
        runs = y.shape[1:]
        matvec = lambda M, v: jnp.sum(M * v[None], axis=1)  # M (k, n, ...) v (n, ...)
        # step 1/L, L = ||A||_2^2 / alpha: power iteration on the smaller Gram matrix (the
        # Rayleigh quotient is within 5% of the top eigenvalue or the gap makes it exact),
        # capped by the Frobenius bound.  Written as multiply-sums (batch-independent).
        M = A if A.shape[0] <= A.shape[1] else jnp.swapaxes(A, 0, 1)
        gram = jax.lax.stop_gradient(jnp.sum(M[:, None] * M[None], axis=2))
        n = gram.shape[0]
        v0 = (1.0 + 0.1 * jnp.arange(n, dtype=A.dtype)).reshape((n,) + (1,) * (gram.ndim - 2))

        def power(_, v):
            w = matvec(gram, v)
            return w / jnp.maximum(jnp.sqrt(ops.inner(w, w)), jnp.finfo(A.dtype).tiny)

        v = jax.lax.fori_loop(0, 30, power, v0 / jnp.sqrt(ops.inner(v0, v0)))
        lip = jnp.minimum(1.05 * ops.inner(v, matvec(gram, v)), jnp.sum(A * A, axis=(0, 1)))
        step = alpha / jnp.maximum(lip, jnp.finfo(A.dtype).tiny)

        def x_of(nu):
            return project(y - jnp.sum(A * nu[:, None], axis=0) / alpha)

        def body(_, carry):
            nu, z, t = carry
            nu_new = project_capped_simplex(z + step * (matvec(A, x_of(z)) - b), beta)
            t_new = 0.5 * (1.0 + jnp.sqrt(1.0 + 4.0 * t * t))
            z_new = nu_new + ((t - 1.0) / t_new) * (nu_new - nu)
            # Adaptive restart (O'Donoghue & Candes 2015): drop momentum when it points uphill.
            restart = ops.inner(z - nu_new, nu_new - nu) > 0
            z_new = jnp.where(restart, nu_new, z_new)
            t_new = jnp.where(restart, jnp.ones_like(t_new), t_new)
            return nu_new, z_new, t_new

        nu0 = jnp.zeros((A.shape[0],) + runs, A.dtype)
        t0 = jnp.ones(runs, A.dtype)
        nu, _, _ = jax.lax.fori_loop(0, self.dual_steps, body, (nu0, nu0, t0))
        return x_of(nu)
