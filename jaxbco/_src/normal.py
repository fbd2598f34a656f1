"""Standard normal draws for the hot path: ``jax.random.normal``'s uniforms, a vectorisable erf^-1.

    z = sqrt(2) erfinv(u),   u ~ U(-1, 1)   (exactly the uniforms ``jax.random.normal`` uses),
    erfinv(u) = u p(w),      w = -log((1 - u)(1 + u)),

p: Giles' single-precision approximation (M. Giles, "Approximating the erfinv function",
GPU Computing Gems, 2011): a degree-8 polynomial in w - 5/2 for w < 5, in sqrt(w) - 3 beyond
(the coefficients XLA's own float32 ``erf_inv`` uses).  XLA computes w with ``log1p(-u^2)``;
on the CPU backend, fused with the Threefry hash into a (seeds, d) loop with a short minor
axis, that ``log1p`` costs several times a ``log``, which made the per-seed normal draws the
largest cost of a round.  Giles' original form with
``log`` vectorises.  Values agree with ``jax.random.normal`` to a few float32 ulps (tested),
not bitwise; a seed's draws still depend only on its key.  float64 (and other dtypes) give
``jax.random.normal``'s values bitwise (its uniforms through ``lax.erf_inv``).

The random bits come from ``seed_minor_bits``: ``jax.random.bits`` for one key, and under
``vmap`` over keys one elementwise Threefry-2x32 hash over a (*shape, keys) grid, the keys on
the minor axis (the same counters and the same bits as ``jax.random.bits``), so that XLA
vectorises the hash across seeds instead of along a short coordinate axis.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_batching import custom_vmap

from jaxbco._src import prng

# Giles (2011), single precision; highest degree first.
_CENTRAL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
_TAIL = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)


def erfinv_f32(u: jax.Array) -> jax.Array:
    """erf^-1(u) for float32 u in [-1, 1] (Giles 2011); +-inf at +-1."""
    w = -jnp.log((1.0 - u) * (1.0 + u))
    central = w < 5.0
    w = jnp.where(central, w - 2.5, jnp.sqrt(w) - 3.0)
    p = jnp.where(central, np.float32(_CENTRAL[0]), np.float32(_TAIL[0]))
    for a, b in zip(_CENTRAL[1:], _TAIL[1:]):
        p = jnp.where(central, np.float32(a), np.float32(b)) + p * w
    return jnp.where(jnp.abs(u) == 1.0, jnp.inf * u, p * u)


def seed_minor_bits(key: jax.Array, shape: tuple, width: int = 32) -> jax.Array:
    """``jax.random.bits(key, shape, uint{width})``, bitwise; vmapped over typed keys it is one
    hash over a (*shape, keys) grid (see the module docstring)."""
    shape = tuple(shape)

    @custom_vmap
    def bits(k):
        return prng.bits(k, shape, width)

    @bits.def_vmap
    def _rule(axis_size, in_batched, k):
        if not in_batched[0] or not prng.is_threefry(k):
            return jax.vmap(lambda kk: prng.bits(kk, shape, width))(
                k if in_batched[0] else jnp.broadcast_to(k, (axis_size,))
            ), True
        data = jax.random.key_data(k)
        out = prng.bits_words(data[:, 0], data[:, 1], shape, width)
        return jnp.moveaxis(out, -1, 0), True

    return bits(key)


def normal(key: jax.Array, shape=(), dtype=jnp.float32) -> jax.Array:
    """Standard normal array of ``shape``: ``jax.random.normal``'s uniforms through
    ``erfinv_f32`` for float32, ``jax.random.normal``'s own values for float64.

    Args:
        key: a typed threefry key (one run), or a ``KeyBlock``/``RoundKey`` (a block of runs).
        shape: the shape of one run's draw.
        dtype: float32 or float64.

    Returns:
        Standard normal numbers: ``shape`` for a typed key, ``(*shape, *runs)`` for a block.

    Example:
        >>> import jax
        >>> from jaxbco.keys import normal
        >>> normal(jax.random.key(0), (2,)).shape
        (2,)"""
    dtype = jnp.dtype(dtype)
    if isinstance(key, (prng.KeyBlock, prng.RoundKey)):  # a block of runs: (*shape, runs)
        prng.check_block_dtype(dtype)
        return normal_from_bits(prng.bits(key, tuple(shape), 8 * dtype.itemsize), dtype)
    if dtype not in (jnp.float32, jnp.float64):
        return jax.random.normal(key, shape, dtype)
    return normal_from_bits(seed_minor_bits(key, tuple(shape), 8 * dtype.itemsize), dtype)


def normal_from_bits(bits, dtype):
    """``normal``'s map from random bits (uint32 for float32, uint64 for float64) to N(0, 1)."""
    dtype = jnp.dtype(dtype)
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = prng.uniform_from_bits(bits, dtype, lo, 1.0)
    if dtype == jnp.float32:
        return np.float32(np.sqrt(2.0)) * erfinv_f32(u)
    return np.array(np.sqrt(2.0), dtype) * jax.lax.erf_inv(u)
