"""Smooth g (``curvature`` bounds its Hessian): bracketed root on μ, x(μ) by accelerated
projected gradient.

x(μ) = argmin over S of (α/2)‖x − y‖² + μg(x) is α-strongly convex and (α + μL_g)-smooth:
Nesterov's constant-momentum APG (momentum (√k − 1)/(√k + 1), k = (α + μL_g)/α).  The
multiplier μ* (g(x(μ*)) = 0, see ``jaxbco.solvers.dual``) comes from a bracketed root on
[0, cap], cap = β, or the Slater bound μ* ≤ (α/2)(‖x_s − y‖² − ‖x(0) − y‖²)/(−g(x_s)) when
the family knows an interior point x_s.  Derivatives come from a fixed-length polish at the
solution (``SmoothDual.solve``).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco._src import blocks, ops
from jaxbco.solvers._base import AbstractProxSolver, shrunk_projector
from jaxbco.solvers._roots import bracketed_root


class SmoothDual(AbstractProxSolver):
    """Eq. (5) for a differentiable g with a curvature bound on any set.

    ``Dual``'s method for a set of your own (on the four built-in sets ``QuadraticIPM`` and
    ``SmoothIPM`` are exact where this stops after ``inner_steps`` APG steps per x(μ) in
    ill-conditioned rounds).

    Args:
        root_steps: Illinois/bisection steps on μ (at most; default 40).
        inner_steps: APG steps per x(μ) in the search (at most; default 60).
        polish_steps: the fixed-length APG steps that carry derivatives (default 30).

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints, sets, solvers
        >>> X, g = sets.L2Ball(jnp.zeros(2), 1.0), constraints.Ball()
        >>> phi = (jnp.array([1.0, 0.0]), jnp.asarray(1.0))   # ‖x − (1, 0)‖₂² ≤ 1
        >>> x = solvers.SmoothDual().solve(X, 0.0, g, phi, jnp.zeros(2), jnp.array([-1.0, 0.0]),
        ...                                1.0, 100.0)
        >>> bool(jnp.allclose(x, jnp.zeros(2), atol=1e-4))   # as BallBall's closed form
        True
    """

    name = "smooth: bracketed root + APG"
    blocks = True
    root_steps: int = eqx.field(static=True, default=40)
    inner_steps: int = eqx.field(static=True, default=60)
    polish_steps: int = eqx.field(static=True, default=30)

    def solve(self, domain, xi, constraint, phi, x0, y, alpha, beta):
        """Smooth g: a search on non-differentiated data, then a differentiable polish.

        Search (``lax.while_loop``s, every lane stopping on its own): x(μ) by accelerated
        projected gradient until the step is below a few ulps (at most ``inner_steps``); the
        multiplier by the Illinois bracket until it closes to a few ulps or g(x_hi) is zero to
        a few ulps (at most ``root_steps``).  Slack lanes do no iteration at all.
        Polish (fixed length, carries derivatives; values come from the search): one Newton
        step μ* − h(μ*)/h′(μ*) on h(μ) = g(x(μ)) with x(μ) from ``polish_steps`` gradient
        steps warm-started at the search's point, so dμ*/d· = −(dh/d·)/(dh/dμ), the implicit
        derivative on the active constraint; the returned value is the search's feasible end.
        """
        project = shrunk_projector(domain, xi)
        g = lambda x, phi: constraint.value(x, phi)
        grad_g = lambda x, phi: constraint.value_and_gradient(x, phi)[1]
        eps = jnp.finfo(y.dtype).eps

        def lip_momentum(mu, alpha, lg):
            """(L, Nesterov's constant momentum) of x(mu)'s objective with curvature lg."""
            lip = alpha + mu * lg
            root_kappa = jnp.sqrt(lip / alpha)
            return lip, (root_kappa - 1.0) / (root_kappa + 1.0)

        def apg_step(mu, y, alpha, phi, lg):
            lip, momentum = lip_momentum(mu, alpha, lg)

            def step(x, z):
                x_new = project(z - (alpha * (z - y) + mu * grad_g(z, phi)) / lip)
                return x_new, x_new + momentum * (x_new - x)

            return step

        def cap_of(x0, y, alpha, beta, phi):
            # Slater cap on the multiplier, when an interior point is known and lies in S.
            interior = (  # a user's interior(phi) is written for one run's data
                blocks.per_run_data(constraint.interior_point, phi, y.shape[1:])
                if y.ndim > 1
                else constraint.interior_point(phi)
            )
            if interior is None:
                return beta
            xs = project(interior)
            gs = g(xs, phi)
            bound = (
                0.5
                * alpha
                * (ops.inner(xs - y, xs - y) - ops.inner(x0 - y, x0 - y))
                / jnp.where(gs < 0, -gs, 1.0)
            )
            return jnp.where(gs < 0, jnp.minimum(beta, 1.01 * bound + 1e-12), beta)

        # --- search, on data that carries no derivatives -----------------------------------
        ys, alphas, betas, phis = jax.lax.stop_gradient((y, alpha, beta, phi))
        lgs = jnp.asarray(constraint.curvature(phis), ys.dtype)  # a user's float: the run's dtype

        def argmin_search(mu, x_start, run, lg):
            """x(mu) and the curvature the search needed: a step whose quadratic upper model
            with L = alpha + mu lg fails (lg below g's curvature: a user's bound too low) is
            rejected and that lane's lg doubled, its momentum restarted (Beck & Teboulle
            2009); a correct bound never triggers it."""
            phi_of = lambda x: 0.5 * alphas * ops.inner(x - ys, x - ys) + mu * g(x, phis)

            def cond(c):
                k, _, _, moving, _ = c
                return (k < self.inner_steps) & jnp.any(moving)

            def body(c):  # a lane that has stopped keeps its point (frozen)
                k, x, z, moving, lg = c
                lip, momentum = lip_momentum(mu, alphas, lg)
                g_z, dg_z = constraint.value_and_gradient(z, phis)
                grad = alphas * (z - ys) + mu * dg_z
                x_new = project(z - grad / lip)
                d_x = x_new - z
                quad, lin, step2 = (
                    0.5 * alphas * ops.inner(z - ys, z - ys),
                    ops.inner(grad, d_x),
                    0.5 * lip * ops.inner(d_x, d_x),
                )
                model = quad + mu * g_z + lin + step2
                value = phi_of(x_new)
                # round-off allowance from the terms' sizes, not the sums' (which cancel: a
                # spurious "short" step would double lg for nothing and freeze the lane)
                size = quad + jnp.abs(mu * g_z) + jnp.abs(lin) + step2 + jnp.abs(value)
                short = value > model + 16 * eps * size
                ok = moving & ~short
                d = jnp.max(jnp.abs(x_new - x), axis=0)
                still = moving & (
                    short | (d > 4 * eps * jnp.maximum(1.0, jnp.max(jnp.abs(x_new), axis=0)))
                )
                z_next = jnp.where(short, x, x_new + momentum * (x_new - x))
                return (
                    k + 1,
                    jnp.where(ok, x_new, x),
                    jnp.where(moving, z_next, z),
                    still,
                    jnp.where(moving & short, 2.0 * lg, lg),
                )

            moving = jnp.broadcast_to(run, x_start.shape[1:])
            lg = jnp.broadcast_to(lg, x_start.shape[1:])
            _, x, _, _, lg = jax.lax.while_loop(cond, body, (0, x_start, x_start, moving, lg))
            return x, lg

        x0 = project(ys)
        h0 = g(x0, phis)
        cap = cap_of(x0, ys, alphas, betas, phis)
        xb, lgs = argmin_search(cap, x0, h0 > 0, lgs)  # the largest mu: the curvature it needs
        hb = g(xb, phis)
        active = (h0 > 0) & (hb <= 0)
        h_scale = jnp.maximum(jnp.abs(h0), 1.0)

        def h_and_x(mu, x_warm):
            x = argmin_search(mu, x_warm, True, lgs)[0]
            return g(x, phis), x

        mu_root, x_root = bracketed_root(
            h_and_x,
            jnp.zeros_like(cap),
            cap,
            h0,
            hb,
            xb,
            0.5 * cap,
            self.root_steps,
            active,
            8 * eps,
            4 * eps * h_scale,
        )
        saturated = (h0 > 0) & (hb > 0)
        mu_s = jnp.where(saturated, cap, mu_root)
        x_s = jnp.where(h0 <= 0, x0, jnp.where(saturated, xb, x_root))

        # --- polish: derivatives through fixed-length steps at the search's solution ---------
        lg = jax.lax.stop_gradient(lgs)  # the bound as the search raised it
        x0_d = project(y)
        cap_d = cap_of(x0_d, y, alpha, beta, phi)

        def argmin_polish(mu):
            step = apg_step(mu, y, alpha, phi, lg)
            body = lambda _, c: step(*c)
            return jax.lax.fori_loop(0, self.polish_steps, body, (x_s, x_s))[0]

        h_of = lambda mu: g(argmin_polish(mu), phi)
        h, dh = jax.jvp(h_of, (mu_s,), (jnp.ones_like(mu_s),))
        newton = jnp.where(active & (dh < 0), h / jnp.where(dh < 0, dh, -1.0), 0.0)
        mu_d = jnp.where(saturated, cap_d, mu_s - (newton - jax.lax.stop_gradient(newton)))
        x_d = argmin_polish(mu_d)
        x_d = x_s + (
            x_d - jax.lax.stop_gradient(x_d)
        )  # value of the search, derivative of the polish
        return jnp.where(h0 <= 0, x0_d, x_d)
