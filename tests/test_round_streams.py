"""The engine's round streams (``jaxbco._src.prng.RoundKey``, ``jaxbco.keys``): the counter
derivation against an independent NumPy Threefry-2x32, and the numbers' quality at >= 1e6
draws: normal moments and Kolmogorov-Smirnov per stream, no correlation between theta's and
u's stream (the two words of one hash), neighbouring seeds or neighbouring rounds."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxbco import keys
from jaxbco._src import normal, prng
from jaxbco._src.prng import KeyBlock

M32 = np.uint64(0xFFFFFFFF)


def _np_threefry(k0, k1, x0, x1):
    """Threefry-2x32-20 (Salmon et al. 2011) in NumPy uint64 arithmetic mod 2^32."""
    k0, k1, x0, x1 = (np.asarray(v, np.uint64) for v in np.broadcast_arrays(k0, k1, x0, x1))
    ks = (k0, k1, k0 ^ k1 ^ np.uint64(0x1BD11BDA))
    rot = ((13, 15, 26, 6), (17, 29, 16, 24))
    x0, x1 = (x0 + ks[0]) & M32, (x1 + ks[1]) & M32
    for i in range(5):
        for r in rot[i % 2]:
            x0 = (x0 + x1) & M32
            x1 = (((x1 << np.uint64(r)) | (x1 >> np.uint64(32 - r))) & M32) ^ x0
        x0 = (x0 + ks[(i + 1) % 3]) & M32
        x1 = (x1 + ks[(i + 2) % 3] + np.uint64(i + 1)) & M32
    return x0.astype(np.uint32), x1.astype(np.uint32)


def _seed_words(n, master=3):
    data = np.asarray(jax.random.key_data(keys.seed_keys(jax.random.key(master), jnp.arange(n))))
    return data[:, 0], data[:, 1]


def test_counter_derivation_matches_numpy_threefry():
    """Stream s of round t, number j: word s % 2 of H_k(t, (s >> 1) 2^28 + j) (32 bits),
    H_k(t, 2^31 + s 2^27 + j) joined (64 bits); derived keys H_k(t, 3 2^30 + s)."""
    k0, k1 = _seed_words(5)
    t = 1234
    j = np.arange(7, dtype=np.uint64)[:, None]
    for s in range(4):
        got = np.asarray(prng.bits(prng.round_key(k0, k1, t, s), (7,)))
        want = _np_threefry(k0, k1, t, ((s >> 1) << 28) + j)[s % 2]
        np.testing.assert_array_equal(got, want)
    with jax.enable_x64(True):
        got = np.asarray(prng.bits(prng.round_key(k0, k1, t, 2), (3,), 64))
        x0, x1 = _np_threefry(k0, k1, t, 2**31 + (2 << 27) + np.arange(3, dtype=np.uint64)[:, None])
        np.testing.assert_array_equal(got, (x0.astype(np.uint64) << np.uint64(32)) | x1)
    derived = prng.derive(prng.round_key(k0, k1, t, 3))
    y = _np_threefry(k0, k1, t, 3 * 2**30 + 3)
    np.testing.assert_array_equal(np.asarray(derived.k0), y[0])
    np.testing.assert_array_equal(np.asarray(derived.k1), y[1])


def test_one_run_and_block_draw_the_same_numbers():
    """A seed's numbers are the same drawn alone (a typed key, under vmap) or in a block."""
    seed_keys = keys.seed_keys(jax.random.key(9), jnp.arange(6))
    data = jax.random.key_data(seed_keys)
    block = KeyBlock(data[:, 0], data[:, 1])
    for s in range(3):
        one = jax.vmap(lambda k: normal.normal(keys.stream_key(k, 17, s), (4,)))(seed_keys)
        many = normal.normal(keys.stream_key(block, 17, s), (4,))
        np.testing.assert_array_equal(np.asarray(one), np.asarray(many).T)


@pytest.fixture(scope="module")
def draws():
    """Normals of streams 0, 1, 2: 512 seeds x 200 rounds x 10 coordinates (1,024,000 each),
    laid out (rounds, coordinates, seeds)."""
    k0, k1 = (jnp.asarray(w) for w in _seed_words(512))
    ts = jnp.arange(1, 201, dtype=jnp.int32)

    @jax.jit
    def one(t):
        return tuple(normal.normal(prng.round_key(k0, k1, t, s), (10,)) for s in range(3))

    return [np.asarray(a, np.float64) for a in jax.lax.map(one, ts)]


@pytest.mark.parametrize("stream", [0, 1, 2])
def test_each_stream_is_standard_normal(draws, stream):
    z = draws[stream].ravel()
    n = z.size
    assert n >= 1_000_000
    # moments against their sampling error (5 standard errors)
    assert abs(z.mean()) < 5 / np.sqrt(n)
    assert abs(z.var() - 1.0) < 5 * np.sqrt(2.0 / n)
    assert abs(stats.skew(z)) < 5 * np.sqrt(6.0 / n)
    assert abs(stats.kurtosis(z)) < 5 * np.sqrt(24.0 / n)
    assert stats.kstest(z, "norm").pvalue > 1e-3


def _corr_bound(n):
    return 5.0 / np.sqrt(n)  # 5 standard errors of a correlation of independent samples


def test_streams_seeds_and_rounds_uncorrelated(draws):
    z0, z1, z2 = draws  # (rounds, coordinates, seeds)
    pairs = {
        "theta vs u (one hash's two words)": (z0, z1),
        "theta vs constraint stream": (z0, z2),
        "neighbouring seeds": (z0[..., :-1], z0[..., 1:]),
        "neighbouring rounds": (z0[:-1], z0[1:]),
        "neighbouring coordinates": (z1[:, :-1], z1[:, 1:]),
    }
    for name, (a, b) in pairs.items():
        a, b = a.ravel(), b.ravel()
        r = np.corrcoef(a, b)[0, 1]
        assert abs(r) < _corr_bound(a.size), (name, r)
        # and of the squares (dependence a linear correlation would miss)
        r2 = np.corrcoef(a * a, b * b)[0, 1]
        assert abs(r2) < _corr_bound(a.size), (name, "squares", r2)
