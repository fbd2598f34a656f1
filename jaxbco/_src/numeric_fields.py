"""Fields that hold numbers: converters that make JAX arrays of what is numeric and keep
anything else as given, the checks that name what is not, and the wrong-kind error they raise
(``checks`` re-exports all of it)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


class KindError(TypeError, ValueError):
    """A wrong kind of input (a TypeError; also a ValueError, as for the CLI it is bad input)."""


def describe(x, limit: int = 60) -> str:
    """``type value`` for messages, the value's repr on one line cut to ``limit`` characters."""
    text = " ".join(repr(x).split())
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(x).__name__} {text}"


def _converted(v, floats: bool):
    if isinstance(v, jax.core.Tracer):
        return v
    try:
        a = np.asarray(v)
    except Exception:  # noqa: BLE001 - not array-like: the class's check names it
        return v
    if floats and a.dtype.kind in "biu":
        return jnp.asarray(a, dtype=jnp.result_type(float))
    return jnp.asarray(v) if a.dtype.kind in ("f" if floats else "biufc") else v


def real(v):
    """Converter of a field holding real numbers: a JAX array, integers and booleans made
    floating; anything else (a string, a complex number, an object) is kept as given for the
    class's ``check_real`` to name."""
    return _converted(v, True)


def numbers(v):
    """Converter of data: a JAX array where ``v`` holds numbers; other contents (objects,
    strings) kept as given for ``check_numbers`` to name."""
    return _converted(v, False)


def check_real(name: str, x) -> None:
    """Every leaf of ``x`` an array of real floating-point numbers (after ``real``)."""
    for leaf in jax.tree_util.tree_leaves(x):
        if not (hasattr(leaf, "dtype") and jnp.issubdtype(leaf.dtype, jnp.floating)):
            raise KindError(
                f"{name} must be a real number or an array of real numbers; got {describe(leaf)}"
            )


def check_numbers(name: str, x) -> None:
    """Every leaf of ``x`` (data of a sequence) an array of real or integer numbers."""
    for leaf in jax.tree_util.tree_leaves(x):
        kind = np.dtype(getattr(leaf, "dtype", np.asarray(leaf).dtype)).kind
        if kind not in "biuf":
            raise KindError(
                f"{name} must hold real numbers; got an array of dtype "
                f"{np.dtype(getattr(leaf, 'dtype', object))}"
            )
