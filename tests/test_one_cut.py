"""The one-cut duality bound (``jaxbco.offline.one_cut``) and the batch gate built on it
(``certificate.certify_batch``, ``comparator.optima`` / ``stream_optima``).

float64 against cvxpy/CLARABEL: the bound is ~0 at the optimum of a smooth problem on each set
(box, simplex, L2 and L1 balls; linear and quadratic losses; a smooth g of a user's), at the
multiplier read off x's face and at the searched one, and never below the true relative excess
at feasible points that are not optimal.  The gate: a batch's
certificates and x* equal, seed for seed, those of ``certify_seed`` / ``offline_optimum`` called
one seed at a time, both where every seed passes the bound and where some fail it (a kinked g).
"""

from __future__ import annotations

import cvxpy as cp  # a hard test dependency: missing fails, never skips
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import Problem, certificate, comparator, sets
from jaxbco import constraints as C
from jaxbco import losses as L
from jaxbco import sequences as Seq
from jaxbco.keys import seed_keys
from jaxbco.offline import one_cut, variation
from jaxbco.offline.cuts import set_cuts

D = 5
CLARABEL = dict(
    solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11, max_iter=400
)
_W = 3.0 * np.random.default_rng(3).normal(size=(3, D))


def _domain(name):
    if name == "box":
        return sets.Box(-jnp.ones(D), jnp.ones(D)), lambda z: [z >= -1, z <= 1]
    if name == "simplex":
        return sets.Simplex(D), lambda z: [z >= 0, cp.sum(z) == 1]
    if name == "l2":
        return sets.L2Ball(jnp.full(D, 0.1), jnp.asarray(1.0)), lambda z: [cp.norm(z - 0.1) <= 1.0]
    return sets.L1Ball(jnp.full(D, -0.1), jnp.asarray(1.2)), lambda z: [cp.norm1(z + 0.1) <= 1.2]


def _g(x):
    """A smooth convex g of a user's: log-sum-exp of three rows, cutting every set's corner."""
    return jax.nn.logsumexp(jnp.asarray(_W) @ x) - 1.5


def _g_cvx(z):
    return cp.log_sum_exp(_W @ z) - 1.5


@pytest.mark.parametrize("search", [False, True], ids=["guessed", "searched"])
@pytest.mark.parametrize("loss", ["linear", "quadratic"])
@pytest.mark.parametrize("name", ["box", "simplex", "l2", "l1"])
def test_bound_exact_at_optimum_and_sound_elsewhere(x64, name, loss, search):
    """The searched multiplier: ~0 at the optimum; the one read off x*'s face: within a factor
    2 of it there (both at the floor CLARABEL's x* leaves: l1-quadratic 1.05e-8 against
    8.2e-9); either never below the true relative excess elsewhere."""
    domain, dom_cvx = _domain(name)
    m = np.linspace(1.5, -1.0, D)
    z = cp.Variable(D)
    obj = -m @ z if loss == "linear" else cp.sum_squares(z - m)
    cp.Problem(cp.Minimize(obj), [*dom_cvx(z), _g_cvx(z) <= 0]).solve(**CLARABEL)
    x_star = np.asarray(z.value)
    F = (lambda x: -jnp.dot(m, x)) if loss == "linear" else (lambda x: jnp.sum((x - m) ** 2))
    F_star = float(F(jnp.asarray(x_star)))

    moduli = (2.0 if loss == "quadratic" else 0.0, 0.0)  # F's strong convexity; g's: 0

    def measure(x, search=search):
        x, f, s, c, q = _cuts(F, jnp.asarray(x))
        cx, qx = set_cuts(domain, x, 1e-10)
        at_x = jnp.concatenate([c[None], cx]), jnp.concatenate([q[None], qx])
        U = variation.directions(domain, x, *at_x)
        F_points = jax.vmap(F)(variation.farthest(domain, x, U, jax.vmap(_g)))
        V = variation.spread(f, F_points, 0.0)  # F's variation over the feasible region
        out = one_cut.bound(domain, x, f, s, c, q, V, search, moduli)
        return out, float(f), float(V)

    (sv, cv, gap), _, V = measure(x_star)
    assert V > 0.1, V  # F varies over the feasible region: the scale is not degenerate
    if search:
        assert float(gap) <= 1e-8, gap  # CLARABEL's own accuracy is ~1e-10
    else:
        searched = float(measure(x_star, True)[0][2])
        assert float(gap) <= 2 * searched + 1e-12, (float(gap), searched)
    assert float(cv) <= 1e-9 and float(sv) <= 1e-9, (cv, sv)
    assert float(g_at := _g(jnp.asarray(x_star))) > -1e-6, g_at  # g binds: a real test

    # feasible points that are not optimal: x* mixed with X's centre
    centre = np.asarray(domain.inscribed_ball()[0])
    assert float(_g(jnp.asarray(centre))) < 0
    for w in (0.02, 0.2, 0.7):
        y = (1 - w) * x_star + w * centre
        (_, _, gap_y), f_y, V_y = measure(y)
        excess = (f_y - F_star) / V_y
        assert excess > 1e-6, excess
        assert float(gap_y) >= excess - 1e-10, (w, float(gap_y), excess)


def _cuts(F, x):
    f, s = jax.value_and_grad(F)(x)
    c, q = jax.value_and_grad(_g)(x)
    return x, f, s, c, q


def test_bound_not_finite_is_inf(x64):
    domain = sets.Box(-jnp.ones(D), jnp.ones(D))
    x = jnp.zeros(D)
    s = jnp.ones(D)
    nan = jnp.full(D, jnp.nan)
    out = one_cut.bound(domain, x, jnp.asarray(0.0), s, jnp.asarray(0.0), nan, jnp.asarray(1.0))
    assert not np.isfinite(float(out[2])) and not np.isfinite(float(out[1]))


def _custom_problem(g):
    return Problem(
        domain=sets.Box(-jnp.ones(D), jnp.ones(D)),
        loss=L.Quadratic(),
        loss_data=Seq.IIDNormal(jnp.ones(D), 0.1 * jnp.ones(D)),
        constraint=C.CustomConstraint(g),
        constraint_data=Seq.Fixed(jnp.asarray([0.5, -0.4, 0.3, -0.2, 0.1])),
    )


def _smooth_g(x, phi):
    return jnp.sum((x - phi) ** 2) - 0.5


def _kinked_g(x, phi):  # the L1 budget of docs/own-problem.md: kinks where x* sits
    return jnp.sum(jnp.abs(x - phi)) - 0.6


@pytest.mark.parametrize("g", [_smooth_g, _kinked_g], ids=["smooth", "kinked"])
def test_batch_gate_equals_one_seed_at_a_time(x64, g):
    """x* and its certificate of a batch (the gate) equal ``offline_optimum`` and
    ``certify_seed`` seed by seed, with the one-cut bound passing for every seed (smooth g)
    or failing for some (a kinked g, and points moved off x*)."""
    problem, horizon = _custom_problem(g), 30
    keys = seed_keys(jax.random.key(0), jnp.arange(4))
    xs = jax.jit(lambda k: comparator.optima(problem, k, horizon))(keys)
    one = jax.jit(jax.vmap(lambda k: comparator.offline_optimum(problem, k, horizon)))(keys)
    np.testing.assert_array_equal(np.asarray(xs), np.asarray(one))
    # seeds 2, 3 off x*: their bound fails, so the batch takes the cuts' certificate
    pts = xs.at[2:].set(0.9 * xs[2:])
    batch = jax.jit(lambda k, p: certificate.certify_batch(problem, k, horizon, p))(keys, pts)
    seedwise = jax.jit(jax.vmap(lambda k, p: certificate.certify_seed(problem, k, horizon, p)))(
        keys, pts
    )
    for a, b in zip(batch, seedwise, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    ok = np.asarray(certificate.passes(batch, jnp.float64))
    assert not ok[2:].any(), batch
    if g is _smooth_g:
        assert ok[:2].all(), batch
        quick = jax.jit(jax.vmap(lambda k, p: certificate.quick(problem, k, horizon, p)))
        fast = quick(keys[:2], xs[:2])  # the passing seeds report the one-cut bound itself
        np.testing.assert_allclose(np.asarray(fast.gap), np.asarray(batch.gap[:2]), atol=1e-14)
