"""Shaping a run's checked inputs for the engine (``sweep`` and ``make_run`` alike): the
checkpoint rounds, the rounds per chunk, one grid axis for the hyperparameters, the seeds padded
to a multiple of ``SEED_PAD``, and floating arrays cast to the run's dtype.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks

# Seeds are padded to a multiple of this: XLA's CPU code vectorises element-wise math over the
# flattened batch and finishes a remainder with scalar code whose rounding can differ by an
# ulp; with every batch a multiple of 16 lanes each seed takes the same path whatever the
# batch size or its position, so a seed's result is bitwise batch-independent.
SEED_PAD = 16


def chunk_length(chunk, horizon: int, want_chunks: bool) -> int:
    """The user's chunk, else all T, else (progress/resume) about T/100 rounds: a divisor of T
    in [T/200, T/50] when there is one (no shorter last chunk to compile; the closest to T/100,
    the smaller of two), else ceil(T/100).  Divisors in pairs (i, T/i): O(sqrt T) steps."""
    if chunk is not None:
        return min(checks.check_positive_int("chunk", chunk), horizon)
    if not want_chunks or horizon < 100:
        return horizon
    target = horizon / 100
    low, high = max(1, horizon // 200), horizon // 50
    best = None
    i = 1
    while i * i <= horizon:
        if horizon % i == 0:
            for n in (i, horizon // i):
                if low <= n <= high and (
                    best is None
                    or abs(n - target) < abs(best - target)
                    or (abs(n - target) == abs(best - target) and n < best)
                ):
                    best = n
        i += 1
    return best if best is not None else -(-horizon // 100)


def grid(hyper, dtype=None):
    """Hyperparameters with a leading grid axis of one common length G (scalars broadcast)."""
    cast = (lambda v: jnp.asarray(v, dtype)) if dtype is not None else (lambda v: v)
    hyper = jax.tree_util.tree_map(lambda v: jnp.atleast_1d(cast(v)), hyper)
    n_grid = max(jnp.shape(v)[0] for v in jax.tree_util.tree_leaves(hyper))
    return jax.tree_util.tree_map(lambda v: jnp.broadcast_to(v, (n_grid,)), hyper)


def pad_seeds(seed_ids, lanes: int):
    """Seed ids padded to a multiple of ``lanes`` with copies of the last one (``SEED_PAD``):
    a NumPy array for concrete ids (nothing compiled), a JAX array for traced ones."""
    xp = jnp if isinstance(seed_ids, jax.core.Tracer) else np
    ids = xp.asarray(seed_ids, np.uint32)
    n = ids.shape[0]
    return xp.concatenate([ids, xp.full(((-n) % lanes,), ids[-1], np.uint32)]) if n % lanes else ids


def log_checkpoints(horizon: int, count: int = 100) -> np.ndarray:
    """About ``count`` log-spaced rounds in [1, T], always including 1 and T.

    The rounds round(10^(k log₁₀ T / (count − 1))) for k = 0..count−1, without duplicates (so
    fewer than ``count`` for a short horizon).

    Args:
        horizon: the number of rounds T.
        count: how many rounds to aim for (at least 2).

    Returns:
        The rounds, an increasing int64 array starting at 1 and ending at T.

    Raises:
        ValueError: ``horizon`` or ``count`` out of range.

    Example:
        >>> import jaxbco
        >>> jaxbco.log_checkpoints(1000, 5).tolist()
        [1, 6, 32, 178, 1000]
    """
    horizon = checks.check_horizon(horizon)
    if (
        isinstance(count, bool)
        or not isinstance(count, (int, np.integer))
        or not (2 <= count <= checks.MAX_HORIZON)
    ):
        raise ValueError(
            f"count (checkpoints) must be an integer in [2, {checks.MAX_HORIZON}] "
            f"(rounds 1 and T are always included); got {count!r}"
        )
    pts = np.unique(np.round(np.logspace(0, np.log10(horizon), count)).astype(np.int64))
    return np.unique(np.concatenate([[1], pts, [horizon]])).clip(1, horizon)


def cast(tree, dtype):
    """The tree with its floating arrays cast to ``dtype`` (other leaves as they are)."""

    def f(leaf):
        if eqx.is_array(leaf) and jnp.issubdtype(leaf.dtype, jnp.floating):
            return leaf if leaf.dtype == dtype else leaf.astype(dtype)
        return leaf

    return jax.tree_util.tree_map(f, tree)
