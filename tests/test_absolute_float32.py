"""The absolute loss's x* in float32 (``jaxbco.offline.absolute``, its certificate's steered cuts):
on a ball with a binding budget row, every seed's x* is within float32's resolution of the
float64 optimum of the same (float32) data, by cvxpy/CLARABEL, and its certificate passes and
bounds the true excess.  F's slopes lie on one grid (2k - T) / T for every coordinate, so the
optimal set is a face and a float32 answer sits a fraction of a piece off its kinks: the
certificate must see the pieces beside x, not only x's own."""

from __future__ import annotations

import warnings

import cvxpy as cp
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import Problem, certificate, constraints, losses, sequences, sets
from jaxbco.comparator import offline_optimum
from jaxbco.draws import round_data
from jaxbco.keys import seed_keys
from jaxbco.offline import variation

D, T, SEEDS = 8, 500, 8


def _problem():
    return Problem(
        sets.L2Ball(jnp.zeros(D), 1.0),
        losses.Absolute(),
        sequences.IIDNormal(jnp.full(D, 0.5), 0.2),
        constraints.Linear(),
        sequences.Fixed((jnp.ones(D), 0.5)),
    )


def _optimum(theta):
    """F* and x* of the same data in float64 (CLARABEL)."""
    x = cp.Variable(D)
    goal = cp.sum(cp.abs(x[None, :] - theta)) / T
    prob = cp.Problem(cp.Minimize(goal), [cp.norm(x) <= 1.0, np.ones(D) @ x <= 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return float(prob.value)


def test_float32_absolute_x_star_is_certified_and_within_resolution():
    problem = _problem()
    keys = seed_keys(jax.random.key(0), jnp.arange(SEEDS))
    xs = jax.jit(jax.vmap(lambda k: offline_optimum(problem, k, T)))(keys)
    certs = jax.jit(jax.vmap(lambda k, x: certificate.certify_seed(problem, k, T, x)))(keys, xs)
    assert xs.dtype == jnp.float32
    ts = jnp.arange(1, T + 1, dtype=jnp.int32)
    tol = certificate.tolerance(jnp.float32)
    for s in range(SEEDS):
        theta = np.asarray(jax.vmap(lambda t: round_data(problem, keys[s], t)[0])(ts), np.float64)
        x = np.asarray(xs[s], np.float64)
        F = float(np.mean(np.sum(np.abs(x[None] - theta), axis=1)))
        F_star = _optimum(theta)
        scale = float(variation.measured(problem, keys[s], T, xs[s]))  # the gap's scale
        assert x.sum() <= 0.5 + 1e-6 and np.linalg.norm(x) <= 1.0 + 1e-6
        excess = (F - F_star) / scale
        assert -1e-7 <= excess <= 2e-5, (s, excess)  # float32: ~ 100 eps of F at most
        gap = float(certs.gap[s])
        assert gap <= tol, (s, gap)
        # the certificate bounds the true excess, up to F's float32 round-off (T d terms)
        assert gap >= excess - 64 * np.finfo(np.float32).eps, (s, gap, excess)
