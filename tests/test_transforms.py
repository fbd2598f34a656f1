"""Hyperparameters are traced arrays: a run can be vmapped over them and differentiated."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import constraints, losses, sequences, sets, simulate
from jaxbco.hyper import Hyper
from jaxbco.problem import Problem

FLOAT64 = True  # float64 runs and finite differences (tests/conftest.py)

D, T = 3, 40


@functools.cache
def _problem():
    """The problem with float64 data (built inside the module's x64 context, not at import)."""
    A = jnp.ones(D) / np.sqrt(D)
    return Problem(
        sets.L2Ball(jnp.zeros(D), 1.0),
        losses.Quadratic(),
        sequences.IIDNormal(0.6 * A, jnp.full(D, 0.2)),
        constraints.Linear(),
        sequences.Fixed((A, jnp.asarray(0.3))),
    )


@functools.cache
def _fn():
    """The float64 whole run."""
    return simulate.make_run(_problem(), T, checkpoints=np.asarray([T]), dtype="float64")


def FN(*args):
    return _fn()(*args)


KEY = jax.random.key(0)
IDS = jnp.arange(4)


def _mean_regret(scale):
    h = Hyper(c=0.5, eps=0.1, xi=0.05, delta=0.02, alpha_scale=scale)
    return jnp.mean(FN(KEY, h, IDS)["regret"])


def test_make_run_matches_sweep():
    h = Hyper(c=0.6, eps=0.2, xi=0.05, delta=0.02)
    res = simulate.sweep(_problem(), T, h, seeds=4, checkpoints=np.asarray([T]), dtype="float64")
    out = FN(KEY, h, IDS)
    np.testing.assert_array_equal(np.asarray(out["regret"]), res.regret)


def test_make_run_inside_the_callers_jit_gives_the_same_numbers():
    """Concrete inputs closed over inside the caller's jit (JAX allows compiler options on
    the outermost jit only): the same bits as the direct call."""
    h = Hyper(c=0.6, eps=0.2, xi=0.05, delta=0.02)
    direct = FN(KEY, h, IDS)["regret"]
    nested = jax.jit(lambda: FN(KEY, h, IDS)["regret"])()
    np.testing.assert_array_equal(np.asarray(direct), np.asarray(nested))


def test_vmap_over_a_hyperparameter():
    scales = jnp.asarray([0.5, 1.0, 2.0])
    vm = jax.vmap(_mean_regret)(scales)
    loop = jnp.stack([_mean_regret(s) for s in scales])
    np.testing.assert_allclose(vm, loop, rtol=1e-12)


def test_gradient_through_a_whole_run_matches_finite_differences():
    """d/d(alpha_scale) of the mean regret: forward and reverse mode agree with a central
    difference (the run is piecewise smooth in alpha_scale; h small enough to stay on a piece)."""
    s0 = 1.3
    g_rev = jax.grad(_mean_regret)(s0)
    g_fwd = jax.jacfwd(_mean_regret)(s0)
    h = 1e-6
    fd = (_mean_regret(s0 + h) - _mean_regret(s0 - h)) / (2 * h)
    assert np.isfinite(g_rev) and g_rev != 0.0
    np.testing.assert_allclose(g_fwd, g_rev, rtol=1e-9)
    np.testing.assert_allclose(g_rev, fd, rtol=1e-4)


def test_smooth_prox_derivatives_match_finite_differences():
    """Dual's smooth path searches in while_loops on non-differentiated data and takes its
    derivatives from the fixed-length polish (an implicit Newton step on the multiplier):
    jacfwd and jacrev wrt y agree with central differences (float64, ellipsoid constraint
    active, ball and simplex; measured max error 5e-8 and 6e-9 at 0.24 scale)."""
    from jaxbco import solvers

    with jax.enable_x64(True):
        d = 6
        rng = np.random.default_rng(0)
        M = rng.normal(size=(d, d))
        P = jnp.asarray(M @ M.T / d + 0.5 * np.eye(d))
        for dom in (sets.L2Ball(jnp.zeros(d), 1.0), sets.Simplex(d)):
            c, _ = dom.inscribed_ball()
            phi = (P, c, jnp.asarray(0.02))
            con = constraints.Ellipsoid()
            y0 = jnp.asarray(c + 0.3 * rng.normal(size=d))
            solve = jax.jit(
                lambda y: solvers.Dual().solve(
                    dom, jnp.asarray(0.0), con, phi, y, y, jnp.asarray(1.0), jnp.asarray(50.0)
                )
            )
            x = solve(y0)
            assert -1e-12 < float(con.value(x, phi)) <= 0.0  # the constraint is active
            h = 1e-6
            fd = np.stack(
                [(solve(y0.at[i].add(h)) - solve(y0.at[i].add(-h))) / (2 * h) for i in range(d)], 1
            )
            fwd = np.asarray(jax.jacfwd(solve)(y0))
            rev = np.asarray(jax.jacrev(solve)(y0))
            scale = np.max(np.abs(fd))
            assert scale > 0.1
            np.testing.assert_allclose(fwd, fd, atol=1e-5 * scale)
            np.testing.assert_allclose(rev, fwd, atol=1e-12)
