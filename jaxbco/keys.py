"""Key discipline: per-seed keys fold_in(master, seed_id); per-round keys fold_in(seed_key, t).

A seed's result depends only on (master, seed_id): never on the batch, chunk or device it ran
on.  Round t's streams (0 loss data, 1 direction, 2 constraint data, 3 the algorithm's own)
are fold_in(fold_in(seed_key, t), stream), so the comparator regenerates exactly the data the
run saw.
"""

import jax
import jax.numpy as jnp

from jaxbco._random import fold_in


def seed_keys(master: jax.Array, seed_ids: jax.Array) -> jax.Array:
    """Typed keys fold_in(master, i) for each seed id i."""
    return jax.vmap(lambda i: fold_in(master, i))(jnp.asarray(seed_ids, jnp.uint32))


ALGORITHM_STREAM = 3


def algorithm_key(seed_key: jax.Array, t: jax.Array) -> jax.Array:
    """A fourth stream of round t for an algorithm's own randomness."""
    return fold_in(fold_in(seed_key, t), ALGORITHM_STREAM)  # stream 3


def round_keys(seed_key: jax.Array, t: jax.Array):
    """(k_loss, k_direction, k_constraint) of round t: fold_in(fold_in(seed_key, t), stream).

    One hash per stream actually used (an unused stream is dead code that XLA removes),
    where a split into three would always pay for three."""
    k = fold_in(seed_key, t)
    return fold_in(k, 0), fold_in(k, 1), fold_in(k, 2)
