"""Independent NumPy (float64) implementations of the six baselines, written from the update
rules of the papers as collected in the project's shared BASELINES.md (not from the jaxbco
sources), for trajectory checks; Yu-Neely from its queue-weighted primal step (see
``yu_neely``), which BASELINES.md's text does not state.

Scope: X = L2 ball B(c, R) (closed-form projections below), or any set through projections
given by the caller (``SetSetup``: the tests pass cvxpy's, for a simplex, box and L1 ball);
loss f_t(x) = s ||x - theta_t||^2 (grad 2 s (x - theta_t)); one fixed linear constraint
g(x) = a.x - b (grad a).  Every run starts at x_1 = c, replays the
loss data theta (T, d) and the unit directions U (T, d) (round t uses row t - 1), and returns
the PLAYED points x_1..x_T and the final iterate.

Projections are exact and closed-form:
  * onto a ball: c + (z - c) min(1, R / ||z - c||);
  * onto ball n halfspace {a.x <= b}: Pi_B(z) if it satisfies a.x <= b; else Pi_H(z) if it
    lies in the ball; else both constraints are active and the answer is the nearest point
    of the (d-2)-sphere ball-boundary n hyperplane: c' + rho (z' - c') / ||z' - c'||, with c'
    and z' the projections of c and z onto the hyperplane a.x = b and
    rho = sqrt(R^2 - ||c' - c||^2).  (``project_ball_halfspace_bisect`` is a bisection on
    the multiplier, used only to check this closed form.)
"""

from __future__ import annotations

import numpy as np


# ----------------------------------------------------------------------------- projections
def project_ball(z, c, R):
    v = np.asarray(z, float) - c
    n = np.linalg.norm(v)
    return c + v if n <= R else c + v * (R / n)


def project_hyperplane(z, a, b):
    return z - (np.dot(a, z) - b) / np.dot(a, a) * a


def project_ball_halfspace(z, c, R, a, b):
    """Pi onto {||x - c|| <= R} n {a.x <= b} (closed form, see the module docstring)."""
    z = np.asarray(z, float)
    p = project_ball(z, c, R)
    if np.dot(a, p) <= b:
        return p
    h = z if np.dot(a, z) <= b else project_hyperplane(z, a, b)
    if np.linalg.norm(h - c) <= R:
        return h
    c_plane = project_hyperplane(c, a, b)
    rho2 = R * R - np.dot(c_plane - c, c_plane - c)
    if rho2 < 0:
        raise ValueError("the ball and the halfspace do not meet")
    v = project_hyperplane(z, a, b) - c_plane
    return c_plane + np.sqrt(rho2) * v / np.linalg.norm(v)


def project_ball_halfspace_bisect(z, c, R, a, b, iters=200):
    """Same projection by bisection on the multiplier mu of a.x <= b:
    x(mu) = Pi_B(z - mu a), a.x(mu) - b non-increasing in mu; returns the feasible end."""
    x0 = project_ball(z, c, R)
    if np.dot(a, x0) <= b:
        return x0
    lo, hi = 0.0, 1.0
    while np.dot(a, project_ball(z - hi * a, c, R)) > b:
        hi *= 2.0
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if np.dot(a, project_ball(z - mid * a, c, R)) > b:
            lo = mid
        else:
            hi = mid
    return project_ball(z - hi * a, c, R)


def prox_penalty(y, alpha, beta, c, R, a, b):
    """argmin_{||x - c|| <= R} alpha/2 ||x - y||^2 + beta [a.x - b]_+.
    KKT: x = Pi_B(y - mu a / alpha) with mu in beta * subdiff [.]_+: mu = 0 if Pi_B(y) is
    feasible, mu = beta if a.Pi_B(y - beta a / alpha) >= b, else a.x = b and x is the
    projection of y onto ball n {a.x <= b} (same KKT system with multiplier mu / alpha)."""
    x0 = project_ball(y, c, R)
    if np.dot(a, x0) - b <= 0:
        return x0
    xb = project_ball(y - (beta / alpha) * a, c, R)
    if np.dot(a, xb) - b >= 0:
        return xb
    return project_ball_halfspace(y, c, R, a, b)


# ----------------------------------------------------------------------------- helpers
class Setup:
    """Ball B(c, R), loss s ||x - theta||^2, constraint a.x <= b, replayed theta and U."""

    def __init__(self, c, R, a, b, theta, U, scale=1.0):
        self.c = np.asarray(c, float)
        self.R = float(R)
        self.a = np.asarray(a, float)
        self.b = float(b)
        self.theta = np.asarray(theta, float)
        self.U = np.asarray(U, float)
        self.s = float(scale)
        self.T, self.d = self.theta.shape
        self.d_hull = self.d  # the two-point factor's dimension (X's affine hull)

    def f(self, x, t):
        r = x - self.theta[t - 1]
        return self.s * np.dot(r, r)

    def grad_f(self, x, t):
        return 2.0 * self.s * (x - self.theta[t - 1])

    def g(self, x):
        return np.dot(self.a, x) - self.b

    def two_point(self, x, t, delta):
        u = self.U[t - 1]
        return self.d_hull / (2 * delta) * (self.f(x + delta * u, t) - self.f(x - delta * u, t)) * u

    def gradient(self, x, t, delta, bandit):
        return self.two_point(x, t, delta) if bandit else self.grad_f(x, t)

    def shrunk(self, xi):
        return (1.0 - xi) * self.R

    def project(self, z, xi, bandit=True):
        return project_ball(z, self.c, self.shrunk(xi) if bandit else self.R)

    def project_known(self, z, xi):
        """(1-xi)X n {g <= 0}: the fixed constraint is known in advance."""
        return project_ball_halfspace(z, self.c, self.shrunk(xi), self.a, self.b)


class SetSetup(Setup):
    """Any set X through its projections (e.g. cvxpy's): ``project(z, xi)`` onto (1-xi)X,
    ``project_known(z, xi)`` onto (1-xi)X n {g <= 0}; ``c`` the point the runs start from
    (X's inscribed centre), ``d_hull`` the dimension of X's affine hull (the simplex: d - 1)."""

    def __init__(self, c, theta, U, project, project_known, d_hull, scale=1.0):
        super().__init__(c, 0.0, np.zeros_like(np.asarray(c, float)), 0.0, theta, U, scale)
        self._project, self._project_known, self.d_hull = project, project_known, int(d_hull)

    def project(self, z, xi, bandit=True):
        return self._project(z, xi if bandit else 0.0)

    def project_known(self, z, xi):
        return self._project_known(z, xi)


# ----------------------------------------------------------------------------- baselines
def flaxman(S: Setup, *, nu, delta, xi, known=True):
    """y_1 = Pi(c); play x_t = y_t + delta u_t; y_{t+1} = Pi(y_t - nu (d/delta) f_t(x_t) u_t);
    Pi onto (1-xi)X n {g <= 0} when g is ``known`` in advance, else onto (1-xi)X."""
    proj = S.project_known if known else S.project
    y = proj(S.c, xi)
    played = np.empty((S.T, S.d))
    for t in range(1, S.T + 1):
        u = S.U[t - 1]
        x = y + delta * u
        played[t - 1] = x
        y = proj(y - nu * (S.d_hull / delta) * S.f(x, t) * u, xi)
    return played, y


def agarwal(S: Setup, *, eta, delta, xi, sigma=1.0, mode="convex", known=True):
    """x_{t+1} = Pi(x_t - eta_t g~_t), eta_t = eta | eta/sqrt(t) | 1/(sigma t); Pi as in
    ``flaxman``."""
    proj = S.project_known if known else S.project
    x = proj(S.c, xi)
    played = np.empty((S.T, S.d))
    for t in range(1, S.T + 1):
        played[t - 1] = x
        step = {"convex": eta, "anytime": eta / np.sqrt(t), "strong": 1.0 / (sigma * t)}[mode]
        x = proj(x - step * S.two_point(x, t, delta), xi)
    return played, x


def mahdavi(S: Setup, *, eta, delta_m, delta, xi, bandit=True):
    """x_{t+1} = Pi_B(x_t - eta (g^_t + lam_t a)); lam_{t+1} = [lam_t + eta (g(x_t) - delta_m eta lam_t)]_+."""
    x, lam = S.c.copy(), 0.0
    played, lams = np.empty((S.T, S.d)), np.empty(S.T)
    for t in range(1, S.T + 1):
        played[t - 1], lams[t - 1] = x, lam
        grad = S.gradient(x, t, delta, bandit)
        x_new = S.project(x - eta * (grad + lam * S.a), xi, bandit)
        lam = max(lam + eta * (S.g(x) - delta_m * eta * lam), 0.0)
        x = x_new
    return played, x, lams


def mahdavi_rows(S: Setup, A, b, *, eta, delta_m, delta, xi, bandit=True):
    """Mahdavi et al. with one multiplier per constraint (BASELINES.md: "Several constraints:
    one lambda per constraint"), rows a_k.x <= b_k:
    x_{t+1} = Pi_B(x_t - eta (g^_t + sum_k lam_k a_k));
    lam_{t+1,k} = [lam_k + eta (a_k.x_t - b_k - delta_m eta lam_k)]_+ ."""
    A, b = np.asarray(A, float), np.asarray(b, float)
    x, lam = S.c.copy(), np.zeros(len(b))
    played, lams = np.empty((S.T, S.d)), np.empty(S.T)
    for t in range(1, S.T + 1):
        played[t - 1], lams[t - 1] = x, lam.sum()
        grad = S.gradient(x, t, delta, bandit)
        x_new = S.project(x - eta * (grad + A.T @ lam), xi, bandit)
        lam = np.maximum(lam + eta * (A @ x - b - delta_m * eta * lam), 0.0)
        x = x_new
    return played, x, lams


def recoo(
    S: Setup,
    *,
    c=0.5,
    eps=0.1,
    sigma=1.0,
    alpha_scale=1.0,
    gamma_scale=1.0,
    eta_scale=1.0,
    strongly_convex=False,
):
    """Algorithm 1 with the true gradient, prox over X:
    x_{t+1} = argmin_X <grad, x - x_t> + lam_t gamma_t [g]_+ + alpha_t/2 ||x - x_t||^2;
    lam_{t+1} = max(lam_t + gamma_{t+1} [g(x_t)]_+, eta_{t+1})."""
    alpha = (
        (lambda t: alpha_scale * sigma * t) if strongly_convex else (lambda t: alpha_scale * t**c)
    )
    gamma = lambda t: gamma_scale * t ** (c + eps)
    eta = lambda t: eta_scale * t**c
    x, lam = S.c.copy(), 0.0
    played, lams = np.empty((S.T, S.d)), np.empty(S.T)
    for t in range(1, S.T + 1):
        played[t - 1], lams[t - 1] = x, lam
        at = alpha(float(t))
        y = x - S.grad_f(x, t) / at
        x_new = prox_penalty(y, at, lam * gamma(float(t)), S.c, S.R, S.a, S.b)
        lam = max(lam + gamma(float(t + 1)) * max(S.g(x), 0.0), eta(float(t + 1)))
        x = x_new
    return played, x, lams


def yuan_lamperski(S: Setup, *, eta, sigma, delta, xi, bandit=True):
    """lam_t = [g(x_t)]_+ / (sigma eta); x_{t+1} = Pi_B(x_t - eta (g^_t + lam_t grad [g]_+(x_t)))."""
    x = S.c.copy()
    played, lams = np.empty((S.T, S.d)), np.empty(S.T)
    for t in range(1, S.T + 1):
        played[t - 1] = x
        lam = max(S.g(x), 0.0) / (sigma * eta)
        lams[t - 1] = lam
        grad_clip = S.a if S.g(x) > 0 else np.zeros(S.d)
        x = S.project(x - eta * (S.gradient(x, t, delta, bandit) + lam * grad_clip), xi, bandit)
    return played, x, lams


def yu_neely(S: Setup, *, V, alpha, gamma, delta, xi, bandit=True):
    """Yu & Neely (2020), drift-plus-penalty on the queue of the scaled constraint gamma g:
    the primal subproblem argmin_X V <g^, x - x_t> + w <a, x - x_t> + alpha ||x - x_t||^2 with
    w = max(Q_t + gamma g(x_t), 0) gamma (the queue weight on grad (gamma g) = gamma a) is the
    step x_{t+1} = Pi(x_t - (V g^_t + w a) / (2 alpha));
    Q_{t+1} = max(-gamma g(x_{t+1}), Q_t + gamma g(x_{t+1}))  (so Q_t + gamma g(x_t) >= 0 for t >= 2)."""
    x, Q = S.c.copy(), 0.0
    played, Qs = np.empty((S.T, S.d)), np.empty(S.T)
    for t in range(1, S.T + 1):
        played[t - 1], Qs[t - 1] = x, Q
        grad = S.gradient(x, t, delta, bandit)
        # Q_t + gamma g(x_t) >= 0 from t = 2 on; at t = 1 (Q_1 = 0, x_1 strictly feasible) it
        # is negative, and the weight is taken as 0 there (the subproblem stays convex)
        weight = max(Q + gamma * S.g(x), 0.0) * gamma
        assert t == 1 or Q + gamma * S.g(x) >= -1e-12
        x = S.project(x - (V * grad + weight * S.a) / (2 * alpha), xi, bandit)
        Q = max(-gamma * S.g(x), Q + gamma * S.g(x))
    return played, x, Qs
