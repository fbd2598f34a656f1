"""jaxbco's random numbers: ``jax.random``'s own values, computed without its primitive.

JAX lowers its ``threefry2x32`` primitive on the CPU with the 20 rounds rolled into a
5-iteration ``while`` loop; inside a scan over rounds that loop ran for every draw and cost
more than the hashing itself.  Registering a faster
lowering would change JAX for every user in the process, so jaxbco instead computes the
same function with ordinary element-wise ops (``jaxbco._src.threefry``), scoped to its own
programs:

    fold_in(key, i)  = H_key(0, i)                      (both words: the new key)
    split(key, n)[i] = H_key(0, i)
    bits(key, shape) = x0 ^ x1 (32 bits) or x0 << 32 | x1 (64 bits),  (x0, x1) = H_key(0, j)

for the flat index j, H = Threefry-2x32-20: the partitionable scheme of ``jax.random``
(``jax_threefry_partitionable``, JAX's default), bitwise the same values (tested).  Keys of
another implementation, or JAX's non-partitionable scheme, go to ``jax.random`` itself.

``KeyBlock``: the keys of many runs as two uint32 word arrays (the runs on trailing axes).
``fold_in``, ``split``, ``bits`` and ``uniform`` (and ``jaxbco._src.normal.normal``) take one
wherever they take a key and return arrays laid out (*shape, *runs): seeds-minor blocks
(``jaxbco._src.blocks``).  So a sequence's ``sample`` or a set's ``sample_direction`` is one
function for one run (a typed key) and for a block of runs (a ``KeyBlock``), the same bits.

``RoundKey``: the engine's per-round streams, counter-based (``jaxbco.keys``).  Stream s of
round t of the seed key (k0, k1) draws number j from one hash of the counter (t, c):

    32 bits:  (x0, x1) = H_k(t, (s >> 1) 2^28 + j),   number j = x0 if s is even, x1 if odd
    64 bits:  (x0, x1) = H_k(t, 2^31 + s 2^27 + j),   number j = x0 2^32 + x1
    a key:    H_k(t, 3 2^30 + s)   (``derive``: for ``fold_in``/``split`` and typed-key users)

so streams 0 and 1 (theta_t and u_t) are the two words of one hash per coordinate, and no
round or stream key is hashed.  The fused GPU kernel computes that hash once per row; XLA's CPU
fusion recomputes it inside each consumer (materialising it is slower there).
The three counter ranges never meet (top bits 0x, 10, 11).
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src.threefry import threefry2x32_unrolled


class KeyBlock(eqx.Module):
    """Threefry keys of a block of runs: their data words ``k0``, ``k1`` (shape: the runs)."""

    k0: jax.Array
    k1: jax.Array

    @property
    def shape(self):
        return self.k0.shape


class RoundKey(eqx.Module):
    """Stream ``stream`` of round ``t`` for seed keys with data words ``k0``, ``k1`` (shape: the
    runs; () for one run).  Numbers by counter (module docstring): no key hashed per round."""

    k0: jax.Array
    k1: jax.Array
    t: jax.Array
    stream: int = eqx.field(static=True)
    #: (x0, x1) of counters (stream >> 1) 2^28 + j, j < n, laid out (n, *runs), hashed once for
    #: two streams that share them (``paired_keys``); None: hashed where drawn
    words: tuple | None = None

    @property
    def shape(self):
        return self.k0.shape

    def _replace_words(self, words):
        return RoundKey(self.k0, self.k1, self.t, self.stream, words)


#: Numbers per stream and round: counters below 2^28 (32 bits) and 2^27 (64 bits).
MAX_NUMBERS = 2**27


def round_key(k0, k1, t, stream: int) -> RoundKey:
    """``RoundKey`` of seed key words ``k0``, ``k1`` (the runs' shape), round ``t``."""
    if not 0 <= stream < 8:
        raise ValueError(f"stream must lie in [0, 8); got {stream}")
    return RoundKey(
        jnp.asarray(k0, jnp.uint32),
        jnp.asarray(k1, jnp.uint32),
        jnp.asarray(t).astype(jnp.uint32),
        stream,
    )


def paired_keys(k0, k1, t, n: int, width: int = 32) -> tuple[RoundKey, RoundKey]:
    """``RoundKey``s of streams 0 and 1 (theta_t, u_t) of round ``t`` whose 32-bit draws of n
    numbers share one hash per number, computed here once (its two words); 64-bit draws have
    their own counters, so for ``width`` 64 two plain keys.  The fused kernel's draws (there
    nothing merges two identical hashes, so each would be computed twice)."""
    keys = tuple(round_key(k0, k1, t, s) for s in (0, 1))
    if width != 32:
        return keys
    j = jax.lax.broadcasted_iota(jnp.uint32, (n,) + (1,) * keys[0].k0.ndim, 0)
    words = _hash_counters(keys[0], j)
    return tuple(k._replace_words(words) for k in keys)


def _hash_counters(key: RoundKey, c1):
    """H_k(t, c1) for counters c1 of shape (*shape, 1, ..): the runs on trailing axes."""
    runs = key.k0.ndim
    front = tuple(range(c1.ndim - runs))
    k0, k1 = jnp.expand_dims(key.k0, front), jnp.expand_dims(key.k1, front)
    return threefry2x32_unrolled(k0, k1, key.t + jnp.zeros_like(c1), c1)


def counter_bits(key: RoundKey, shape, width: int = 32):
    """The stream's numbers 0 .. n - 1 as bits, laid out (*shape, *runs) (module docstring)."""
    shape = tuple(shape)
    n = math.prod(shape)
    if n >= MAX_NUMBERS:
        raise ValueError(
            f"random bits of size {n} exceed the {MAX_NUMBERS} counters of a round's stream"
        )
    if width == 32 and key.words is not None and key.words[0].shape == shape + key.k0.shape:
        return key.words[key.stream % 2]
    j = jnp.arange(n, dtype=jnp.uint32).reshape(shape + (1,) * key.k0.ndim)
    if width == 32:
        return _hash_counters(key, j | np.uint32((key.stream >> 1) << 28))[key.stream % 2]
    x0, x1 = _hash_counters(key, j | np.uint32(2**31 + (key.stream << 27)))
    return (x0.astype(jnp.uint64) << np.uint64(32)) | x1.astype(jnp.uint64)


def derive(key: RoundKey):
    """A key of the stream for code that splits or folds it: H_k(t, 3 2^30 + stream); a typed
    threefry key for one run, a ``KeyBlock`` for a block of runs."""
    y0, y1 = _hash_counters(key, jnp.full(key.k0.shape, 3 * 2**30 + key.stream, jnp.uint32))
    if key.k0.ndim:
        return KeyBlock(y0, y1)
    return jax.random.wrap_key_data(jnp.stack([y0, y1], axis=-1), impl="threefry2x32")


def is_threefry(key) -> bool:
    """Whether ``key`` is a typed threefry key drawn with the partitionable scheme."""
    return jax.config.jax_threefry_partitionable and str(jax.random.key_impl(key)) in (
        "threefry2x32",
        "PRNGImpl{threefry2x32}",
        "fry",
    )


def _words(key):
    data = jax.random.key_data(key)
    return data[..., 0], data[..., 1]


def _wrap(k0, k1, like):
    return jax.random.wrap_key_data(jnp.stack([k0, k1], axis=-1), impl=jax.random.key_impl(like))


def fold_in_words(k0, k1, data):
    """Key data words of ``fold_in`` (element-wise over the words and ``data``)."""
    return threefry2x32_unrolled(
        k0, k1, jnp.zeros_like(k0), jnp.asarray(data, jnp.uint32) + jnp.zeros_like(k0)
    )


def fold_in(key, data):
    """``jax.random.fold_in(key, data)``, bitwise (a ``KeyBlock``: each run's key)."""
    if isinstance(key, RoundKey):
        key = derive(key)
    if isinstance(key, KeyBlock):
        return KeyBlock(*fold_in_words(key.k0, key.k1, data))
    if not is_threefry(key):
        return jax.random.fold_in(key, data)
    return _wrap(*fold_in_words(*_words(key), data), key)


def split(key, num: int = 2):
    """``jax.random.split(key, num)``, bitwise (a ``KeyBlock``: a tuple of ``num`` blocks)."""
    if isinstance(key, RoundKey):
        key = derive(key)
    if isinstance(key, KeyBlock):
        zero = jnp.zeros_like(key.k0)
        return tuple(
            KeyBlock(*threefry2x32_unrolled(key.k0, key.k1, zero, zero + np.uint32(i)))
            for i in range(num)
        )
    if not is_threefry(key):
        return jax.random.split(key, num)
    k0, k1 = _words(key)
    i = jnp.arange(num, dtype=jnp.uint32)
    y0, y1 = threefry2x32_unrolled(k0, k1, jnp.zeros_like(i), i)
    return _wrap(y0, y1, key)


def bits_words(k0, k1, shape, width: int = 32):
    """``jax.random.bits`` of the keys with data words ``k0``, ``k1`` (..., K), laid out
    (..., *shape, K): one element-wise hash, vectorised over the K keys."""
    n = math.prod(shape)
    if n >= 2**32:
        raise ValueError(f"random bits of size {n} exceed the 2^32 counters of one key")
    i = jnp.arange(n, dtype=jnp.uint32).reshape(tuple(shape) + (1,))
    expand = tuple(range(k0.ndim - 1, k0.ndim - 1 + len(shape)))
    x0, x1 = threefry2x32_unrolled(
        jnp.expand_dims(k0, expand), jnp.expand_dims(k1, expand), jnp.zeros_like(i), i
    )
    if width == 32:
        return x0 ^ x1
    return (x0.astype(jnp.uint64) << np.uint64(32)) | x1.astype(jnp.uint64)


def bits(key, shape=(), width: int = 32):
    """``jax.random.bits(key, shape, uint{width})`` (width 32 or 64), bitwise; for a ``KeyBlock``
    of runs (R...), (*shape, R...)."""
    shape = tuple(shape)
    if isinstance(key, RoundKey):
        return counter_bits(key, shape, width)
    if isinstance(key, KeyBlock):
        n = key.k0.ndim
        out = bits_words(key.k0.reshape(-1), key.k1.reshape(-1), shape, width)
        return out.reshape(shape + key.k0.shape) if n != 1 else out
    if not is_threefry(key):
        return jax.random.bits(key, shape, jnp.uint32 if width == 32 else jnp.uint64)
    k0, k1 = _words(key)
    return bits_words(k0[None], k1[None], shape, width)[..., 0]


def uniform_from_bits(b, dtype, low=0.0, high=1.0):
    """``jax.random.uniform``'s map from random bits to [low, high)."""
    nmant = jnp.finfo(dtype).nmant
    width = jnp.iinfo(b.dtype).bits
    one = np.array(1.0, dtype).view(b.dtype)
    floats = jax.lax.bitcast_convert_type((b >> np.array(width - nmant, b.dtype)) | one, dtype)
    floats = floats - np.array(1.0, dtype)
    low, high = jnp.asarray(low, dtype), jnp.asarray(high, dtype)
    return jnp.maximum(low, floats * (high - low) + low)


def uniform(key, shape=(), dtype=jnp.float32, low=0.0, high=1.0):
    """``jax.random.uniform(key, shape, dtype, low, high)``, bitwise (float32, float64).

    Args:
        key: a typed threefry key (one run), or a ``KeyBlock``/``RoundKey`` (a block of runs).
        shape: the shape of one run's draw.
        dtype: float32 or float64.
        low: the lower end.
        high: the upper end.

    Returns:
        Uniform numbers in [low, high): ``shape`` for a typed key, ``(*shape, *runs)`` for a block.

    Example:
        >>> import jax
        >>> from jaxbco.keys import uniform
        >>> bool((uniform(jax.random.key(0), (3,)) == jax.random.uniform(jax.random.key(0), (3,))).all())
        True
    """
    dtype = jnp.dtype(dtype)
    if isinstance(key, (KeyBlock, RoundKey)):
        check_block_dtype(dtype)
    elif dtype not in (jnp.float32, jnp.float64) or not is_threefry(key):
        return jax.random.uniform(key, shape, dtype, low, high)
    return uniform_from_bits(bits(key, shape, 8 * dtype.itemsize), dtype, low, high)


def event_shape(array, key) -> tuple:
    """The shape of one run's draw shaped like ``array``: on a block of runs (a ``KeyBlock``)
    the problem's arrays carry one trailing unit axis per run axis (``jaxbco._src.blocks``), which
    this drops; for one key, ``array``'s shape."""
    shape = jnp.shape(array)
    n = jnp.ndim(key.k0) if isinstance(key, (KeyBlock, RoundKey)) else 0
    return tuple(shape[: len(shape) - n]) if len(shape) >= 1 else ()


def check_block_dtype(dtype) -> None:
    """Blocks of runs and round streams draw float32 or float64 only (``jax.random``'s other
    dtypes need its keys)."""
    if jnp.dtype(dtype).name not in ("float32", "float64"):
        raise TypeError(
            f"random draws on blocks of runs or round streams are float32 or float64; got {dtype}"
        )
