"""Independent NumPy (float64) reference implementation of Algorithm 1 of
Hikima (2023), "Multi-point Feedback of Bandit Convex Optimization with Hard Constraints"
(arXiv:2310.10946), with two-point feedback.

Written from the paper (Sec. 2.4 Eq. (4), Sec. 3 Eq. (5), Algorithm 1, Theorem 1), not from
the jaxbco sources, so that it serves as an independent check of the JAX simulator.

Scope: feasible set X = L2 ball {||x - centre|| <= R} or box [lo, hi]; loss
f_t(x) = scale ||x - theta_t||^2 or <theta_t, x>; one fixed linear constraint g(x) = a.x - b.

Conventions (readings of the printed algorithm):
  * x_1 = centre of the inscribed ball of X (ball: its centre; box: its midpoint), lambda_1 = 0.
  * round t: grad_t = d / (2 delta) [f_t(x_t + delta u_t) - f_t(x_t - delta u_t)] u_t   (Eq. 4)
  * x_{t+1} = argmin_{x in S} <grad_t, x - x_t> + lambda_t gamma_t [g(x)]_+
                               + alpha_t / 2 ||x - x_t||^2                              (Eq. 5)
    with S = c + (1 - xi)(X - c), c the inscribed-ball centre.
  * lambda_{t+1} = max(lambda_t + gamma_{t+1} [g(x_t)]_+, eta_{t+1})        (line 9, g at x_t)
  * alpha_t = alpha_scale t^c, gamma_t = gamma_scale t^(c+eps), eta_t = eta_scale t^c (Thm 1).

The per-round subproblem is solved exactly: with y = x_t - grad_t / alpha_t and
beta = lambda_t gamma_t it reads  min_{x in S} alpha/2 ||x - y||^2 + beta [a.x - b]_+ .
Its KKT conditions give x = Pi_S(y - mu a / alpha) for some mu in beta * d[.]_+(a.x - b), i.e.
  mu = 0        if a.Pi_S(y) <= b,
  mu = beta     if a.Pi_S(y - beta a / alpha) >= b,
  mu in (0, beta) with a.Pi_S(y - mu a / alpha) = b otherwise.
phi(mu) = a.Pi_S(y - mu a / alpha) - b is continuous and non-increasing in mu (projections onto
convex sets are monotone operators), so the last case is found by bisection.
"""

from __future__ import annotations

import numpy as np


# --------------------------------------------------------------------------- feasible sets
class Ball:
    """X = {x : ||x - centre||_2 <= radius}."""

    def __init__(self, centre, radius):
        self.centre = np.asarray(centre, dtype=np.float64)
        self.radius = float(radius)

    def inscribed_centre(self):
        return self.centre.copy()

    def shrunk(self, xi):
        """c + (1 - xi)(X - c) with c = centre: the ball of radius (1 - xi) R."""
        return Ball(self.centre, (1.0 - xi) * self.radius)

    def project(self, z):
        v = np.asarray(z, dtype=np.float64) - self.centre
        n = np.sqrt(np.dot(v, v))
        if n <= self.radius:
            return self.centre + v
        return self.centre + v * (self.radius / n)

    def contains(self, x, tol=0.0):
        v = np.asarray(x) - self.centre
        return np.sqrt(np.dot(v, v)) <= self.radius + tol


class BoxSet:
    """X = [lo, hi] (coordinate-wise)."""

    def __init__(self, lo, hi):
        self.lo = np.asarray(lo, dtype=np.float64)
        self.hi = np.asarray(hi, dtype=np.float64)

    def inscribed_centre(self):
        return 0.5 * (self.lo + self.hi)

    def shrunk(self, xi):
        """c + (1 - xi)(X - c) with c = midpoint: the box of half-widths (1 - xi) h."""
        mid = 0.5 * (self.lo + self.hi)
        half = 0.5 * (self.hi - self.lo)
        return BoxSet(mid - (1.0 - xi) * half, mid + (1.0 - xi) * half)

    def project(self, z):
        return np.clip(np.asarray(z, dtype=np.float64), self.lo, self.hi)

    def contains(self, x, tol=0.0):
        x = np.asarray(x)
        return bool(np.all(x >= self.lo - tol) and np.all(x <= self.hi + tol))


# --------------------------------------------------------------------------- losses
def quadratic_loss(scale=1.0):
    """f(x, theta) = scale ||x - theta||^2."""

    def f(x, theta):
        r = x - theta
        return scale * np.dot(r, r)

    return f


def linear_loss():
    """f(x, theta) = <theta, x>."""

    def f(x, theta):
        return np.dot(theta, x)

    return f


# --------------------------------------------------------------------------- subproblem
def solve_subproblem(y, alpha, beta, a, b, S, iters=200):
    """argmin_{x in S} alpha/2 ||x - y||^2 + beta [a.x - b]_+  (exact up to bisection).

    Returns the minimiser.  In the bisection case the feasible end (a.x <= b) is returned.
    """
    a = np.asarray(a, dtype=np.float64)
    x0 = S.project(y)
    if np.dot(a, x0) - b <= 0.0:
        return x0  # mu = 0: unconstrained prox already feasible
    xb = S.project(y - (beta / alpha) * a)
    if np.dot(a, xb) - b >= 0.0:
        return xb  # mu = beta: full penalty slope still binding
    lo, hi = 0.0, float(beta)  # phi(lo) > 0 >= phi(hi)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:  # interval cannot shrink any further
            break
        xm = S.project(y - (mid / alpha) * a)
        if np.dot(a, xm) - b > 0.0:
            lo = mid
        else:
            hi = mid
    return S.project(y - (hi / alpha) * a)


# --------------------------------------------------------------------------- Algorithm 1
def run_reference(
    X, f, theta, U, a, b, *, c, eps, xi, delta, alpha_scale=1.0, gamma_scale=1.0, eta_scale=1.0
):
    """Run Algorithm 1 for T = len(theta) rounds.

    X: Ball or BoxSet; f(x, theta_t): loss; theta: (T, d) replayed loss data (round t uses
    theta[t-1]); U: (T, d) replayed unit directions (round t uses U[t-1]); g(x) = a.x - b.

    Returns (xs, lams, x_next): xs (T, d) = x_1..x_T, lams (T,) = lambda_1..lambda_T and
    x_next = x_{T+1}.
    """
    theta = np.asarray(theta, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)
    b = float(b)
    T, d = theta.shape
    assert U.shape == (T, d)

    def g(x):
        return np.dot(a, x) - b

    alpha = lambda t: alpha_scale * float(t) ** c
    gamma = lambda t: gamma_scale * float(t) ** (c + eps)
    eta = lambda t: eta_scale * float(t) ** c

    S = X.shrunk(xi)
    x = X.inscribed_centre()
    lam = 0.0
    xs = np.empty((T, d))
    lams = np.empty(T)
    for t in range(1, T + 1):
        xs[t - 1] = x
        lams[t - 1] = lam
        th, u = theta[t - 1], U[t - 1]
        # line 5 / Eq. (4): two-point gradient estimate
        grad = (d / (2.0 * delta)) * (f(x + delta * u, th) - f(x - delta * u, th)) * u
        # line 6 / Eq. (5): proximal step on the shrunk set
        at = alpha(t)
        y = x - grad / at
        beta = lam * gamma(t)
        x_new = solve_subproblem(y, at, beta, a, b, S)
        # line 9: lambda_{t+1} = max(lambda_t + gamma_{t+1} [g(x_t)]_+, eta_{t+1})
        lam = max(lam + gamma(t + 1) * max(g(x), 0.0), eta(t + 1))
        x = x_new
    return xs, lams, x
