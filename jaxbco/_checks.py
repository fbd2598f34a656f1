"""Input validation: every error names the parameter and its allowed range.

Checks run on concrete values only; under ``jit``/``vmap``/``grad`` (tracers) they are
skipped, since a traced hyperparameter has no value to check.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
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
    dtype = jnp.dtype(dtype)
    if dtype not in (jnp.float32, jnp.float64):
        raise ValueError(f"dtype must be float32 or float64; got {dtype}")
    if dtype == jnp.float64 and not jax.config.jax_enable_x64:
        raise ValueError("dtype float64 needs 64-bit JAX: set JAX_ENABLE_X64=1 or call "
                         "jax.config.update('jax_enable_x64', True) before creating arrays")
    return dtype


# The engine's run inputs (``jaxbco.simulate``).

def check_checkpoints(checkpoints, horizon) -> np.ndarray:
    cps = np.asarray(checkpoints)
    if cps.ndim != 1 or cps.size == 0 or not np.issubdtype(cps.dtype, np.integer):
        raise ValueError("checkpoints must be a non-empty 1-D array of integer rounds")
    if np.any(np.diff(cps) <= 0) or cps[0] < 1 or cps[-1] > horizon:
        raise ValueError(f"checkpoints must be strictly increasing rounds in [1, {horizon}]")
    return cps.astype(np.int32)


def check_directions(directions, problem, horizon, n_seeds, dtype):
    u = np.asarray(directions, dtype=np.float64)
    d = problem.dim
    ok_shapes = [(horizon, d), (n_seeds, horizon, d)]
    if u.shape not in ok_shapes:
        raise ValueError(f"directions must have shape (T, d) = {ok_shapes[0]} or (seeds, T, d) = "
                         f"{ok_shapes[1]}; got {u.shape}")
    if not np.all(np.isfinite(u)):
        raise ValueError("directions must be finite")
    tol = 1e-5 if dtype == jnp.float32 else 1e-10
    norms = np.linalg.norm(u, axis=-1)
    if np.max(np.abs(norms - 1.0)) > tol:
        raise ValueError(f"directions must be unit vectors: | ||u_t|| - 1 | must lie in [0, {tol:g}]; "
                         f"max deviation {np.max(np.abs(norms - 1.0)):.3g}")
    if problem.domain.hull_dim < d:
        off = np.max(np.abs(u.sum(-1)))
        if off > tol * np.sqrt(d):
            raise ValueError(f"directions must lie in the simplex's hull directions (sum u = 0); "
                             f"max |sum u| = {off:.3g}")
    return jnp.asarray(u, dtype)


def check_seed_ids(seeds) -> np.ndarray:
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        return np.arange(check_positive_int("seeds", seeds))
    seed_ids = np.asarray(seeds)
    if seed_ids.ndim != 1 or seed_ids.size < 1 or not np.issubdtype(seed_ids.dtype, np.integer):
        raise ValueError("seeds must be an integer >= 1 or a non-empty 1-D array of integer ids")
    if np.any(seed_ids < 0) or np.any(seed_ids >= 2**32):
        raise ValueError("seed ids must lie in [0, 2^32)")
    return seed_ids
