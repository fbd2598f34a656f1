"""NumPy peers of the throughput workload (independent of jaxbco's code).

Workload: d-dimensional quadratic loss f_t(x) = ||x - theta_t||^2 with theta_t ~ N(theta0, 0.1^2),
||theta0|| = 0.6 along a = 1/sqrt(d); one fixed constraint <a, x> <= 0.3; X the unit ball;
Theorem 1 schedule (c = 1/2, eps = 0.1, delta = 1/T, xi = delta); two-point estimate; prox step
by K projected-subgradient steps (step 1/(alpha k)) or exactly (ball n halfspace, closed form).
Metrics: running loss, hard and soft violation, and sum theta (for x* at the end).
"""

from __future__ import annotations

import numpy as np


def _proj_ball(z, radius):
    n = np.sqrt(np.sum(z * z, axis=-1, keepdims=True))
    return z * np.minimum(1.0, radius / np.maximum(n, 1e-30))


def _exact_prox(y, a, b, alpha, beta, radius):
    """argmin_{||x|| <= radius} alpha/2 ||x - y||^2 + beta [a.x - b]_+ (rows of y), a unit."""
    x0 = _proj_ball(y, radius)
    slack = x0 @ a - b <= 0
    xb = _proj_ball(y - (beta / alpha)[:, None] * a, radius)
    saturated = xb @ a - b > 0
    p = y - (y @ a - b)[:, None] * a  # onto the hyperplane
    ch = b * a  # centre of the disk ball n hyperplane (ball centred at 0)
    rho = np.sqrt(np.maximum(radius**2 - b * b, 0.0))
    v = p - ch
    nv = np.sqrt(np.sum(v * v, axis=-1, keepdims=True))
    xs = ch + v * np.minimum(1.0, rho / np.maximum(nv, 1e-30))
    return np.where(slack[:, None], x0, np.where(saturated[:, None], xb, xs))


def _subgradient_prox(x, y, a, b, alpha, beta, radius, steps):
    for k in range(1, steps + 1):
        g = x @ a - b
        sub = alpha[:, None] * (x - y) + np.where(g > 0, beta, 0.0)[:, None] * a
        x = _proj_ball(x - sub / (alpha[:, None] * k), radius)
    return x


def numpy_vectorised(
    seeds: int, horizon: int, dim: int, steps: int, solver: str, dtype=np.float32, seed: int = 0
):
    """Arrays over seeds, a Python loop over rounds (what a careful NumPy user writes)."""
    rng = np.random.default_rng(seed)
    a = (np.ones(dim) / np.sqrt(dim)).astype(dtype)
    b, c, eps = dtype(0.3), 0.5, 0.1
    delta = dtype(1.0 / horizon)
    radius = dtype(1.0 - delta)  # (1 - xi) X with xi = delta / r, r = 1
    theta0 = (0.6 * a).astype(dtype)
    x = np.zeros((seeds, dim), dtype)
    lam = np.zeros(seeds, dtype)
    loss = np.zeros(seeds, dtype)
    hard = np.zeros(seeds, dtype)
    soft = np.zeros(seeds, dtype)
    theta_sum = np.zeros((seeds, dim), dtype)
    for t in range(1, horizon + 1):
        theta = theta0 + dtype(0.1) * rng.standard_normal((seeds, dim), dtype=dtype)
        u = rng.standard_normal((seeds, dim), dtype=dtype)
        u /= np.sqrt(np.sum(u * u, axis=1, keepdims=True))
        r = x - theta
        loss += np.sum(r * r, axis=1)
        g = x @ a - b
        hard += np.maximum(g, 0)
        soft += g
        theta_sum += theta
        fp = np.sum((r + delta * u) ** 2, axis=1)
        fm = np.sum((r - delta * u) ** 2, axis=1)
        grad = (dim / (2 * delta)) * (fp - fm)[:, None] * u
        alpha = np.full(seeds, dtype(t**c))
        gamma = dtype(t ** (c + eps))
        y = x - grad / alpha[:, None]
        beta = lam * gamma
        if solver == "subgradient":
            x_new = _subgradient_prox(x, y, a, b, alpha, beta, radius, steps)
        else:
            x_new = _exact_prox(y, a, b, alpha, beta, radius)
        lam = np.maximum(lam + dtype((t + 1) ** (c + eps)) * np.maximum(g, 0), dtype((t + 1) ** c))
        x = x_new.astype(dtype)
    return loss, hard, soft, theta_sum


def per_seed_loop(
    seeds: int, horizon: int, dim: int, steps: int, solver: str, dtype=np.float32, seed: int = 0
):
    """One seed at a time, one round at a time (what a researcher writes first)."""
    out = []
    for s in range(seeds):
        out.append(numpy_vectorised(1, horizon, dim, steps, solver, dtype, seed + s))
    return out


def _ball_inplace(z, radius, tmp, n):
    """z <- Pi_{||.|| <= radius}(z) for the columns of z (d, S), in place."""
    np.multiply(z, z, out=tmp)
    np.sum(tmp, axis=0, out=n)
    np.sqrt(n, out=n)
    np.maximum(n, 1e-30, out=n)
    np.divide(radius, n, out=n)
    np.minimum(n, 1.0, out=n)
    z *= n


def numpy_seeds_minor(
    seeds: int, horizon: int, dim: int, steps: int, solver: str, dtype=np.float32, seed: int = 0
):
    """The same algorithm with seeds as the minor axis, (d, S), and in-place updates: every
    reduction over d is a vector add across seeds (the strongest NumPy peer we could write)."""
    rng = np.random.default_rng(seed)
    S, d = seeds, dim
    a = (np.ones(d) / np.sqrt(d)).astype(dtype)
    a_col = a[:, None]
    b, c, eps = dtype(0.3), 0.5, 0.1
    delta = dtype(1.0 / horizon)
    radius = dtype(1.0 - delta)
    theta0 = (0.6 * a).astype(dtype)[:, None]
    x = np.zeros((d, S), dtype)
    lam, loss, hard, soft = (np.zeros(S, dtype) for _ in range(4))
    theta_sum = np.zeros((d, S), dtype)
    theta, u, r, tmp, y, w, v = (np.empty((d, S), dtype) for _ in range(7))
    n, g, fp, fm, s1, s2, beta = (np.empty(S, dtype) for _ in range(7))
    rho = np.sqrt(max(float(radius) ** 2 - float(b) ** 2, 0.0))
    for t in range(1, horizon + 1):
        rng.standard_normal(out=theta, dtype=dtype)
        theta *= dtype(0.1)
        theta += theta0
        rng.standard_normal(out=u, dtype=dtype)
        np.multiply(u, u, out=tmp)
        np.sum(tmp, axis=0, out=n)
        np.sqrt(n, out=n)
        u /= n
        np.subtract(x, theta, out=r)
        np.multiply(r, r, out=tmp)
        np.sum(tmp, axis=0, out=s1)
        loss += s1
        np.dot(a, x, out=g)
        g -= b
        np.maximum(g, 0, out=s1)
        hard += s1
        soft += g
        theta_sum += theta
        # f(x +- delta u) - f(x - delta u) = 4 delta <r, u>
        np.multiply(r, u, out=tmp)
        np.sum(tmp, axis=0, out=fp)
        alpha = dtype(t**c)
        gamma = dtype(t ** (c + eps))
        np.multiply(fp, dtype(d * 2.0 / alpha), out=fp)  # d/(2 delta) * 4 delta <r,u> / alpha
        np.multiply(u, fp, out=y)
        np.subtract(x, y, out=y)  # y = x - grad / alpha
        np.multiply(lam, gamma, out=beta)
        if solver == "subgradient":
            x_new = w
            np.copyto(x_new, x)
            for k in range(1, steps + 1):
                np.dot(a, x_new, out=s1)
                np.greater(s1, b, out=s2, casting="unsafe")
                s2 *= beta
                s2 *= dtype(1.0 / (alpha * k))  # beta 1{g > 0} / (alpha k)
                np.subtract(x_new, y, out=tmp)
                tmp *= dtype(1.0 / k)  # alpha (x - y) / (alpha k)
                x_new -= tmp
                np.multiply(a_col, s2, out=tmp)
                x_new -= tmp
                _ball_inplace(x_new, radius, tmp, n)
        else:
            # slack: Pi_B(y) if a.Pi_B(y) <= b
            np.copyto(w, y)
            _ball_inplace(w, radius, tmp, n)
            np.dot(a, w, out=s1)
            # saturated: Pi_B(y - beta/alpha a) if its a.x > b
            np.multiply(a_col, beta * dtype(1.0 / alpha), out=v)
            np.subtract(y, v, out=v)
            _ball_inplace(v, radius, tmp, n)
            np.dot(a, v, out=s2)
            # on the hyperplane: centre b a plus the projection of y onto it, cut to radius rho
            np.dot(a, y, out=fm)
            fm -= b
            np.multiply(a_col, fm, out=tmp)
            np.subtract(y, tmp, out=r)
            r -= b * a_col
            _ball_inplace(r, rho, tmp, n)
            r += b * a_col
            np.copyto(r, v, where=s2 > b)
            np.copyto(r, w, where=s1 <= b)
            x_new = r
        np.maximum(g, 0, out=s1)
        s1 *= dtype((t + 1) ** (c + eps))
        lam += s1
        np.maximum(lam, dtype((t + 1) ** c), out=lam)
        if solver == "subgradient":
            x, w = w, x
        else:
            x, r = r, x
    return loss, hard, soft, theta_sum
