"""The offline optimum's solvers: x* = argmin_{x in X} (1/T) sum_t f_t(x) s.t. every
g_t(x) <= 0 (Eq. 1) for one seed, by the loss's structure (``jaxbco.comparator`` chooses, and
certifies, among them; its docstring lists the methods)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco import constraints as C
from jaxbco._src import absolute, barrier, fista, ops
from jaxbco._src.prng import KeyBlock
from jaxbco._src.round_sums import mean_over_rounds
from jaxbco.draws import CONSTRAINT, sample
from jaxbco.solvers import Dual
from jaxbco.solvers.polyhedral import PolyhedralDual


def _big(dtype):
    return jnp.asarray(1e30 if dtype == jnp.float64 else 1e18, dtype)


def unsupported(problem) -> str | None:
    """Why ``offline_optimum`` cannot reduce the problem's constraints to one set (None when
    it can): decided from the components' types alone, before anything is traced."""
    data, fam = problem.constraint_data, problem.constraint
    if data.constant or (data.slack and fam.shift):
        return None
    if data.recorded() is not None and fam.kind in ("linear", "polyhedral"):
        return None
    if data.recorded() is not None and fam.kind == "smooth" and _has_barrier(problem.domain):
        return None
    return (
        f"the offline comparator x* takes a fixed constraint, a Shifted one with Slackened "
        f"data, replayed/alternating linear rows, or a replayed/alternating smooth g on a set "
        f"with a barrier (box, simplex, L1 or L2 ball); got {type(fam).__name__} with "
        f"{type(data).__name__} data (docs/own-problem.md lists the supported pairs; pass "
        f"comparator=False to run with regret against x_1)"
    )


def _has_barrier(domain) -> bool:
    return barrier.form(domain, domain.inscribed_ball()[0]) is not None


def every_round_slacks(problem, horizon):
    """z -> (-g_t(z) over the recorded rounds), for a smooth g with replayed or alternating
    data (a rotating ellipsoid): X n every round's {g_t <= 0} by the log-barrier method, each
    round one smooth slack (``jaxbco._src.barrier``); None for any other constraint."""
    data, fam = problem.constraint_data, problem.constraint
    if data.constant or fam.kind != "smooth":
        return None
    values = data.recorded(horizon)
    if values is None:
        return None
    return lambda z: -jax.vmap(lambda phi: fam.value(z, phi))(values)


def reduced_constraint(problem, seed_key, horizon):
    """(family, phi) whose feasible set is the intersection over t = 1..T."""
    data = problem.constraint_data
    fam = problem.constraint
    if data.constant:
        return fam, data.every_round()
    if data.slack and fam.shift:

        def body(smin, t):
            return jnp.minimum(smin, sample(data, seed_key, t, CONSTRAINT)[1]), None

        ts = jnp.arange(1, horizon + 1, dtype=jnp.int32)
        smin, _ = jax.lax.scan(body, jnp.full(_runs(seed_key), jnp.inf, data.low.dtype), ts)
        return fam, (data.base, smin)
    values = data.recorded(horizon)
    if values is not None and fam.kind in ("linear", "polyhedral"):
        A, b = jax.vmap(fam.rows)(values)
        return C.MultiLinear(), (A.reshape(-1, A.shape[-1]), b.reshape(-1))
    raise NotImplementedError(unsupported(problem))


def _runs(seed_key) -> tuple:
    """The run axes of a seed key: () for one typed key, the block's shape for a ``KeyBlock``
    (the comparator on seeds-minor blocks, ``jaxbco._src.blocks``)."""
    return tuple(seed_key.shape) if isinstance(seed_key, KeyBlock) else ()


_NEWTON_PASSES = 8
_MODEL_STEPS = 150


def _model_minimiser(project, x, g, H, steps):
    """argmin_{z in X n C} g.(z - x) + (1/2)(z - x)^T H (z - x): FISTA with adaptive restart,
    step 1/L with L from a power iteration on H (capped by ||H||_F, a bound on ||H||_2)."""
    dtype = x.dtype
    d = x.shape[0]
    v0 = jnp.ones_like(x) + 0.1 * jnp.arange(d, dtype=dtype).reshape((d,) + (1,) * (x.ndim - 1))
    matvec = lambda M, v: jnp.sum(M * v[None], axis=1)  # (d, d, runs) x (d, runs)

    def power(_, v):
        w = matvec(H, v)
        return w / jnp.maximum(jnp.sqrt(ops.inner(w, w)), jnp.finfo(dtype).tiny)

    v = jax.lax.fori_loop(0, 20, power, v0 / jnp.sqrt(ops.inner(v0, v0)))
    lip = jnp.minimum(1.1 * ops.inner(v, matvec(H, v)), jnp.sqrt(jnp.sum(H * H, axis=(0, 1))))
    lip = jnp.maximum(
        jnp.asarray(lip, dtype), jnp.finfo(dtype).tiny
    )  # a user's bound: the run's dtype
    one = jnp.ones(x.shape[1:], dtype)

    def body(_, carry):
        z_prev, w, tk = carry
        z = project(w - (g + matvec(H, w - x)) / lip)
        t_new = 0.5 * (1.0 + jnp.sqrt(1.0 + 4.0 * tk * tk))
        w_new = z + ((tk - 1.0) / t_new) * (z - z_prev)
        restart = ops.inner(w - z, z - z_prev) > 0
        return z, jnp.where(restart, z, w_new), jnp.where(restart, one, t_new)

    z, _, _ = jax.lax.fori_loop(0, steps, body, (x, x, one))
    return z


def _projected_newton(problem, seed_key, horizon, project, x0):
    """x* for a twice-differentiable loss: passes over the rounds, each summing (f, grad f,
    Hessian) of the mean loss at a candidate.  A candidate no worse than the current point is
    accepted and the next one is x + p, p = (the minimiser of the local quadratic model over
    X n C) - x; otherwise the step is halved.  Every candidate lies in X n C (a convex
    combination of two of its points).  A lane stops once its next step is within
    sqrt(eps) (1 + |x|) (max norms): a full Newton step that small is taken without a pass to
    check it (its change of F, ~|p|^2, is below F's round-off, so that pass could only flip a
    coin), a halved one is not taken; at most ``_NEWTON_PASSES`` passes."""
    stats = lambda x: mean_over_rounds(
        problem, seed_key, horizon, lambda th: problem.loss.derivatives(x, th)
    )
    dtype = x0.dtype
    tol = jnp.sqrt(jnp.finfo(dtype).eps)
    runs = x0.shape[1:]
    one = jnp.ones(runs, dtype)

    def settle(x, p, t, fresh):
        """(the point a lane stops at, whether it stops): x + p for a small fresh step, x for
        a small halved one."""
        small = jnp.max(jnp.abs(t * p), axis=0) <= tol * (1.0 + jnp.max(jnp.abs(x), axis=0))
        return jnp.where(small & fresh, x + p, x), small

    f0, g0, H0 = stats(x0)
    p0 = _model_minimiser(project, x0, g0, H0, _MODEL_STEPS) - x0
    x0, done0 = settle(x0, p0, one, True)

    def body(carry):
        x, f, p, t, k, done = carry
        cand = x + t * p
        fc, gc, Hc = stats(cand)
        ok = fc <= f
        p_new = _model_minimiser(project, cand, gc, Hc, _MODEL_STEPS) - cand
        x_new, p_new, t_new = (
            jnp.where(ok, cand, x),
            jnp.where(ok, p_new, p),
            jnp.where(ok, 1.0, 0.5 * t).astype(t.dtype),
        )
        x_new, small = settle(x_new, p_new, t_new, ok)
        new = (x_new, jnp.where(ok, fc, f), p_new, t_new, k + 1, done | small)
        keep = lambda old, n: jnp.where(done, old, n)  # a stopped lane stays as it is
        return jax.tree_util.tree_map(keep, carry[:4], new[:4]) + new[4:]

    start = (x0, f0, p0, one, jnp.zeros((), jnp.int32), done0)
    x = jax.lax.while_loop(lambda c: (c[4] < _NEWTON_PASSES - 1) & ~jnp.all(c[5]), body, start)[0]
    return x


def _from_mean_theta(problem, fam, phi, theta_bar):
    """x* of a quadratic loss (Pi_{X n C}(mean theta)) or a linear one (min <mean theta, x>
    over X n C, by proximal point steps), from the mean of theta_t."""
    domain = problem.domain
    c, _ = domain.inscribed_ball()
    dtype = c.dtype
    project = _projector(domain, fam, phi, c)
    rows = _barrier_rows(domain, fam, phi, theta_bar)
    if rows is not None:  # many rows: the log-barrier method, exact
        w = 1.0 if problem.loss.offline == "quadratic" else 0.0
        return _per_run(lambda v: barrier.solve(domain, *rows, w, -v if w else v), theta_bar)
    curved = _barrier_curved(domain, fam, phi, theta_bar, problem.loss.offline)
    if curved is not None:  # a linear loss on a curved C: the log-barrier method on the LP
        none = jnp.zeros((0, theta_bar.shape[0]), dtype), jnp.zeros((0,), dtype)
        return _per_run(lambda v: barrier.solve(domain, *none, 0.0, v, curved), theta_bar)
    if problem.loss.offline == "quadratic":
        return project(theta_bar)
    norm = jnp.sqrt(ops.inner(theta_bar, theta_bar))
    step = _PROX_REACH * domain.diameter() / jnp.where(norm > 0, norm, 1.0)
    eps = jnp.finfo(dtype).eps
    far = _WARM_REACH if C.structured(fam) and not _many_rows(fam, phi) else 0.0

    def body(carry):
        x, k, done, reach_k = carry
        x_new = project(x - reach_k * step * theta_bar)  # proximal point step on <theta_bar, x>
        moved = jnp.max(jnp.abs(x_new - x), axis=0)
        # stop where x stops moving, or F stops decreasing beyond its round-off (a curved set
        # is approached linearly in x but quadratically in F)
        decrease = ops.inner(theta_bar, x - x_new)
        reach = jnp.sqrt(ops.inner(x, x)) + domain.diameter()
        still = (moved <= 8 * eps * (1.0 + jnp.max(jnp.abs(x), axis=0))) | (
            decrease <= 8 * eps * norm * reach
        )
        still = still & (reach_k <= 1.0)  # the last step one of reach D
        # a step that still gains much doubles the next one's reach (a start far from x*: on a
        # curved boundary each step shrinks the error only by rho / (rho + reach D), rho its
        # radius of curvature); a small gain goes back to reach D, whose steps end it.  Only
        # where far points are projected well (``far`` > 0: not a user's g, nor many rows)
        big = (decrease > _FAR_GAIN * norm * domain.diameter()) & (far > 0)
        reach_k = jnp.where(big, jnp.minimum(2.0 * reach_k, _MAX_REACH), 1.0).astype(dtype)
        return jnp.where(done, x, x_new), k + 1, done | still, reach_k

    # start: the projection of a point _WARM_REACH D beyond c along -theta_bar (near x*: the
    # steps after it confirm and refine it); from c for a user's g, whose smooth interior
    # point loses its set from ~4 D away (a g without declared structure), and for more rows than the dual Newton takes (their
    # accelerated ascent is exact from ~D away but not from 1e3 D: 24 Replay rows, x* 0.15
    # off in float64, F 0.56% high; from c, 1e-13)
    x0 = project(c - (far / _PROX_REACH) * step * theta_bar)
    runs = x0.shape[1:]
    x, _, _, _ = jax.lax.while_loop(
        lambda s: (s[1] < _PROX_STEPS) & ~jnp.all(s[2]),
        body,
        (x0, jnp.zeros((), jnp.int32), jnp.zeros(runs, bool) | (norm <= 0), jnp.ones(runs, dtype)),
    )
    return x


def _projector(domain, fam, phi, c):
    """z -> Pi_{X n C}(z): the accurate prox solver with a penalty beta large enough to be
    exact on C's normalised data, or the log-barrier method for many rows."""
    dtype = c.dtype
    zero, one, big = jnp.zeros((), dtype), jnp.ones((), dtype), _big(dtype)
    solver = Dual(root_steps=80)  # exact roots on mu for every projection
    unit = fam.normalised(phi)  # the penalty is exact whatever g's scale
    big = big / fam.scale_at(c, unit)
    rows = _barrier_rows(domain, fam, phi, c)
    if rows is not None:  # many rows: every projection by the log-barrier method, exact
        return lambda z: _per_run(lambda v: barrier.solve(domain, *rows, 1.0, -v), z)
    return lambda z: solver.solve(domain, zero, fam, unit, z, z, one, big)


def _barrier_rows(domain, fam, phi, x):
    """(A, b) where the comparator takes the log-barrier method (``jaxbco._src.barrier``):
    more rows than the dual Newton's, shared by the runs of ``x``, on a set with
    a barrier (``barrier.form``); else None."""
    if not _many_rows(fam, phi) or barrier.form(domain, x[(...,) + (0,) * (x.ndim - 1)]) is None:
        return None
    A, b = fam.rows(phi)
    return (A, b) if A.ndim == 2 and b.ndim == 1 else None


def _barrier_curved(domain, fam, phi, x, offline):
    """x -> -g(x) where a float64 linear loss meets a quadratic g (a ball or ellipsoid, fixed
    or shifted by its least slack) on a set with ``barrier_slacks``: the log-barrier method
    solves the problem directly (proximal point steps approach x* on a curved boundary only
    linearly and stop once F stops decreasing, ~sqrt(eps) away in position: a first-order
    certificate of 1e-7 in float64, within float32's); else None (float32 keeps the proximal
    point steps, 27x cheaper on box-ellipsoid)."""
    if offline != "linear" or C.unshifted(fam).quadratic_form is None:
        return None
    if x.dtype != jnp.float64:
        return None
    if x.ndim != 1 or barrier.form(domain, x) is None:
        return None
    return lambda z: -fam.value(z, phi)[None]


def _per_run(fn, x):
    """fn (d,) -> (d,) applied to each run of x (d, runs...)."""
    if x.ndim == 1:
        return fn(x)
    flat = x.reshape(x.shape[0], -1)
    return jax.vmap(fn, in_axes=1, out_axes=1)(flat).reshape(x.shape)


def _many_rows(fam, phi) -> bool:
    """Linear rows beyond the dual Newton's count (``PolyhedralDual.exact_rows``)."""
    return fam.kind == "polyhedral" and fam.rows(phi)[0].shape[0] > PolyhedralDual.exact_rows


_PROX_REACH = 1.0  # the proximal point step moves D along -theta before projecting
_PROX_STEPS = 100
_FAR_GAIN = 1e-4  # a proximal point step gaining more than this (relative) doubles the next
_MAX_REACH = 64.0  # the proximal point steps' longest reach, in D
_WARM_REACH = 1e3  # 1e8 D lost x* to round-off (yu-neely seed 0: F -0.628 against -0.672)


def solve(problem, seed_key, horizon: int) -> jax.Array:
    """x* for one seed by the loss's method (``jaxbco.comparator``'s docstring), or for a
    ``KeyBlock`` of seeds with the problem laid out for blocks (``jaxbco._src.blocks``; x* (d, seeds))."""
    domain = problem.domain
    c, _ = domain.inscribed_ball()
    dtype = c.dtype
    c = jnp.broadcast_to(c, c.shape[:1] + _runs(seed_key))
    loss = problem.loss
    curved = every_round_slacks(problem, horizon)
    if curved is None:
        fam, phi = reduced_constraint(problem, seed_key, horizon)
        project = _projector(domain, fam, phi, c)
    else:  # every round's smooth g: every projection (and the LP) by the log-barrier method
        fam = phi = None
        none = jnp.zeros((0, c.shape[0]), dtype), jnp.zeros((0,), dtype)
        by_barrier = lambda w, v: barrier.solve(domain, *none, w, -v if w else v, curved)
        project = lambda z: _per_run(lambda v: by_barrier(1.0, v), z)

    if loss.offline in ("quadratic", "linear"):
        theta_bar = mean_over_rounds(
            problem, seed_key, horizon, lambda th: jnp.broadcast_to(th, c.shape)
        )
        if curved is not None:
            w = 1.0 if loss.offline == "quadratic" else 0.0
            return _per_run(lambda v: by_barrier(w, v), theta_bar)
        return _from_mean_theta(problem, fam, phi, theta_bar)

    if loss.offline == "newton":
        return _projected_newton(problem, seed_key, horizon, project, project(c))
    x = fista.solve(problem, seed_key, horizon, project, c)
    if fam is not None and absolute.applies(problem, fam, x):  # |x - theta|_1: local LPs
        return absolute.polish(problem, fam, phi, seed_key, horizon, x)
    return x
