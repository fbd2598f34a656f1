"""Sums over a seed's rounds: the data regenerated from the round keys (``mean_over_rounds``,
nothing of size T stored), or gathered once into arrays of T rounds (``gather``) where a method
passes over them many times and memory allows (``gather_chunk``); sums over gathered rounds are
taken the same way, in blocks of ``BLOCK`` rounds with Kahan's compensation between blocks."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco._src import checks
from jaxbco._src.sums import BLOCK
from jaxbco.draws import LOSS, sample

#: The most bytes of gathered round data a batch of seeds holds at once (``gather_chunk``).
GATHER_BYTES = 1 << 28


def gather(problem, seed_key, horizon: int):
    """A seed's loss data θ₁..θ_T, stacked on a leading axis of T (each leaf (T, ...)): the
    draws of ``mean_over_rounds``, made once.

    Args:
        problem: the ``Problem``.
        seed_key: one seed's typed key.
        horizon: T.

    Returns:
        θ's pytree with a leading axis of T.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import problems
        >>> from jaxbco.keys import seed_keys
        >>> from jaxbco.offline import round_sums
        >>> key = seed_keys(jax.random.key(0), jnp.arange(1))[0]
        >>> w, y = round_sums.gather(problems.make("logistic-ball", dim=3), key, 5)
        >>> w.shape, y.shape
        ((5, 3), (5,))
    """
    rounds = jnp.arange(1, horizon + 1, dtype=jnp.int32)
    return jax.vmap(lambda t: sample(problem.loss_data, seed_key, t, LOSS))(rounds)


def gather_chunk(problem, seeds: int, horizon: int, budget: int = GATHER_BYTES) -> int:
    """How many of ``seeds`` seeds may hold their T rounds' gathered data at once within
    ``budget`` bytes (``gather``); 0 where one seed's do not fit (regenerate instead).

    Args:
        problem: the ``Problem``.
        seeds: the batch's seeds S.
        horizon: T.
        budget: bytes (default ``GATHER_BYTES``).

    Returns:
        An int in [0, seeds].

    Example:
        >>> from jaxbco import problems
        >>> from jaxbco.offline import round_sums
        >>> round_sums.gather_chunk(problems.make("logistic-ball", dim=3), 1024, 500)
        1024
    """
    key = checks.threefry_key(0)
    one = jax.eval_shape(lambda: sample(problem.loss_data, key, jnp.ones((), jnp.int32), LOSS))
    per_round = sum(a.size * a.dtype.itemsize for a in jax.tree_util.tree_leaves(one))
    return int(min(seeds, budget // max(per_round * horizon, 1)))


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
