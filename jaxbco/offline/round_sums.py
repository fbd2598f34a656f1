"""Sums over a seed's rounds, the data regenerated from the round keys (nothing of size T is
stored): the offline comparator and its certificate read a seed's T rounds this way."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco.draws import LOSS, sample

#: Rounds summed plainly before a block's sum joins the compensated total (``mean_over_rounds``).
BLOCK = 32


def mean_over_rounds(problem, seed_key, horizon: int, fn):
    """(1/T) sum_t fn(theta_t), regenerating theta_t from the round keys (the sums start at
    zeros of fn's shapes).  Rounds are summed plainly in blocks of ``BLOCK``, and the blocks'
    sums join the total with Kahan's compensation where they are scalars or vectors (a
    comparator's value and gradient, which fix where it ends), so that the error stays
    ~``BLOCK`` eps instead of ~T eps: float32 sums over 10^4 rounds keep float32's accuracy.
    Matrices (a Hessian, which steers Newton's path, not where it ends) join plainly."""
    runs = len(getattr(seed_key, "shape", ()))  # trailing run axes of a seeds-minor block

    def data(t):
        return sample(problem.loss_data, seed_key, t, LOSS)

    def plain_sum(first, length):
        def body(acc, t):
            return jax.tree_util.tree_map(jnp.add, acc, fn(data(t))), None

        return jax.lax.scan(body, zeros, first + jnp.arange(length, dtype=jnp.int32))[0]

    def join(total, comp, v):
        if v.ndim - runs > 1:
            return total + v, comp
        y = v - comp
        new = total + y
        return new, (new - total) - y

    def merge(carry, block):
        total, comp = carry
        pairs = jax.tree_util.tree_map(join, total, comp, block)
        return jax.tree_util.tree_transpose(
            jax.tree_util.tree_structure(total), jax.tree_util.tree_structure((0, 0)), pairs
        )

    shapes = jax.eval_shape(lambda: fn(data(jnp.ones((), jnp.int32))))
    zeros = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), shapes)
    n_blocks, tail = divmod(horizon, BLOCK)
    carry = (zeros, zeros)
    if n_blocks:
        carry, _ = jax.lax.scan(
            lambda c, k: (merge(c, plain_sum(k * BLOCK + 1, BLOCK)), None),
            carry,
            jnp.arange(n_blocks, dtype=jnp.int32),
        )
    if tail:
        carry = merge(carry, plain_sum(jnp.asarray(n_blocks * BLOCK + 1, jnp.int32), tail))
    return jax.tree_util.tree_map(lambda a: a / horizon, carry[0])
