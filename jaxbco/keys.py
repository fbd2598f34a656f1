"""Key discipline: per-seed keys fold_in(master, seed_id); per-round keys fold_in(seed_key, t).

A seed's result depends only on (master, seed_id): never on the batch, chunk or device it ran
on.  Round t's three streams (loss data, direction, constraint data) come from one split of
fold_in(seed_key, t), so the comparator regenerates exactly the data the run saw.
"""

import jax
import jax.numpy as jnp


def seed_keys(master: jax.Array, seed_ids: jax.Array) -> jax.Array:
    """Typed keys fold_in(master, i) for each seed id i."""
    return jax.vmap(lambda i: jax.random.fold_in(master, i))(jnp.asarray(seed_ids, jnp.uint32))


ALGORITHM_STREAM = 0x5EED


def algorithm_key(seed_key: jax.Array, t: jax.Array) -> jax.Array:
    """A fourth stream of round t for an algorithm's own randomness."""
    return jax.random.fold_in(jax.random.fold_in(seed_key, t), ALGORITHM_STREAM)


def round_keys(seed_key: jax.Array, t: jax.Array):
    """(k_loss, k_direction, k_constraint) of round t."""
    k = jax.random.split(jax.random.fold_in(seed_key, t), 3)
    return k[0], k[1], k[2]
