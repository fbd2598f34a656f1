"""Recorded round data (``sequences.Replay``, ``Alternating``, ``Switching``'s boundaries):
whole round numbers, one common leading round axis, the first T rounds."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks


def round_numbers(name: str, b) -> jax.Array:
    """Round numbers as int32, refusing values that are not whole numbers (never cut)."""
    if checks.is_concrete(b):
        a = np.asarray(b)
        if a.dtype.kind not in "iub" and (
            a.dtype.kind != "f" or not np.all(np.isfinite(a)) or np.any(a != np.round(a))
        ):
            raise ValueError(
                f"{name} must be whole round numbers (int32); got {a.ravel()[:5].tolist()}"
            )
    return jnp.asarray(b, jnp.int32)


def first_rounds(values, horizon):
    """The first ``horizon`` rows of recorded data (all of them for None or more)."""
    n = jax.tree_util.tree_leaves(values)[0].shape[0]
    if horizon is None or horizon >= n:
        return values
    return jax.tree_util.tree_map(lambda v: v[:horizon], values)


def check_rounds(owner: str, name: str, values) -> None:
    """Every leaf of recorded data has a leading round axis, of one common length >= 1."""
    leaves = jax.tree_util.tree_leaves(values)
    if not leaves:
        raise ValueError(
            f"{owner} {name} must hold arrays with a leading round axis; got {values!r}"
        )
    shapes = [jnp.shape(leaf) for leaf in leaves]
    if any(len(sh) == 0 for sh in shapes):
        raise ValueError(
            f"{owner} {name} must have a leading round axis (length T) on every "
            f"array; got shapes {shapes}"
        )
    lengths = sorted({sh[0] for sh in shapes})
    if len(lengths) > 1:
        raise ValueError(
            f"{owner} {name} must record one number of rounds in every array (one "
            f"leading length); got leading lengths {lengths} (shapes {shapes})"
        )
    if lengths[0] < 1:
        raise ValueError(f"{owner} {name} must record at least 1 round; got shapes {shapes}")
