"""Reductions written as multiply-then-sum.

Under ``vmap`` a ``jnp.dot`` becomes a batched matrix product whose blocking (and so its
float summation order) depends on the batch size; ``sum(a * b)`` reduces each row the same
way whatever the batch, which keeps a seed's result bitwise independent of its batch.
"""

import jax
import jax.numpy as jnp


def inner(a, b):
    """<a, b> over the leading (vector) axis: trailing axes are batch axes, so the same code
    runs on one vector (d,) or on a seeds-minor block (d, ..., seeds) (``jaxbco.backends.seeds_minor``)."""
    return jnp.sum(a * b, axis=0)


# Up to this many terms a block's sum can be written as a chain of adds: element-wise code,
# the same for every seed whatever the batch (XLA may turn a reduction into a matrix product
# whose blocking, and so rounding, depends on the batch size).  Only where the result is
# materialised (the block draws, the streaming comparator's finish): fused into the round's
# element-wise consumers the chain is recomputed per coordinate (several times slower).
_CHAIN_MAX = 64


def sum_axis(p, axis: int):
    """sum of ``p`` over ``axis``: a reduction for one vector, a chain of adds in coordinate
    order for a seeds-minor block of up to 64 coordinates."""
    axis = axis % p.ndim
    if p.ndim < 2 or p.shape[axis] > _CHAIN_MAX:
        return jnp.sum(p, axis=axis)
    terms = [jax.lax.index_in_dim(p, i, axis, keepdims=False) for i in range(p.shape[axis])]
    out = terms[0]
    for term in terms[1:]:
        out = out + term
    return out


def apply(A, x):
    """A @ x for one run (A (m, d), x (d,)) or a seeds-minor block x (d, runs...) with A the
    runs' own matrices (m, d, runs...) or one matrix shared by them all (m, d, 1...).

    Shared A on a block is one matrix product over the runs (a GEMM, faster than the
    element-wise form).  XLA's CPU GEMM reduces each column the same way whatever the
    number of columns >= 2, but a single column takes its matrix-vector path (other
    rounding), so a one-run block is padded to two: a run's numbers do not depend on its
    batch (``tests/test_backends.py``)."""
    if x.ndim <= 1 or A.shape[2:] != (1,) * (A.ndim - 2) or A.ndim - 2 != x.ndim - 1:
        return jnp.sum(A * jnp.expand_dims(x, 0), axis=1)
    runs = x.shape[1:]
    flat = x.reshape(x.shape[0], -1)
    n = flat.shape[1]
    if n == 1:
        flat = jnp.concatenate([flat, flat], axis=1)
    out = jnp.matmul(A.reshape(A.shape[:2]), flat)
    return out[:, :n].reshape((A.shape[0],) + runs)


def spectral_norm(A):
    """||A||_2 of a square matrix (d, d) or of each of a block's (d, d, runs...) (the runs'
    own, or one shared with unit run axes: its norm, laid out (1...))."""
    if A.ndim == 2:
        return jnp.linalg.norm(A, ord=2)
    runs = A.shape[2:]
    flat = jnp.moveaxis(A.reshape(A.shape[:2] + (-1,)), -1, 0)
    return jnp.linalg.norm(flat, ord=2, axis=(1, 2)).reshape(runs)


def columns(fn, x, *args):
    """``fn(v, *a)`` of one vector (d,) (and per-run scalars ``a``) applied to ``x``: to x
    itself, or to each run of a seeds-minor block (d, runs...) (vmapped over the trailing
    axes, the runs kept last; ``args`` broadcast to the runs)."""
    if x.ndim <= 1:
        return fn(x, *args)
    runs = x.shape[1:]
    flat = x.reshape(x.shape[0], -1)
    flat_args = [jnp.broadcast_to(a, runs).reshape(-1) for a in args]
    return jax.vmap(fn, in_axes=(1,) + (0,) * len(args), out_axes=1)(flat, *flat_args).reshape(
        x.shape
    )


def value_and_grad(fn, x):
    """(fn(x), grad fn(x)) for ``fn`` with one value per run: a VJP with cotangent 1 per run,
    so that it takes one run (d,) or a seeds-minor block (d, runs) alike."""
    value, vjp = jax.vjp(fn, x)
    (grad,) = vjp(jnp.ones_like(value))
    return value, grad
