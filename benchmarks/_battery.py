"""A battery of random proximal subproblems (Eq. 5) with cvxpy references.

Each instance is   min_{x in S} P(x) = (alpha/2)||x - y||^2 + beta [g(x, phi)]_+,
S = (1-xi) X = c + (1-xi)(X - c), (c, r) = X's inscribed ball, drawn to cover:
  * rounds t in {1, 10, 1e3, 1e5} with alpha = t^0.5 and
    beta in {0, t^0.6, t^0.6 t^0.5 U(1, 100)} (beta/alpha up to ~3e7 at t = 1e5);
  * y near x_t (inside S), at moderate distance, or far (10 diameters) from S;
  * the constraint active (it cuts Pi_S(y) off, the centre c stays strictly feasible)
    or inactive (Pi_S(y) strictly feasible);
  * constraints Linear, MultiLinear (m = 3), Ellipsoid, Shifted(Linear), and
    g = ||x - q||^2 - s as a CustomConstraint (curvature bound 2, interior point q) and as
    ``constraints.Ball`` (closed form on a ball);
  * ``IllEllipsoid``: a dense Ellipsoid whose P has condition number 1e6 (eigenvalues
    log-spaced over [1e-6, 1] in a random basis), its third beta mode beta/alpha in
    [1e9, 1e10] (a late round).
The data are rounded through float32 once, so the same instance (and the same cvxpy
reference) serves the float64 and the float32 runs.

Shared by ``tests/test_solver_battery.py`` and ``benchmarks/solver_gaps.py``; needs cvxpy.
"""

from __future__ import annotations

import dataclasses
import zlib

import cvxpy as cp
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import constraints as C
from jaxbco import sets
from jaxbco.sets import project_shrunk

SETS = ("L2Ball", "Box", "Simplex", "L1Ball")
CONSTRAINTS = ("Linear", "MultiLinear", "Ellipsoid", "ShiftedLinear")
ALL_CONSTRAINTS = CONSTRAINTS + ("Custom", "Ball", "IllEllipsoid")
_STRIDE = 6  # instances' cycling offsets as before IllEllipsoid was added (same instances)
ROUNDS = (1.0, 10.0, 1e3, 1e5)
Y_MODES = ("near", "moderate", "far")
DIM = 10
M_ROWS = 3


def make_domain(name: str, dtype, d: int = DIM):
    f = lambda v: jnp.asarray(v, dtype)
    if name == "L2Ball":
        return sets.L2Ball(f(np.zeros(d)), f(1.0))
    if name == "Box":
        return sets.Box(f(-np.ones(d)), f(np.ones(d)))
    if name == "Simplex":
        return sets.Simplex(d, f(1.0))
    if name == "L1Ball":
        return sets.L1Ball(f(np.zeros(d)), f(1.5))
    raise ValueError(name)


def custom_sqdist(x, phi):
    """A user constraint for ``CustomConstraint``: g(x, (q, s)) = ||x - q||^2 - s."""
    q, s = phi
    return jnp.sum((x - q) ** 2) - s


def custom_interior(phi):
    return phi[0]


CUSTOM = C.CustomConstraint(custom_sqdist, curvature_bound=2.0, interior=custom_interior)


def make_constraint(name: str):
    if name == "Custom":
        return CUSTOM
    return {
        "Linear": C.Linear(),
        "MultiLinear": C.MultiLinear(),
        "Ellipsoid": C.Ellipsoid(),
        "IllEllipsoid": C.Ellipsoid(),
        "Ball": C.Ball(),
        "ShiftedLinear": C.Shifted(C.Linear()),
    }[name]


@dataclasses.dataclass
class Instance:
    """One subproblem; every array is float64 holding float32-representable values."""

    set_name: str
    con_name: str
    xi: float
    phi: tuple
    x0: np.ndarray
    y: np.ndarray
    alpha: float
    beta: float
    t: float
    beta_mode: int
    y_mode: str
    active: bool

    def args(self, dtype):
        """(xi, phi, x0, y, alpha, beta) as jnp arrays of ``dtype``."""
        f = lambda v: jnp.asarray(v, dtype)
        return (
            f(self.xi),
            jax.tree_util.tree_map(f, self.phi),
            f(self.x0),
            f(self.y),
            f(self.alpha),
            f(self.beta),
        )

    def label(self):
        return (
            f"{self.set_name}/{self.con_name} t={self.t:g} beta_mode={self.beta_mode} "
            f"y={self.y_mode} active={self.active}"
        )


def _r32(v):
    """Round through float32 (so float32 and float64 runs solve the same problem)."""
    return np.asarray(np.asarray(v, np.float64).astype(np.float32), np.float64)


def _tree_r32(tree):
    return jax.tree_util.tree_map(_r32, tree, is_leaf=lambda v: isinstance(v, (float, np.ndarray)))


def project_s64(set_name, xi, x, d=DIM):
    """Projection onto S in float64 (jaxbco's set projection; jax_enable_x64 must be on)."""
    dom = make_domain(set_name, jnp.float64, d)
    return np.asarray(
        project_shrunk(dom, jnp.asarray(x, jnp.float64), jnp.asarray(xi, jnp.float64))
    )


def s_violation(set_name, xi, x, d=DIM):
    """How far x lies outside S, in the set's own measure (0 inside), in float64 numpy."""
    dom = make_domain(set_name, np.float64, d)
    c = np.asarray(dom.inscribed_ball()[0], np.float64)
    z = c + (np.asarray(x, np.float64) - c) / (1.0 - xi)  # x in S iff z in X
    scale = 1.0 - xi
    if set_name == "L2Ball":
        return scale * max(np.linalg.norm(z) - 1.0, 0.0)
    if set_name == "Box":
        return scale * max(np.max(np.abs(z)) - 1.0, 0.0)
    if set_name == "Simplex":
        return scale * max(-np.min(z), abs(np.sum(z) - 1.0), 0.0)
    if set_name == "L1Ball":
        return scale * max(np.sum(np.abs(z)) - 1.5, 0.0)
    raise ValueError(set_name)


def g_value(con_name, phi, x):
    x = np.asarray(x, np.float64)
    if con_name == "Linear":
        a, b = phi
        return float(a @ x - b)
    if con_name == "MultiLinear":
        A, b = phi
        return float(np.max(A @ x - b))
    if con_name in ("Ellipsoid", "IllEllipsoid"):
        P, q, s = phi
        r = x - q
        return float(r @ P @ r - s)
    if con_name == "ShiftedLinear":
        (a, b), s = phi
        return float(a @ x - b - s)
    if con_name in ("Custom", "Ball"):
        q, s = phi
        return float((x - q) @ (x - q) - s)
    raise ValueError(con_name)


def prox_value(inst: Instance, x):
    """P(x) in float64 numpy."""
    r = np.asarray(x, np.float64) - inst.y
    return 0.5 * inst.alpha * float(r @ r) + inst.beta * max(
        g_value(inst.con_name, inst.phi, x), 0.0
    )


def _constraint_data(con_name, rng, c, p, active, d):
    """phi with c strictly feasible; Pi_S(y) = p violates g (active) or satisfies it (inactive)."""
    if con_name in ("Linear", "ShiftedLinear"):
        a = rng.normal(size=d)
        a *= rng.uniform(0.5, 3.0) / np.linalg.norm(a)
        if a @ (p - c) < 0:
            a = -a
        if active and a @ (p - c) > 1e-3:
            b = a @ c + rng.uniform(0.1, 0.9) * (a @ (p - c))
        else:
            b = max(a @ p, a @ c) + rng.uniform(0.05, 0.5)
        if con_name == "Linear":
            return (a, float(b))
        s = rng.uniform(0.0, 0.3)
        return ((a, float(b - s)), float(s))
    if con_name == "MultiLinear":
        A = rng.normal(size=(M_ROWS, d))
        A *= rng.uniform(0.5, 3.0, size=(M_ROWS, 1)) / np.linalg.norm(A, axis=1, keepdims=True)
        if A[0] @ (p - c) < 0:
            A[0] = -A[0]
        b = np.empty(M_ROWS)
        for i in range(M_ROWS):
            gap = A[i] @ (p - c)
            if active and gap > 1e-3:
                b[i] = A[i] @ c + rng.uniform(0.1, 0.9) * gap
            else:
                b[i] = max(A[i] @ p, A[i] @ c) + rng.uniform(0.05, 0.5)
        return (A, b)
    if con_name in ("Ellipsoid", "IllEllipsoid"):
        if con_name == "Ellipsoid":
            M = rng.normal(size=(d, d))
            P = M @ M.T / d + 0.1 * np.eye(d)
        else:
            basis = np.linalg.qr(rng.normal(size=(d, d)))[0]
            P = (basis * np.logspace(0.0, -6.0, d)) @ basis.T
        P = 0.5 * (P + P.T)
        q = c + 0.3 * (p - c) + 0.02 * rng.normal(size=d)
        r = p - q
        val = r @ P @ r
        s = rng.uniform(0.05, 0.9) * val if active else val * rng.uniform(1.1, 2.0) + 0.01
        return (P, q, float(s))
    if con_name in ("Custom", "Ball"):
        q = c + 0.3 * (p - c) + 0.02 * rng.normal(size=d)
        val = (p - q) @ (p - q)
        s = rng.uniform(0.05, 0.9) * val if active else val * rng.uniform(1.1, 2.0) + 0.01
        return (q, float(s))
    raise ValueError(con_name)


def make_battery(set_name: str, con_name: str, n: int, seed: int = 0, d: int = DIM):
    """n instances; instance i takes t = ROUNDS[i % 4] and beta mode (i // 4) % 3, so n >= 12
    covers every (t, beta) pair; y mode and activity cycle with an offset per combination."""
    j = SETS.index(set_name) * _STRIDE + ALL_CONSTRAINTS.index(con_name)
    rng = np.random.default_rng([seed, zlib.crc32(f"{set_name}/{con_name}".encode())])
    dom = make_domain(set_name, jnp.float64, d)
    c = np.asarray(dom.inscribed_ball()[0])
    diam = float(dom.diameter())
    out = []
    for i in range(n):
        t = ROUNDS[i % 4]
        beta_mode = (i // 4) % 3
        y_mode = Y_MODES[(i + j) % 3]
        active = bool((i + i // 4 + j) % 2 == 0)
        xi = float(rng.choice([0.0, 0.01, 0.1]))
        alpha = t**0.5
        beta = [0.0, t**0.6, t**0.6 * t**0.5 * rng.uniform(1.0, 100.0)][beta_mode]
        if con_name == "IllEllipsoid" and beta_mode == 2:
            beta = alpha * 10.0 ** rng.uniform(9.0, 10.0)
        # x_t: a point of S.
        xt = project_s64(set_name, xi, c + rng.normal(size=d), d)
        xt = c + rng.uniform(0.0, 1.0) * (xt - c)
        u = rng.normal(size=d)
        u /= np.linalg.norm(u)
        dist = {"near": 1e-2, "moderate": 0.3, "far": 10.0 * diam}[y_mode] * rng.uniform(0.5, 1.5)
        y = _r32(xt + dist * u)
        p = project_s64(set_name, _r32(xi), y, d)
        phi = _tree_r32(_constraint_data(con_name, rng, c, p, active, d))
        out.append(
            Instance(
                set_name,
                con_name,
                float(_r32(xi)),
                phi,
                _r32(xt),
                y,
                float(_r32(alpha)),
                float(_r32(beta)),
                t,
                beta_mode,
                y_mode,
                active,
            )
        )
    return out


def cvx_reference(inst: Instance, d: int = DIM):
    """(x_cvx, P(x_cvx)) by CLARABEL with tight tolerances, in float64.

    S is written by the substitution z = c + (x - c)/(1 - xi) in X.
    """
    x = cp.Variable(d)
    dom = make_domain(inst.set_name, np.float64, d)
    c = np.asarray(dom.inscribed_ball()[0], np.float64)
    z = c + (x - c) / (1.0 - inst.xi)
    if inst.set_name == "L2Ball":
        cons = [cp.norm(z) <= 1.0]
    elif inst.set_name == "Box":
        cons = [z >= -1.0, z <= 1.0]
    elif inst.set_name == "Simplex":
        cons = [z >= 0, cp.sum(z) == 1.0]
    else:
        cons = [cp.norm1(z) <= 1.5]
    phi = inst.phi
    if inst.con_name == "Linear":
        g = phi[0] @ x - phi[1]
    elif inst.con_name == "ShiftedLinear":
        g = phi[0][0] @ x - phi[0][1] - phi[1]
    elif inst.con_name == "MultiLinear":
        g = cp.max(phi[0] @ x - phi[1])
    elif inst.con_name in ("Ellipsoid", "IllEllipsoid"):
        P, q, s = phi
        g = cp.quad_form(x - q, cp.psd_wrap(P)) - s
    else:
        q, s = phi
        g = cp.sum_squares(x - q) - s
    value = lambda xv: prox_value(inst, xv)
    near = 0.5 * inst.alpha * cp.sum_squares(x - inst.y)
    found = [_solve_cvx(x, near + inst.beta * cp.pos(g), cons, value)]
    if inst.beta > 0 and inst.con_name in ("Ellipsoid", "IllEllipsoid"):
        # A large beta/alpha makes the penalised form ill-scaled for the conic solver (it may
        # fail at 1e10); the hard-constrained projection is a second candidate (the answer
        # whenever mu* <= beta), and the lower P is kept.
        found.append(_solve_cvx(x, near, cons + [g <= 0], value))
    found = [f for f in found if f is not None]
    if not found:
        raise RuntimeError(f"cvxpy failed on {inst.label()}")
    return min(found, key=lambda pair: pair[1])


def _solve_cvx(x, objective, cons, value):
    """(x, value(x)) by CLARABEL at tight tolerances (looser on failure); None if both fail."""
    prob = cp.Problem(cp.Minimize(objective), cons)
    tight = dict(
        tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, tol_ktratio=1e-10, max_iter=500
    )
    for options in (tight, dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)):
        try:
            prob.solve(solver=cp.CLARABEL, **options)
        except cp.SolverError:
            continue
        if x.value is not None:
            xv = np.asarray(x.value, np.float64)
            return xv, value(xv)
    return None


def rel_gap(p, p_ref):
    return (p - p_ref) / max(abs(p_ref), 1e-12)


EPS32 = float(np.finfo(np.float32).eps)


def g_abs_scale(con_name, phi, x):
    """Sum of the magnitudes that enter g(x): float32 evaluates g to within ~EPS32 times this."""
    x = np.abs(np.asarray(x, np.float64))
    if con_name == "Linear":
        a, b = phi
        return float(np.abs(a) @ x + abs(b))
    if con_name == "ShiftedLinear":
        (a, b), s = phi
        return float(np.abs(a) @ x + abs(b) + abs(s))
    if con_name == "MultiLinear":
        A, b = phi
        return float(np.max(np.abs(A) @ x + np.abs(b)))
    if con_name in ("Ellipsoid", "IllEllipsoid"):
        P, q, s = phi
        r = np.abs(x - q)
        return float(r @ np.abs(P) @ r + 2.0 * (np.abs(P) @ r) @ (x + np.abs(q)) + abs(s))
    if con_name in ("Custom", "Ball"):
        q, s = phi
        r = np.abs(x - q)
        return float(r @ r + 2.0 * r @ (x + np.abs(q)) + abs(s))
    raise ValueError(con_name)


def roundoff_noise(inst: Instance, x_star, eps: float = EPS32):
    """Round-off scale of P near x*: eps [alpha (||x*-y|| + eps m) m + beta G_abs(x*)],
    m = ||x*|| + ||y||, eps float32's unless given.  No computation in that precision resolves
    P more finely than a few times this: it cannot represent x* more finely than eps ||x*||,
    nor decide the sign of g to better than eps G_abs, and a violation that small still costs
    beta times it (with beta/alpha = 1e10 this exceeds 1e-6 of P even in float64)."""
    m = float(np.linalg.norm(x_star) + np.linalg.norm(inst.y))
    quad = inst.alpha * (float(np.linalg.norm(x_star - inst.y)) + eps * m) * m
    return eps * (quad + inst.beta * g_abs_scale(inst.con_name, inst.phi, x_star))


@eqx.filter_jit
def _solve_many(solver, domain, constraint, xi, phi, x0, y, alpha, beta):
    one = lambda xi, phi, x0, y, alpha, beta: solver.solve(
        domain, xi, constraint, phi, x0, y, alpha, beta
    )
    return jax.vmap(one)(xi, phi, x0, y, alpha, beta)


def solve_batch(solver, set_name, con_name, insts, dtype):
    """Solver answers for a list of instances of one (set, constraint), as an (n, d) float64
    array.  One compiled, vmapped call; float32 runs with 64-bit JAX switched off (the
    package's float32 default), float64 runs with it on."""
    with jax.enable_x64(np.dtype(dtype) == np.float64):
        args = [inst.args(dtype) for inst in insts]
        stacked = jax.tree_util.tree_map(lambda *v: jnp.stack(v), *args)
        x = _solve_many(solver, make_domain(set_name, dtype), make_constraint(con_name), *stacked)
        x = np.asarray(x)
    return x.astype(np.float64)
