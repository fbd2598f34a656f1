"""Reductions written as multiply-then-sum.

Under ``vmap`` a ``jnp.dot`` becomes a batched matrix product whose blocking (and so its
float summation order) depends on the batch size; ``sum(a * b)`` reduces each row the same
way whatever the batch, which keeps a seed's result bitwise independent of its batch.
"""

import jax.numpy as jnp


def dot(a, b):
    """<a, b> over the last axis."""
    return jnp.sum(a * b, axis=-1)


def inner(a, b):
    """<a, b> over the leading (vector) axis: trailing axes are batch axes, so the same code
    runs on one vector (d,) or on a seeds-minor block (d, ..., seeds) (``jaxbco._minor``)."""
    return jnp.sum(a * b, axis=0)


def matvec(A, x):
    """A @ x for A (m, d), x (d,)."""
    return jnp.sum(A * x, axis=-1)
