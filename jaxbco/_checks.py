"""Input validation: every error names the parameter and its allowed range.

Checks run on concrete values only; under ``jit``/``vmap``/``grad`` (tracers) they are
skipped, since a traced hyperparameter has no value to check.
"""

from __future__ import annotations

import jax
import numpy as np


def is_concrete(x) -> bool:
    """True when ``x`` holds values (not a tracer inside a transformation)."""
    leaves = jax.tree_util.tree_leaves(x)
    return all(not isinstance(leaf, jax.core.Tracer) for leaf in leaves)


def _values(name, x):
    arr = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; got {arr!r}")
    return arr


def check_finite(name: str, x) -> None:
    """Raise ``ValueError`` if any leaf of ``x`` holds NaN or inf."""
    if not is_concrete(x):
        return
    for leaf in jax.tree_util.tree_leaves(x):
        arr = np.asarray(leaf)
        if np.issubdtype(arr.dtype, np.inexact) and not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite (no NaN or inf); it contains non-finite values")


def check_range(name: str, x, *, low=None, high=None, low_open=False, high_open=False) -> None:
    """Raise ``ValueError`` unless every entry of ``x`` lies in the stated interval."""
    if not is_concrete(x):
        return
    arr = _values(name, x)
    lo_ok = True if low is None else np.all(arr > low) if low_open else np.all(arr >= low)
    hi_ok = True if high is None else np.all(arr < high) if high_open else np.all(arr <= high)
    if not (lo_ok and hi_ok):
        left = "(-inf" if low is None else ("(" if low_open else "[") + f"{low:g}"
        right = "inf)" if high is None else f"{high:g}" + (")" if high_open else "]")
        raise ValueError(f"{name} must lie in {left}, {right}; got {arr.tolist()!r}")


def check_positive_int(name: str, n) -> int:
    """``n`` must be an integer >= 1."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be an integer >= 1; got {n!r}")
    return int(n)


def check_dim(name: str, x, dim: int, *, what: str = "the feasible set") -> None:
    """The last axis of ``x`` must be ``dim``."""
    shape = np.shape(x)
    if len(shape) == 0 or shape[-1] != dim:
        raise ValueError(
            f"dimension mismatch: {name} has shape {shape} but {what} has dimension {dim}"
        )


def check_dtype(dtype):
    """float32 or float64 (the latter only with 64-bit JAX enabled); returns the numpy dtype."""
    import jax.numpy as jnp

    dtype = jnp.dtype(dtype)
    if dtype not in (jnp.float32, jnp.float64):
        raise ValueError(f"dtype must be float32 or float64; got {dtype}")
    if dtype == jnp.float64 and not jax.config.jax_enable_x64:
        raise ValueError("dtype float64 needs 64-bit JAX: set JAX_ENABLE_X64=1 or call "
                         "jax.config.update('jax_enable_x64', True) before creating arrays")
    return dtype
