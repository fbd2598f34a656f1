"""Accurate default solver: the 1-D (or m-D) dual of the rectified penalty, fixed-length loops.

beta [g(x)]_+ = max_{mu in [0, beta]} mu g(x), so P's dual is
    phi(mu) = min_{x in S} (alpha/2)||x - y||^2 + mu g(x),   mu in [0, beta],
concave with phi'(mu) = g(x(mu)) non-increasing (Danskin).  The solution is
  * x(0)                      if g(x(0)) <= 0     (the constraint is slack),
  * x(beta)                   if g(x(beta)) > 0   (the penalty saturates),
  * x(mu*) with g(x(mu*)) = 0 otherwise: a bracketed root of a monotone function,
found by an Illinois (modified regula falsi) iteration with log- and plain-bisection
safeguards, a fixed number of steps so the run stays one compiled program.  The returned point
is the bracket's feasible end, so a huge beta never multiplies a round-off violation.

x(mu) by kind of constraint:
  * linear a.x <= b:      x(mu) = Pi_S(y - mu a / alpha), exact (on a ball the root has a
                          closed form: the projection onto ball n hyperplane);
  * smooth g:             x(mu) by accelerated projected gradient on an alpha-strongly convex,
                          (alpha + mu L_g)-smooth problem, warm-started; mu is capped by the
                          Slater bound mu* <= (alpha/2)(||x_s - y||^2 - ||x(0) - y||^2)/(-g(x_s))
                          when the family knows an interior point x_s;
  * polyhedral max_i:     the dual is m-dimensional, nu in {nu >= 0, sum nu <= beta}, solved by
                          accelerated projected gradient ascent with adaptive restart;
                          x(nu) = Pi_S(y - A^T nu / alpha).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import optax.projections as proj

from jaxbco import _ops
from jaxbco.sets import L2Ball
from jaxbco.solvers._base import AbstractProxSolver, prox_objective, shrunk_projector


def _bracketed_root(h_and_x, lo, hi, h_lo, h_hi, x_hi, first_guess, iters):
    """Root of a non-increasing h on [lo, hi] with h(lo) > 0 >= h(hi); returns (mu_hi, x_hi).

    Illinois steps, a log-bisection while hi/lo > 8, a plain bisection every fourth step.
    """
    def body(k, carry):
        lo, hi, h_lo, h_hi, x_hi, side = carry
        denom = h_hi - h_lo
        secant = hi - h_hi * (hi - lo) / jnp.where(denom < 0, denom, -1.0)
        secant = jnp.where(denom < 0, secant, 0.5 * (lo + hi))
        geometric = jnp.sqrt(jnp.where(lo > 0, lo * hi, 1.0))
        cand = jnp.where((lo > 0) & (hi > 8 * lo), geometric, secant)
        cand = jnp.where(k % 4 == 3, 0.5 * (lo + hi), cand)
        cand = jnp.where((k == 0) & (first_guess > lo) & (first_guess < hi), first_guess, cand)
        cand = jnp.clip(cand, lo, hi)
        h_c, x_c = h_and_x(cand)
        pos = h_c > 0
        # Illinois: halve the kept end's value when the same end is kept twice in a row.
        new_side = jnp.where(pos, -1, 1).astype(jnp.int32)
        h_hi_new = jnp.where(pos, jnp.where(side == -1, 0.5 * h_hi, h_hi), h_c)
        h_lo_new = jnp.where(pos, h_c, jnp.where(side == 1, 0.5 * h_lo, h_lo))
        lo = jnp.where(pos, cand, lo)
        hi = jnp.where(pos, hi, cand)
        x_hi = jnp.where(pos, x_hi, x_c)
        return lo, hi, h_lo_new, h_hi_new, x_hi, new_side

    carry = (lo, hi, h_lo, h_hi, x_hi, jnp.zeros((), jnp.int32))
    lo, hi, _, _, x_hi, _ = jax.lax.fori_loop(0, iters, body, carry)
    return hi, x_hi


def _newton_root(h_x_dh, lo, hi, h_lo, h_hi, x_lo, x_hi, first, iters):
    """Safeguarded Newton for a non-increasing, piecewise-smooth h on [lo, hi], h(lo) > 0 >= h(hi).

    Newton from the latest point when it lands inside the bracket (finite termination on a
    piecewise-linear h, e.g. projections onto a box, simplex or L1 ball), nudged a few ulps
    past the lower end so a root that rounds to h = +1e-16 still closes the bracket; else the
    bracket's secant, a log-bisection while hi/lo > 8, and a plain bisection every fifth step
    when the last five shrank the bracket by less than half.  Returns both ends' points.
    """
    eps = jnp.finfo(lo.dtype).eps

    def body(k, carry):
        lo, hi, h_lo, h_hi, x_lo, x_hi, mu, h, dh, width = carry
        newton = mu - h / jnp.where(dh < 0, dh, -1.0)
        newton = jnp.maximum(newton, lo + 64 * eps * lo)
        ok_newton = (dh < 0) & (newton < hi)
        denom = h_hi - h_lo
        secant = jnp.where(denom < 0, hi - h_hi * (hi - lo) / jnp.where(denom < 0, denom, -1.0),
                           0.5 * (lo + hi))
        cand = jnp.where(ok_newton, newton, secant)
        cand = jnp.where((lo > 0) & (hi > 8 * lo) & ~ok_newton, jnp.sqrt(jnp.where(lo > 0, lo * hi, 1.0)), cand)
        cand = jnp.where((k % 5 == 4) & ((hi - lo) > 0.5 * width), 0.5 * (lo + hi), cand)
        cand = jnp.where((k == 0) & (first > lo) & (first < hi), first, cand)
        cand = jnp.clip(cand, lo, hi)
        h_c, x_c, dh_c = h_x_dh(cand)
        pos = h_c > 0
        width = jnp.where(k % 5 == 4, hi - lo, width)
        lo, h_lo, x_lo = (jnp.where(pos, cand, lo), jnp.where(pos, h_c, h_lo),
                          jnp.where(pos, x_c, x_lo))
        hi, h_hi, x_hi = (jnp.where(pos, hi, cand), jnp.where(pos, h_hi, h_c),
                          jnp.where(pos, x_hi, x_c))
        return lo, hi, h_lo, h_hi, x_lo, x_hi, cand, h_c, dh_c, width

    inf = jnp.full_like(hi, jnp.inf)
    carry = (lo, hi, h_lo, h_hi, x_lo, x_hi, lo, h_lo, jnp.zeros_like(hi), inf)
    out = jax.lax.fori_loop(0, iters, body, carry)
    return out[4], out[5]


def _project_capped_simplex(nu, cap):
    """Projection onto {nu >= 0, sum nu <= cap} (cap = 0: the origin)."""
    pos = jnp.maximum(nu, 0.0)
    on_simplex = proj.projection_simplex(nu, jnp.where(cap > 0, cap, 1.0)).astype(nu.dtype)
    return jnp.where(cap > 0, jnp.where(jnp.sum(pos) <= cap, pos, on_simplex), jnp.zeros_like(nu))


class Dual(AbstractProxSolver):
    """Accurate solver of Eq. (5) via its dual (see module docstring).

    ``root_steps``: Illinois/bisection steps on mu; ``inner_steps``: gradient steps per x(mu)
    for smooth g; ``dual_steps``: ascent steps for polyhedral g.
    """

    root_steps: int = eqx.field(static=True, default=40)
    inner_steps: int = eqx.field(static=True, default=60)
    dual_steps: int = eqx.field(static=True, default=1500)

    def solve(self, domain, xi, constraint, phi, x0, y, alpha, beta):
        kind = constraint.kind
        if kind == "linear" and isinstance(domain, L2Ball):
            return self._ball_halfspace(domain, xi, constraint, phi, y, alpha, beta)
        if kind == "linear":
            return self._linear(domain, xi, constraint, phi, y, alpha, beta)
        if kind == "polyhedral":
            return self._polyhedral(domain, xi, constraint, phi, y, alpha, beta)
        return self._smooth(domain, xi, constraint, phi, x0, y, alpha, beta)

    def _linear(self, domain, xi, constraint, phi, y, alpha, beta):
        project = shrunk_projector(domain, xi)
        A, b = constraint.rows(phi)
        a, b = A[0], b[0]
        norm2 = _ops.dot(a, a)

        def h_and_x(mu):
            x = project(y - (mu / alpha) * a)
            return _ops.dot(a, x) - b, x

        def h_x_dh(mu):
            (h, x), (dh, _) = jax.jvp(h_and_x, (mu,), (jnp.ones_like(mu),))
            return h, x, dh

        h0, x0 = h_and_x(jnp.zeros_like(beta))
        hb, xb = h_and_x(beta)
        guess = alpha * h0 / jnp.where(norm2 > 0, norm2, 1.0)
        # Bracket bound: with x_s in S, s = b - a.x_s > 0 and p = Pi_S(y - mu a/alpha), the
        # projection inequality gives a.p <= a.x_s + alpha ||y - p|| D / mu, so the root is
        # below mu_max = alpha (||y - c|| + D) D / s.  x_s: the projection of a far point c - L a.
        c, _ = domain.inscribed_ball()
        diam = (1.0 - xi) * domain.diameter()
        x_s = project(c - (1e3 * diam / jnp.sqrt(jnp.where(norm2 > 0, norm2, 1.0))) * a)
        slack = b - _ops.dot(a, x_s)
        mu_max = alpha * (jnp.sqrt(_ops.dot(y - c, y - c)) + diam) * diam / jnp.where(slack > 0, slack, 1.0)
        hi = jnp.where(slack > 0, jnp.minimum(beta, 2.0 * mu_max), beta)
        h_hi, x_hi0 = h_and_x(hi)
        x_lo, x_hi = _newton_root(h_x_dh, jnp.zeros_like(beta), hi, h0, h_hi, x0, x_hi0, guess,
                                  self.root_steps)
        objective = lambda x: prox_objective(constraint, phi, y, alpha, beta, x)
        x_root = jnp.where(objective(x_lo) < objective(x_hi), x_lo, x_hi)
        return jnp.where(h0 <= 0, x0, jnp.where(hb > 0, xb, x_root))

    def _ball_halfspace(self, domain, xi, constraint, phi, y, alpha, beta):
        """Closed form on a ball B(c, R') with one halfspace {a.x <= b}.

        slack:      Pi_B(y) if feasible;
        saturated:  Pi_B(y - beta a / alpha) if still infeasible;
        else the projection of y onto B n {a.x = b} (the constraint is active): project y onto
        the hyperplane (p), then p onto the disk of centre c_h = c - ((a.c - b)/|a|^2) a and
        radius rho = sqrt(R'^2 - |c - c_h|^2).
        """
        project = shrunk_projector(domain, xi)
        A, b = constraint.rows(phi)
        a, b = A[0], b[0]
        c, radius = domain.center, (1.0 - xi) * domain.radius
        norm2 = _ops.dot(a, a)
        inv = 1.0 / jnp.where(norm2 > 0, norm2, 1.0)
        x0 = project(y)
        xb = project(y - (beta / alpha) * a)
        p = y - ((_ops.dot(a, y) - b) * inv) * a
        ch = c - ((_ops.dot(a, c) - b) * inv) * a
        rho2 = jnp.maximum(radius * radius - _ops.dot(c - ch, c - ch), 0.0)
        v = p - ch
        nv2 = _ops.dot(v, v)
        shrink = jnp.where(nv2 > rho2, jnp.sqrt(rho2 / jnp.where(nv2 > rho2, nv2, 1.0)), 1.0)
        x_active = ch + shrink * v
        # Round-off guard: beta can be ~1e10 late in a run, so a point infeasible by one ulp
        # costs beta * ulp.  Keep a margin of a few ulps of |a.x| + |b| on the feasible side.
        margin = 2 * jnp.finfo(y.dtype).eps * (_ops.dot(jnp.abs(a), jnp.abs(x_active)) + jnp.abs(b))
        resid = _ops.dot(a, x_active) - b
        x_active = x_active - ((jnp.maximum(resid, 0.0) + margin) * inv) * a
        margin0 = 2 * jnp.finfo(y.dtype).eps * (_ops.dot(jnp.abs(a), jnp.abs(x0)) + jnp.abs(b))
        slack = _ops.dot(a, x0) - b <= -margin0
        saturated = _ops.dot(a, xb) - b > 0
        return jnp.where(slack, x0, jnp.where(saturated, xb, x_active))

    def _smooth(self, domain, xi, constraint, phi, x_warm, y, alpha, beta):
        project = shrunk_projector(domain, xi)
        g = lambda x: constraint.value(x, phi)
        grad_g = jax.grad(g)
        lg = constraint.curvature(phi)

        def argmin_x(mu, x_start):
            lip = alpha + mu * lg
            root_kappa = jnp.sqrt(lip / alpha)
            momentum = (root_kappa - 1.0) / (root_kappa + 1.0)

            def body(_, carry):
                x, z = carry
                x_new = project(z - (alpha * (z - y) + mu * grad_g(z)) / lip)
                return x_new, x_new + momentum * (x_new - x)

            x, _ = jax.lax.fori_loop(0, self.inner_steps, body, (x_start, x_start))
            return x

        x0 = project(y)
        h0 = g(x0)
        # Slater cap on the multiplier, when an interior point is known and lies in S.
        cap = beta
        interior = constraint.interior_point(phi)
        if interior is not None:
            xs = project(interior)
            gs = g(xs)
            bound = 0.5 * alpha * (jnp.sum((xs - y) ** 2) - jnp.sum((x0 - y) ** 2)) / jnp.where(
                gs < 0, -gs, 1.0)
            cap = jnp.where(gs < 0, jnp.minimum(beta, 1.01 * bound + 1e-12), beta)
        xb = argmin_x(cap, x0)
        hb = g(xb)
        def h_and_x(mu):
            x = argmin_x(mu, xb)
            return g(x), x

        _, x_root = _bracketed_root(h_and_x, jnp.zeros_like(beta), cap, h0, hb, xb, cap * 0.5,
                                    self.root_steps)
        return jnp.where(h0 <= 0, x0, jnp.where(hb > 0, xb, x_root))

    def _polyhedral(self, domain, xi, constraint, phi, y, alpha, beta):
        project = shrunk_projector(domain, xi)
        A, b = constraint.rows(phi)
        # step 1/L, L = ||A||_2^2 / alpha: power iteration on the smaller Gram matrix (the
        # Rayleigh quotient is within 5% of the top eigenvalue or the gap makes it exact),
        # capped by the Frobenius bound.  Written as multiply-sums (batch-independent).
        M = A if A.shape[0] <= A.shape[1] else A.T
        gram = jax.lax.stop_gradient(jnp.sum(M[:, None, :] * M[None, :, :], axis=-1))
        v0 = 1.0 + 0.1 * jnp.arange(gram.shape[0], dtype=A.dtype)

        def power(_, v):
            w = _ops.matvec(gram, v)
            return w / jnp.maximum(jnp.sqrt(_ops.dot(w, w)), jnp.finfo(A.dtype).tiny)

        v = jax.lax.fori_loop(0, 30, power, v0 / jnp.sqrt(_ops.dot(v0, v0)))
        lip = jnp.minimum(1.05 * _ops.dot(v, _ops.matvec(gram, v)), jnp.sum(A * A))
        step = alpha / jnp.maximum(lip, jnp.finfo(A.dtype).tiny)

        def x_of(nu):
            return project(y - jnp.sum(A * nu[:, None], axis=0) / alpha)

        def body(_, carry):
            nu, z, t = carry
            nu_new = _project_capped_simplex(z + step * (_ops.matvec(A, x_of(z)) - b), beta)
            t_new = 0.5 * (1.0 + jnp.sqrt(1.0 + 4.0 * t * t))
            z_new = nu_new + ((t - 1.0) / t_new) * (nu_new - nu)
            # Adaptive restart (O'Donoghue & Candes 2015): drop momentum when it points uphill.
            restart = _ops.dot(z - nu_new, nu_new - nu) > 0
            z_new = jnp.where(restart, nu_new, z_new)
            t_new = jnp.where(restart, jnp.ones_like(t_new), t_new)
            return nu_new, z_new, t_new

        nu0 = jnp.zeros(A.shape[0], A.dtype)
        nu, _, _ = jax.lax.fori_loop(0, self.dual_steps, body, (nu0, nu0, jnp.ones((), A.dtype)))
        return x_of(nu)


def project_feasible(domain, xi, constraint, phi, z):
    """Pi_{(1-xi)X n {g <= 0}}(z): exact for one halfspace (bracketed Newton on the multiplier),
    accelerated dual ascent for several halfspaces, bracketed search for smooth g.  Falls back to
    the least-violating point when the intersection is empty."""
    dtype = z.dtype
    big = jnp.asarray(1e30 if dtype == jnp.float64 else 1e18, dtype)
    return Dual(root_steps=80).solve(domain, jnp.asarray(xi, dtype), constraint, phi, z, z,
                        jnp.ones((), dtype), big)
