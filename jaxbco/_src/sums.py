"""A compensated mean over a leading axis of rounds (the offline comparator's sums over
gathered data, ``jaxbco.offline.round_sums``; the losses' ``mean_derivatives``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

#: Rounds summed plainly before a block's sum joins the compensated total.
BLOCK = 32


def mean_over_axis(values):
    """The mean over a leading axis of T rounds, summed as ``offline.round_sums.mean_over_rounds`` sums: plainly in
    blocks of ``BLOCK`` rounds, the blocks' sums joined with Kahan's compensation (error ~
    ``BLOCK`` eps, not T eps).

    Args:
        values: (T, ...) one value per round.

    Returns:
        The mean, shaped as ``values[0]``.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco._src import sums
        >>> float(sums.mean_over_axis(jnp.arange(100.0)))
        49.5
    """
    horizon = values.shape[0]
    n_blocks = -(-horizon // BLOCK)
    pad = n_blocks * BLOCK - horizon
    padded = jnp.concatenate([values, jnp.zeros((pad,) + values.shape[1:], values.dtype)])
    sums = jnp.sum(padded.reshape((n_blocks, BLOCK) + values.shape[1:]), axis=1)

    def join(carry, v):
        total, comp = carry
        y = v - comp
        new = total + y
        return (new, (new - total) - y), None

    zero = jnp.zeros(values.shape[1:], values.dtype)
    (total, _), _ = jax.lax.scan(join, (zero, zero), sums)
    return total / horizon
