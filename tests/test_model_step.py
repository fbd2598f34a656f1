"""The polyhedral dual's model step (``solvers._capped_simplex.model_step``) on seeds-minor
blocks: the maximiser of a concave quadratic over the capped simplex, against an independent
float64 NumPy enumeration; a lane's answer the same alone as in any block (one guessed face
where its KKT conditions hold, the enumeration on a gathered chunk or the whole block else);
one row in closed form."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco._src.xla import YNN_OFF
from jaxbco.solvers import _capped_simplex as cs

_JIT = {"compiler_options": dict(YNN_OFF)}


def _instances(m, n, seed, cold=False):
    """Random models: K = B B^T + 0.1 I, G, beta, nu in Delta (half its rows zero, or 0)."""
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(m, m, n))
    K = np.einsum("ijn,kjn->ikn", B, B) + 0.1 * np.eye(m)[..., None]
    G = 2.0 * rng.normal(size=(m, n))
    beta = rng.uniform(0.1, 3.0, size=n)
    nu = np.abs(rng.normal(size=(m, n))) * (rng.uniform(size=(m, n)) < 0.5) * (not cold)
    total = nu.sum(0)
    nu = np.where(total > beta, nu * beta / np.maximum(total, 1e-9), nu)
    return [np.asarray(a, np.float32) for a in (nu, G, K, beta)]


def _q(z, nu, G, K):
    d = z - nu
    return G @ d - 0.5 * d @ K @ d


def _reference(nu, G, K, beta):
    """max over {z >= 0, sum z <= beta} of q, float64: every face's stationary point (off the
    cap and on it), the feasible ones compared.  On a face F (z = 0 off F):
    K_FF z_F + tau 1 = K_FF nu_F + G_F + K_{F,F^c} nu_{F^c}, tau = 0 off the cap, else
    1^T z_F = beta."""
    m = nu.shape[0]
    best, arg = -np.inf, None
    for size in range(1, m + 1):
        for F in itertools.combinations(range(m), size):
            F, C = list(F), [i for i in range(m) if i not in F]
            KFF = K[np.ix_(F, F)]
            rhs = KFF @ nu[F] + G[F] + K[np.ix_(F, C)] @ nu[C]
            for cap in (False, True):
                z = np.zeros(m)
                if cap:
                    M = np.block(
                        [[KFF, np.ones((size, 1))], [np.ones((1, size)), np.zeros((1, 1))]]
                    )
                    z[F] = np.linalg.solve(M, np.concatenate([rhs, [beta]]))[:size]
                else:
                    z[F] = np.linalg.solve(KFF, rhs)
                if np.all(z >= -1e-12) and z.sum() <= beta * (1 + 1e-12):
                    value = _q(z, nu, G, K)
                    if value > best:
                        best, arg = value, z
    zero = np.zeros(m)
    if _q(zero, nu, G, K) > best:
        best, arg = _q(zero, nu, G, K), zero
    return arg, best


@pytest.mark.parametrize("m", [1, 2, 3, 4])
@pytest.mark.parametrize("cold", [False, True])
def test_block_is_the_maximiser(m, cold):
    nu, G, K, beta = _instances(m, 512, seed=m, cold=cold)
    z, value = jax.jit(cs.model_step, **_JIT)(*map(jnp.asarray, (nu, G, K, beta)))
    z = np.asarray(z, np.float64)
    args64 = [np.asarray(a, np.float64) for a in (nu, G, K, beta)]
    worst = 0.0
    for lane in range(nu.shape[1]):
        n_, g_, k_, b_ = (a[..., lane] for a in args64)
        z_ref, q_ref = _reference(n_, g_, k_, b_)
        assert np.all(z[:, lane] >= 0) and z[:, lane].sum() <= b_ * (1 + 1e-6)
        scale = 1.0 + abs(q_ref) + np.abs(g_).sum() * (np.abs(n_).sum() + b_)
        worst = max(worst, (q_ref - _q(z[:, lane], n_, g_, k_)) / scale)
    assert worst <= 2e-6, worst


def test_one_row_closed_form():
    """m = 1: the enumeration's compiled block code had lanes off the maximiser by up to 0.09
    (seed 2: 2 of 4096); the closed form is exact to round-off."""
    nu, G, K, beta = _instances(1, 4096, seed=2)
    z, _ = jax.jit(cs.model_step, **_JIT)(*map(jnp.asarray, (nu, G, K, beta)))
    args64 = [np.asarray(a, np.float64) for a in (nu, G, K, beta)]
    exact = np.clip(args64[0] + args64[1] / args64[2][0], 0.0, args64[3])
    np.testing.assert_allclose(np.asarray(z, np.float64), exact, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("cold", [False, True])
def test_a_lane_alone_equals_its_block(cold):
    """A lane's answer does not depend on the lanes beside it, bitwise, whichever branch its
    block took (all KKT, one chunk or several enumerated).  Blocks come padded to 16 lanes
    with copies of the last (``SEED_PAD``), as the engine pads its seeds."""
    nu, G, K, beta = _instances(3, 304, seed=7, cold=cold)
    step = jax.jit(cs.model_step, **_JIT)
    z, value = step(*map(jnp.asarray, (nu, G, K, beta)))
    _, _, ok = jax.jit(cs.kkt_face, **_JIT)(*map(jnp.asarray, (nu, G, K, beta)))
    assert 0 < int(np.sum(~np.asarray(ok))) < 304  # both kinds of lanes present
    for lanes in (slice(5, 6), slice(10, 13), slice(0, 40), slice(100, 300)):
        n = lanes.stop - lanes.start
        pad = np.r_[np.arange(lanes.start, lanes.stop), np.full(-n % 16, lanes.stop - 1)]
        part = [np.take(a, pad, axis=-1) for a in (nu, G, K, beta)]
        z_p, v_p = step(*map(jnp.asarray, part))
        np.testing.assert_array_equal(np.asarray(z_p)[:, :n], np.asarray(z)[:, lanes])
        np.testing.assert_array_equal(np.asarray(v_p)[:n], np.asarray(value)[lanes])
