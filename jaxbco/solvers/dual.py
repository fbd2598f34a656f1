"""Accurate default solver: the dual of the rectified penalty, closed forms where they exist.

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
  * ``constraints.Ball`` on a ball domain: closed form (``solvers/two_balls.py``);
  * smooth g:             x(mu) by accelerated projected gradient on an alpha-strongly convex,
                          (alpha + mu L_g)-smooth problem, warm-started; mu is capped by the
                          Slater bound mu* <= (alpha/2)(||x_s - y||^2 - ||x(0) - y||^2)/(-g(x_s))
                          when the family knows an interior point x_s.  Both loops stop per lane
                          at a few ulps (``while_loop``s on non-differentiated data; slack lanes
                          do no iteration); derivatives come from a fixed-length polish at the
                          solution (one implicit Newton step on mu, see ``Dual._smooth``);
  * polyhedral max_i:     the dual psi(nu) = min_S (alpha/2)||x - y||^2 + nu.(A x - b) is
                          m-dimensional, nu in Delta = {nu >= 0, sum nu <= beta}, with
                          x(nu) = Pi_S(y - A^T nu / alpha), grad psi = A x(nu) - b and generalised
                          Hessian -A J A^T / alpha (J = the Jacobian of Pi_S; piecewise constant
                          on a box, simplex or L1 ball, smooth off the sphere of a ball).  For
                          m <= ``exact_rows``: Levenberg-Marquardt Newton ascent whose step is the
                          exact maximiser of the regularised quadratic model over Delta
                          (enumeration of Delta's 2^(m+1) faces), run until the lane converges;
                          then one differentiable Newton step on the identified face (implicit
                          derivatives).  In a run (``solve_warm``) the ascent starts from last
                          round's nu, and restarts once from nu = 0 if that start stalls.  Exact, up to round-off, on the pieces where psi is
                          quadratic.  Larger m: accelerated projected gradient ascent with
                          adaptive restart.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import optax.projections as proj

from jaxbco import _ops
from jaxbco.sets import L2Ball
from jaxbco.solvers._base import AbstractProxSolver, prox_objective, shrunk_projector
from jaxbco.solvers.two_balls import ball_data, is_ball, prox_ball_ball

#: The prox methods ``Dual.solve`` chooses from (``Dual.path`` names the one it takes).
BALL_HALFSPACE = "closed form: ball n halfspace"
BALL_BALL = "closed form: ball n ball"
LINEAR = "1-D dual: safeguarded Newton"
POLYHEDRAL = "polyhedral: dual Newton (m <= 5) or ascent"
SMOOTH = "smooth: bracketed root + APG"
PATHS = (BALL_HALFSPACE, BALL_BALL, LINEAR, POLYHEDRAL, SMOOTH)


def _bracketed_root(h_and_x, lo, hi, h_lo, h_hi, x_hi, first_guess, iters, run, tol_mu, tol_h):
    """Root of a non-increasing h on [lo, hi] with h(lo) > 0 >= h(hi); returns (mu_hi, x_hi).

    Illinois steps, a log-bisection while hi/lo > 8, a plain bisection every fourth step;
    ``h_and_x(mu, x_warm) -> (h(mu), x(mu))`` is warm-started at the feasible end's point.  A
    ``while_loop`` that stops per lane when ``run`` is false, after ``iters`` steps, or when
    the bracket has closed: hi - lo <= tol_mu hi or -h(hi) <= tol_h.
    """
    def cond(carry):
        k, lo, hi, _, h_hi, _, _ = carry
        closed = (hi - lo <= tol_mu * hi) | (-h_hi <= tol_h)
        return run & (k < iters) & ~closed

    def body(carry):
        k, lo, hi, h_lo, h_hi, x_hi, side = carry
        denom = h_hi - h_lo
        secant = hi - h_hi * (hi - lo) / jnp.where(denom < 0, denom, -1.0)
        secant = jnp.where(denom < 0, secant, 0.5 * (lo + hi))
        geometric = jnp.sqrt(jnp.where(lo > 0, lo * hi, 1.0))
        cand = jnp.where((lo > 0) & (hi > 8 * lo), geometric, secant)
        cand = jnp.where(k % 4 == 3, 0.5 * (lo + hi), cand)
        cand = jnp.where((k == 0) & (first_guess > lo) & (first_guess < hi), first_guess, cand)
        cand = jnp.clip(cand, lo, hi)
        h_c, x_c = h_and_x(cand, x_hi)
        pos = h_c > 0
        # Illinois: halve the kept end's value when the same end is kept twice in a row.
        h_hi_new = jnp.where(pos, jnp.where(side == -1, 0.5 * h_hi, h_hi), h_c)
        h_lo_new = jnp.where(pos, h_c, jnp.where(side == 1, 0.5 * h_lo, h_lo))
        return (k + 1, jnp.where(pos, cand, lo), jnp.where(pos, hi, cand), h_lo_new, h_hi_new,
                jnp.where(pos, x_hi, x_c), jnp.where(pos, -1, 1).astype(jnp.int32))

    carry = (0, lo, hi, h_lo, h_hi, x_hi, jnp.zeros((), jnp.int32))
    _, _, hi, _, _, x_hi, _ = jax.lax.while_loop(cond, body, carry)
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



def _spd_solve(K, R):
    """X = K^{-1} R for symmetric positive definite K (..., m, m), R (..., m, k).

    Gaussian elimination without pivoting (stable for SPD K), unrolled over the static m:
    elementwise ops only, so a lane's answer does not depend on its batch.
    """
    m = K.shape[-1]
    M = jnp.concatenate([K, R], axis=-1)
    below = (jnp.arange(m)[:, None] > jnp.arange(m)[None, :])  # below[i, k]: i > k
    for k in range(m):
        factor = jnp.where(below[:, k:k + 1], M[..., :, k:k + 1] / M[..., k:k + 1, k:k + 1], 0.0)
        M = M - factor * M[..., k:k + 1, :]
    X = [None] * m
    for k in reversed(range(m)):
        acc = M[..., k, m:]
        for j in range(k + 1, m):
            acc = acc - M[..., k, j:j + 1] * X[j]
        X[k] = acc / M[..., k, k:k + 1]
    return jnp.stack(X, axis=-2)


def _face_step(nu, G, K, beta, f, sat):
    """Maximiser of the model q(z) = G.(z - nu) - (1/2)(z - nu)^T K (z - nu) on a face of Delta.

    The face: z_i = 0 off F (f its 0/1 mask) and, when ``sat``, sum z = beta.  Stationarity on F:
    K_FF (z - nu)_F = r_F - tau 1_F, r_F = G_F + K_{F,F^c} nu_{F^c}, tau = 0 off the cap, else
    chosen so that sum z = beta: z_F = nu_F + p - tau q with p = K_FF^{-1} r_F, q = K_FF^{-1} 1_F.
    f and sat broadcast over leading axes (faces); K_FF is embedded as f f^T K + diag(1 - f).
    """
    eye = jnp.eye(nu.shape[-1], dtype=nu.dtype)
    Kf = f[..., :, None] * f[..., None, :] * K + (1.0 - f)[..., :, None] * eye
    r = f * (G + jnp.sum(K * ((1.0 - f) * nu)[..., None, :], axis=-1))
    PQ = _spd_solve(Kf, jnp.stack([r, jnp.broadcast_to(f, r.shape)], axis=-1))
    p, q = PQ[..., 0], PQ[..., 1]
    z = f * (nu + p)
    sq = jnp.sum(f * q, axis=-1)
    tau = (jnp.sum(z, axis=-1) - beta) / jnp.where(sq > 0, sq, 1.0)
    return jnp.where(sat[..., None], z - tau[..., None] * q, z), sq > 0


def _model_step(nu, G, K, beta):
    """(argmax_{z in Delta} q(z), q there) for q(z) = G.(z - nu) - (1/2)(z - nu)^T K (z - nu),
    K SPD (see ``_face_step``).  The maximiser is the stationary point of the face of Delta in
    whose relative interior it lies; so the best of the 2^(m+1) face stationary points, each
    clipped into Delta (a no-op, up to round-off, for the maximiser), is the maximiser."""
    m = nu.shape[-1]
    bits = (jnp.arange(2 ** m)[:, None] >> jnp.arange(m)[None, :]) & 1
    f = jnp.concatenate([bits, bits]).astype(nu.dtype)            # (2^(m+1), m)
    sat = jnp.arange(2 ** (m + 1)) >= 2 ** m
    z, ok = _face_step(nu, G, K, beta, f, sat)
    ok = (ok | ~sat) & jnp.all(jnp.isfinite(z), axis=-1)
    z = jax.vmap(_into_capped_simplex, in_axes=(0, None))(jnp.where(ok[:, None], z, 0.0), beta)
    d = z - nu
    value = _ops.dot(G, d) - 0.5 * _ops.dot(d, jnp.sum(K * d[:, None, :], axis=-1))
    value = jnp.where(ok & ~jnp.isnan(value), value, -jnp.inf)
    best = jnp.argmax(value)
    return z[best], value[best]


def _into_capped_simplex(z, beta):
    """Clip a point that lies in Delta up to round-off: z_+, scaled down onto sum = beta if over."""
    z = jnp.maximum(z, 0.0)
    s = jnp.sum(z)
    return jnp.where(s > beta, z * (beta / jnp.where(s > beta, s, 1.0)), z)


class Dual(AbstractProxSolver):
    """Accurate solver of Eq. (5) via its dual (see module docstring).

    ``root_steps``: Illinois/bisection steps on mu (at most, for smooth g); ``inner_steps``:
    gradient steps per x(mu) for smooth g (at most); ``polish_steps``: the fixed-length gradient
    steps that carry derivatives of the smooth case; polyhedral g with m rows: ``newton_steps`` (at most) dual Newton steps when
    m <= ``exact_rows``, else ``dual_steps`` ascent steps.
    """

    root_steps: int = eqx.field(static=True, default=40)
    inner_steps: int = eqx.field(static=True, default=60)
    polish_steps: int = eqx.field(static=True, default=30)
    dual_steps: int = eqx.field(static=True, default=1500)
    newton_steps: int = eqx.field(static=True, default=60)
    exact_rows: int = eqx.field(static=True, default=5)

    def path(self, domain, constraint) -> str:
        """The method ``solve`` takes for this set and constraint family (one of ``PATHS``)."""
        kind = constraint.kind
        if isinstance(domain, L2Ball) and kind == "linear":
            return BALL_HALFSPACE
        if isinstance(domain, L2Ball) and is_ball(constraint):
            return BALL_BALL
        return {"linear": LINEAR, "polyhedral": POLYHEDRAL}.get(kind, SMOOTH)

    def init_warm(self, problem, dtype):
        """The warm start carried between rounds (``solve_warm``): the polyhedral dual
        multiplier nu (zeros) when the Newton path applies, else () (no state)."""
        con = problem.constraint
        if con.kind != "polyhedral":
            return ()
        rows = jax.eval_shape(lambda: con.rows(problem.constraint_data.sample(
            jax.random.key(0), jnp.ones((), jnp.int32)))[0])
        return jnp.zeros(rows.shape[0], dtype) if rows.shape[0] <= self.exact_rows else ()

    def solve_warm(self, domain, xi, constraint, phi, x0, y, alpha, beta, warm):
        """``(x, warm)``: as ``solve``, started from last round's multiplier where one is kept
        (consecutive prox problems differ by O(1/alpha_t), so the dual Newton needs ~1 step)."""
        if constraint.kind == "polyhedral" and not isinstance(warm, tuple):
            A, b = constraint.rows(phi)
            return self._polyhedral_newton(domain, xi, A, b, y, alpha, beta, nu_start=warm)
        return self.solve(domain, xi, constraint, phi, x0, y, alpha, beta), warm

    def solve(self, domain, xi, constraint, phi, x0, y, alpha, beta):
        path = self.path(domain, constraint)
        if path == BALL_BALL:
            return prox_ball_ball(domain.center, (1.0 - xi) * domain.radius,
                                  *ball_data(constraint, phi), y, alpha, beta)
        if path == BALL_HALFSPACE:
            return self._ball_halfspace(domain, xi, constraint, phi, y, alpha, beta)
        if path == LINEAR:
            return self._linear(domain, xi, constraint, phi, y, alpha, beta)
        if path == POLYHEDRAL:
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
        norm2 = _ops.inner(a, a)
        inv = 1.0 / jnp.where(norm2 > 0, norm2, 1.0)
        x0 = project(y)
        xb = project(y - (beta / alpha) * a)
        p = y - ((_ops.inner(a, y) - b) * inv) * a
        ch = c - ((_ops.inner(a, c) - b) * inv) * a
        rho2 = jnp.maximum(radius * radius - _ops.inner(c - ch, c - ch), 0.0)
        v = p - ch
        nv2 = _ops.inner(v, v)
        shrink = jnp.where(nv2 > rho2, jnp.sqrt(rho2 / jnp.where(nv2 > rho2, nv2, 1.0)), 1.0)
        x_active = ch + shrink * v
        # Round-off guard: beta can be ~1e10 late in a run, so a point infeasible by one ulp
        # costs beta * ulp.  Keep a margin of a few ulps of |a.x| + |b| on the feasible side.
        margin = 2 * jnp.finfo(y.dtype).eps * (_ops.inner(jnp.abs(a), jnp.abs(x_active)) + jnp.abs(b))
        resid = _ops.inner(a, x_active) - b
        x_active = x_active - ((jnp.maximum(resid, 0.0) + margin) * inv) * a
        margin0 = 2 * jnp.finfo(y.dtype).eps * (_ops.inner(jnp.abs(a), jnp.abs(x0)) + jnp.abs(b))
        slack = _ops.inner(a, x0) - b <= -margin0
        saturated = _ops.inner(a, xb) - b > 0
        return jnp.where(slack, x0, jnp.where(saturated, xb, x_active))

    def _smooth(self, domain, xi, constraint, phi, x_warm, y, alpha, beta):
        """Smooth g: a search on non-differentiated data, then a differentiable polish.

        Search (``lax.while_loop``s, every lane stopping on its own): x(mu) by accelerated
        projected gradient until the step is below a few ulps (at most ``inner_steps``); the
        multiplier by the Illinois bracket until it closes to a few ulps or g(x_hi) is zero to
        a few ulps (at most ``root_steps``).  Slack lanes do no iteration at all.
        Polish (fixed length, carries derivatives; values come from the search): one Newton
        step mu* - h(mu*)/h'(mu*) on h(mu) = g(x(mu)) with x(mu) from ``polish_steps`` gradient
        steps warm-started at the search's point, so d mu*/d. = -(dh/d.)/(dh/dmu), the implicit
        derivative on the active constraint; the returned value is the search's feasible end.
        """
        project = shrunk_projector(domain, xi)
        g = lambda x, phi: constraint.value(x, phi)
        grad_g = jax.grad(g)
        eps = jnp.finfo(y.dtype).eps

        def apg_step(mu, y, alpha, phi, lg):
            lip = alpha + mu * lg
            root_kappa = jnp.sqrt(lip / alpha)
            momentum = (root_kappa - 1.0) / (root_kappa + 1.0)

            def step(x, z):
                x_new = project(z - (alpha * (z - y) + mu * grad_g(z, phi)) / lip)
                return x_new, x_new + momentum * (x_new - x)
            return step

        def cap_of(x0, y, alpha, beta, phi):
            # Slater cap on the multiplier, when an interior point is known and lies in S.
            interior = constraint.interior_point(phi)
            if interior is None:
                return beta
            xs = project(interior)
            gs = g(xs, phi)
            bound = 0.5 * alpha * (jnp.sum((xs - y) ** 2) - jnp.sum((x0 - y) ** 2)) / jnp.where(
                gs < 0, -gs, 1.0)
            return jnp.where(gs < 0, jnp.minimum(beta, 1.01 * bound + 1e-12), beta)

        # --- search, on data that carries no derivatives -----------------------------------
        ys, alphas, betas, phis = jax.lax.stop_gradient((y, alpha, beta, phi))
        lgs = constraint.curvature(phis)

        def argmin_search(mu, x_start, run):
            step = apg_step(mu, ys, alphas, phis, lgs)

            def cond(c):
                k, x, z, moved = c
                return run & (k < self.inner_steps) & moved

            def body(c):
                k, x, z, _ = c
                x_new, z_new = step(x, z)
                d = jnp.max(jnp.abs(x_new - x))
                return k + 1, x_new, z_new, d > 4 * eps * jnp.maximum(1.0, jnp.max(jnp.abs(x_new)))

            return jax.lax.while_loop(cond, body, (0, x_start, x_start, True))[1]

        x0 = project(ys)
        h0 = g(x0, phis)
        cap = cap_of(x0, ys, alphas, betas, phis)
        xb = argmin_search(cap, x0, h0 > 0)
        hb = g(xb, phis)
        active = (h0 > 0) & (hb <= 0)
        h_scale = jnp.maximum(jnp.abs(h0), 1.0)

        def h_and_x(mu, x_warm):
            x = argmin_search(mu, x_warm, True)
            return g(x, phis), x

        mu_root, x_root = _bracketed_root(h_and_x, jnp.zeros_like(cap), cap, h0, hb, xb, 0.5 * cap,
                                          self.root_steps, active, 8 * eps, 4 * eps * h_scale)
        saturated = (h0 > 0) & (hb > 0)
        mu_s = jnp.where(saturated, cap, mu_root)
        x_s = jnp.where(h0 <= 0, x0, jnp.where(saturated, xb, x_root))

        # --- polish: derivatives through fixed-length steps at the search's solution ---------
        lg = constraint.curvature(phi)
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
        x_d = x_s + (x_d - jax.lax.stop_gradient(x_d))  # value of the search, derivative of the polish
        return jnp.where(h0 <= 0, x0_d, x_d)

    def _polyhedral(self, domain, xi, constraint, phi, y, alpha, beta):
        A, b = constraint.rows(phi)
        if A.shape[0] <= self.exact_rows:
            return self._polyhedral_newton(domain, xi, A, b, y, alpha, beta)[0]
        return self._polyhedral_ascent(domain, xi, A, b, y, alpha, beta)

    def _polyhedral_newton(self, domain, xi, A, b, y, alpha, beta, nu_start=None):
        """Dual Newton ascent for small m (see module docstring).

        Step: z = argmax_{z in Delta} q(z) = G.(z - nu) - (1/2)(z - nu)^T (H + rho I)(z - nu),
        G = A x(nu) - b, H = A J A^T / alpha, rho from |A|_F^2 / alpha (a projected gradient
        step) down to rho_0 = 1e-3 sqrt(eps) |A|_F^2 / alpha; accepted when psi(z) >= psi(nu).  The increase is
        evaluated as differences, accurate to the step's size rather than psi's:
            psi(z) - psi(nu) = (alpha/2) dx.(x_z + x_nu - 2y) + (z - nu).G(z) + nu.A dx,
        dx = x_z - x_nu.  In float32 that difference can be noise near nu*; concavity
        gives psi(z) - psi(nu) >= G(z).(z - nu), accurate in sign there, so the larger of the two
        is used.  Trust ratio r = increase / q(z): rho <- max(rho/10, rho_0) if r > 3/4; if
        r < 1/4, rho <- max(4 rho, the curvature along z - nu that the model missed), so a step
        over a kink of psi (e.g. into a flat piece, H = 0) is followed by a secant step.  A lane
        stops (and is then frozen, so the batch's trip count never changes it) when a step moves
        nu by a few ulps or eight steps in a row were rejected.  The loop runs on stop_gradient
        data; derivatives come from one Newton step on the final face {i : nu_i > 0} (and
        sum nu = beta if so), the
        implicit-function derivative of nu*.
        """
        project = shrunk_projector(domain, xi)
        m, dtype = A.shape[0], A.dtype
        eps = jnp.finfo(dtype).eps
        eye = jnp.eye(m, dtype=dtype)
        rho0 = 1e-3 * jnp.sqrt(eps) * jnp.maximum(jnp.sum(A * A) / alpha, jnp.finfo(dtype).tiny)

        def state(nu, A, b, y, alpha):
            """(x(nu), G = A x - b, H = A J A^T / alpha)."""
            x, jvp = jax.linearize(project, y - jnp.sum(A * nu[:, None], axis=0) / alpha)
            JA = jax.vmap(jvp)(A)
            H = jnp.sum(A[:, None, :] * JA[None, :, :], axis=-1) / alpha
            return x, _ops.matvec(A, x) - b, 0.5 * (H + H.T)

        def increase(nu, x_nu, z, x_z, G_z, A, y, alpha):
            """psi(z) - psi(nu), as differences."""
            dx = x_z - x_nu
            return (0.5 * alpha * _ops.dot(dx, x_z + x_nu - 2.0 * y) + _ops.dot(z - nu, G_z)
                    + _ops.dot(nu, _ops.matvec(A, dx)))

        data = jax.lax.stop_gradient((A, b, y, alpha))
        A_, _, y_, alpha_ = data
        beta_, rho0_ = jax.lax.stop_gradient((beta, rho0))
        rho_init = rho0_ / (1e-3 * jnp.sqrt(eps))  # |A|_F^2 / alpha >= psi's curvature

        def body(carry):
            (nu, x, G, H, rho, it, fails, done), restarted = carry
            z, gain = _model_step(nu, G, H + rho * eye, beta_)
            x_z, G_z, H_z = state(z, *data)
            d = z - nu
            slope_z = _ops.dot(G_z, d)
            # psi(z) - psi(nu) >= G(z).d (concavity): exact in sign where the difference is noise.
            rise = jnp.maximum(increase(nu, x, z, x_z, G_z, A_, y_, alpha_), slope_z)
            up = rise >= 0
            ratio = rise / jnp.where(gain > 0, gain, 1.0)
            # Poor model: rho >= the secant curvature the model missed, (G - G(z)).d/|d|^2 - d.Hd/|d|^2.
            dd = jnp.maximum(_ops.dot(d, d), jnp.finfo(dtype).tiny)
            missed = (_ops.dot(G, d) - slope_z - _ops.dot(d, _ops.matvec(H, d))) / dd
            rho_new = jnp.where(ratio > 0.75, jnp.maximum(0.1 * rho, rho0_),
                                jnp.where(ratio < 0.25, jnp.maximum(4.0 * rho, missed), rho))
            fails = jnp.where(up, 0, fails + 1)
            stop = ((jnp.max(jnp.abs(z - nu)) <= 32 * eps * jnp.max(jnp.abs(nu)))
                    | (fails >= 8) | (it + 1 >= self.newton_steps))
            new = (jnp.where(up, z, nu), jnp.where(up, x_z, x), jnp.where(up, G_z, G),
                   jnp.where(up, H_z, H), rho_new, it + 1, fails, stop)
            # A warm start that stalls (eight rejected steps: the Newton model was poor there,
            # e.g. after a large change of beta) restarts once from the cold start.
            restart = (fails >= 8) & ~restarted & (nu_start is not None)
            new = jax.tree_util.tree_map(lambda n, c: jnp.where(restart, c, n), new,
                                         cold[:5] + (it + 1, zero, stop & ~restart))
            new = (new, restarted | restart)
            return jax.tree_util.tree_map(lambda o, n: jnp.where(done, o, n), carry, new)

        zero = jnp.zeros((), jnp.int32)
        nu_cold = jnp.zeros(m, dtype)
        cold = (nu_cold, *state(nu_cold, *data), rho_init)
        if nu_start is None:
            start = cold
        else:  # warm start: last round's multiplier, in this round's Delta, with a Newton model
            nu0 = _into_capped_simplex(jax.lax.stop_gradient(nu_start).astype(dtype), beta_)
            start = (nu0, *state(nu0, *data), rho0_)
        start = (start + (zero, zero, jnp.zeros((), bool)), jnp.zeros((), bool))
        (nu, x_nu, _, _, _, _, _, _), _ = jax.lax.while_loop(lambda c: ~c[0][-1], body, start)

        # Differentiable finish: one Newton step on the face where nu lies (value ~ unchanged).
        f = (nu > 0).astype(dtype)
        sat = jnp.sum(nu) >= beta_ * (1 - 64 * eps)
        x_nu, G, H = state(nu, A, b, y, alpha)
        z, _ = _face_step(nu, G, H + rho0 * eye, beta, f, sat)
        z = _into_capped_simplex(z, beta)
        x_z, G_z, _ = state(z, A, b, y, alpha)
        keep = jax.lax.stop_gradient(increase(nu, x_nu, z, x_z, G_z, A, y, alpha)) >= 0
        x = jnp.where(keep, x_z, x_nu)
        # Round-off guard (beta can be ~1e8 alpha): a violation of one ulp costs beta times it;
        # try x moved off the most violated row by it plus a few ulps, keep the better by P.
        r = _ops.matvec(A, x) - b
        k = jnp.argmax(r)
        a_k = A[k]
        margin = 4 * eps * (_ops.dot(jnp.abs(a_k), jnp.abs(x)) + jnp.abs(b[k]))
        x_in = project(x - ((jnp.maximum(r[k], 0.0) + margin) / jnp.maximum(_ops.dot(a_k, a_k),
                                                                  jnp.finfo(dtype).tiny)) * a_k)
        P = lambda v: 0.5 * alpha * _ops.dot(v - y, v - y) + beta * jnp.maximum(
            jnp.max(_ops.matvec(A, v) - b), 0.0)
        better = jax.lax.stop_gradient((r[k] > 0) & (P(x_in) < P(x)))
        return jnp.where(better, x_in, x), nu

    def _polyhedral_ascent(self, domain, xi, A, b, y, alpha, beta):
        project = shrunk_projector(domain, xi)
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
