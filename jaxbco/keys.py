"""Key discipline: per-seed keys fold_in(master, seed_id); round t's streams by counter.

A seed's result depends only on (master, seed_id): never on the batch, chunk or device it ran
on.  Round t's streams (0 loss data, 1 direction, 2 constraint data, 3 the algorithm's own)
are ``RoundKey``s of the seed key: number j of stream s is a word of the
Threefry hash of the counter (t, j) under the seed key, θₜ's and uₜ's coordinate j the
two words of one hash; no key is hashed per round.  The comparator regenerates exactly the data
the run saw.  A component that does not declare ``blocks`` (a user's own)
gets a typed key of its stream instead (``for_component``), derived by one hash.

A component's own ``sample`` draws with ``uniform``, ``normal``, ``bits`` and ``split`` from here:
one function for a typed key (one run) and a ``KeyBlock`` or ``RoundKey`` (a block of runs,
the draws laid out (..., runs)), bitwise ``jax.random``'s threefry values for a typed key.
"""

import jax
import jax.numpy as jnp

from jaxbco._src import blocks
from jaxbco._src.normal import normal as normal
from jaxbco._src.prng import KeyBlock as KeyBlock
from jaxbco._src.prng import RoundKey as RoundKey
from jaxbco._src.prng import bits as bits
from jaxbco._src.prng import derive, fold_in, round_key
from jaxbco._src.prng import split as split
from jaxbco._src.prng import uniform as uniform


def seed_keys(master: jax.Array, seed_ids: jax.Array) -> jax.Array:
    """Typed keys fold_in(master, i) for each seed id i: a seed's every number derives from
    (master, i) alone, so its result never depends on the batch it runs in.

    Args:
        master: the master typed key (``jax.random.key(seed)``).
        seed_ids: the seed ids (int array, any length).

    Returns:
        Typed keys, one per seed id.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> seed_keys(jax.random.key(0), jnp.arange(3)).shape
        (3,)
    """
    return jax.vmap(lambda i: fold_in(master, i))(jnp.asarray(seed_ids, jnp.uint32))


ALGORITHM_STREAM = 3


def seed_words(seed_key):
    """The (k0, k1) uint32 data words of a typed seed key (or of a ``KeyBlock``'s seeds)."""
    if isinstance(seed_key, KeyBlock):
        return seed_key.k0, seed_key.k1
    data = jax.random.key_data(seed_key)
    return data[..., 0], data[..., 1]


def stream_key(seed_key, t, stream: int) -> RoundKey:
    """Round t's ``stream`` of a typed seed key (or a ``KeyBlock`` of seeds)."""
    return round_key(*seed_words(seed_key), t, stream)


def algorithm_key(seed_key, t):
    """A fourth stream of round t for an algorithm's own randomness: a key (typed, or a
    ``KeyBlock`` for a block of seeds)."""
    return derive(stream_key(seed_key, t, ALGORITHM_STREAM))


def round_keys(seed_key, t):
    """(k_loss, k_direction, k_constraint) of round t: ``RoundKey``s of streams 0, 1, 2."""
    return tuple(stream_key(seed_key, t, s) for s in range(3))


def for_component(component, key):
    """``key`` for a component whose code takes jaxbco's keys (it declares ``blocks``, itself
    and what it holds), else a typed key (or ``KeyBlock``) derived from it."""
    if isinstance(key, RoundKey) and blocks.undeclared(component) is not None:
        return derive(key)
    return key
