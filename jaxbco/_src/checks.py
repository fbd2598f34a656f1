"""Input validation: every error names the parameter, its allowed range and the value given.

Checks run on concrete values only; under ``jit``/``vmap``/``grad`` (tracers) they are
skipped, since a traced hyperparameter has no value to check.  A wrong kind of input (a
string where a ``Problem`` is expected) raises ``KindError``, a ``TypeError`` that is also a
``ValueError`` (so the CLI's one error handler reports it as one line).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src.numeric_fields import KindError as KindError
from jaxbco._src.numeric_fields import check_numbers as check_numbers
from jaxbco._src.numeric_fields import check_real as check_real
from jaxbco._src.numeric_fields import describe as describe
from jaxbco._src.numeric_fields import numbers as numbers
from jaxbco._src.numeric_fields import real as real

#: The longest horizon: round counters are int32 and the engine looks a few rounds ahead.
MAX_HORIZON = 2_000_000_000
#: Seed ids are uint32 (``keys.seed_keys``): at most 2^32 distinct ids in [0, 2^32).
MAX_SEEDS = 2**32
#: ``jax.random.key`` takes an int64 seed: non-negative master keys in [0, 2^63 - 1].
MAX_KEY = 2**63 - 1


def check_kind(name: str, x, kind, what: str, hint: str = "") -> None:
    """``x`` must be an instance of ``kind`` (a class or a tuple); else ``KindError``."""
    if not isinstance(x, kind):
        raise KindError(f"{name} must be {what}; got {describe(x)}{hint}")


def check_bool(name: str, x) -> bool:
    if not isinstance(x, (bool, np.bool_)):
        raise KindError(f"{name} must be True or False; got {describe(x)}")
    return bool(x)


def is_concrete(x) -> bool:
    """True when ``x`` holds values (not a tracer inside a transformation)."""
    leaves = jax.tree_util.tree_leaves(x)
    return all(not isinstance(leaf, jax.core.Tracer) for leaf in leaves)


def shown(x) -> str:
    """Values for a message as the user wrote them: a float32 0.3 is "0.3", not the float64
    0.30000001192092896 it rounds to; one value bare, several as a list."""
    a = np.asarray(x)
    text = [str(v) for v in a.ravel()]
    return text[0] if a.ndim == 0 else "[" + ", ".join(text) + "]"


def _values(name, x):
    if isinstance(x, (str, bytes)) or np.asarray(x).dtype.kind in "SU":  # "1" is text
        raise KindError(f"{name} must be a number or an array of numbers; got {describe(x)}")
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise KindError(
            f"{name} must be a number or an array of numbers; got {describe(x)}"
        ) from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; got {shown(x)}")
    return arr


def check_finite(name: str, x) -> None:
    """Raise ``ValueError`` if any leaf of ``x`` holds NaN or inf."""
    if not is_concrete(x):
        return
    for leaf in jax.tree_util.tree_leaves(x):
        arr = np.asarray(leaf)
        if np.issubdtype(arr.dtype, np.inexact) and not np.all(np.isfinite(arr)):
            where = np.argwhere(~np.isfinite(arr))[0].tolist()
            raise ValueError(
                f"{name} must be finite (no NaN or inf); it contains non-finite values "
                f"(first at index {where})"
            )


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
        raise ValueError(f"{name} must lie in {left}, {right}; got {shown(x)}")


def check_positive_int(name: str, n, high: int | None = None, why: str = "") -> int:
    """``n`` must be an integer >= 1 (and <= ``high``; ``why`` says where that bound comes from)."""
    bound = "" if high is None else f" and <= {high}" + (f" ({why})" if why else "")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer, float, np.floating)):
        raise KindError(f"{name} must be an integer >= 1{bound}; got {describe(n)}")
    if not isinstance(n, (int, np.integer)) or n < 1 or (high is not None and n > high):
        raise ValueError(f"{name} must be an integer >= 1{bound}; got {n!r}")
    return int(n)


def check_horizon(horizon) -> int:
    """1 <= T <= ``MAX_HORIZON``: rounds are int32 counters."""
    return check_positive_int("horizon T", horizon, MAX_HORIZON, "int32 round counters")


def check_dim(name: str, x, dim: int, *, what: str = "the feasible set") -> None:
    """The last axis of ``x`` must be ``dim``."""
    shape = np.shape(x)
    if len(shape) == 0 or shape[-1] != dim:
        raise ValueError(
            f"dimension mismatch: {name} has shape {shape} but {what} has dimension {dim}"
        )


def check_vector(name: str, x) -> None:
    """A non-empty 1-D array (a point of R^d, d >= 1)."""
    shape = jnp.shape(x)
    if len(shape) != 1 or shape[0] < 1:
        raise ValueError(f"{name} must be a vector of length d >= 1; got shape {shape}")


def check_scalar(name: str, x) -> None:
    """A single number (shape ()), never an array to broadcast."""
    if jnp.shape(x) != ():
        raise ValueError(f"{name} must be a scalar; got shape {jnp.shape(x)}")


def check_dtype(dtype):
    """float32 or float64 (the latter only with 64-bit JAX enabled); returns the numpy dtype."""
    try:
        dtype = jnp.dtype(dtype)
    except (TypeError, ValueError):
        raise ValueError(f"dtype must be float32 or float64; got {describe(dtype)}") from None
    if dtype not in (jnp.float32, jnp.float64):
        raise ValueError(f"dtype must be float32 or float64; got {dtype}")
    if dtype == jnp.float64 and not jax.config.jax_enable_x64:
        raise ValueError(
            "dtype float64 needs 64-bit JAX: set JAX_ENABLE_X64=1 or call "
            "jax.config.update('jax_enable_x64', True) before creating arrays"
        )
    return dtype


def threefry_key(seed: int):
    """``jax.random.key(seed)`` of the threefry implementation, for every seed in
    [0, ``MAX_KEY``] whatever the 64-bit mode: its words (seed >> 32, seed mod 2^32), wrapped
    (nothing compiled; ``jax.random.key`` keeps only the low 32 bits with 64-bit JAX off, so
    master keys 0 and 2^32 would give one stream)."""
    words = np.asarray([seed >> 32, seed & 0xFFFFFFFF], np.uint32)
    return jax.random.wrap_key_data(words, impl="threefry2x32")


def check_key(key, name: str = "key"):
    """The master key: an int in [0, ``MAX_KEY``], a typed scalar ``jax.random.key`` or a raw
    uint32 key of shape (2,) (``jax.random.PRNGKey``); returns a typed key."""
    if isinstance(key, bool):
        raise KindError(
            f"{name} must be an integer in [0, 2^63 - 1] or a jax.random.key; got {describe(key)}"
        )
    if isinstance(key, (int, np.integer)):
        if not 0 <= int(key) <= MAX_KEY:
            raise ValueError(
                f"{name} must be an integer in [0, 2^63 - 1] = [0, {MAX_KEY}] or a "
                f"jax.random.key; got {int(key)}"
            )
        return threefry_key(int(key))
    if isinstance(key, (jax.Array, np.ndarray)):
        if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
            if key.shape != ():
                raise ValueError(
                    f"{name} must be a single key (shape ()); got a key array of shape {key.shape}"
                )
            impl = str(jax.random.key_impl(key))
            if "threefry" not in impl and impl != "fry":
                raise ValueError(
                    f"{name} must be a threefry key (jax.random.key(seed), JAX's "
                    f"default implementation: every seed's stream is derived from "
                    f"it); got a key of implementation {impl}"
                )
            return key
        if key.dtype == np.uint32 and key.shape == (2,):
            return jax.random.wrap_key_data(key)
        if np.issubdtype(key.dtype, np.integer) and key.shape == ():
            if not is_concrete(key):
                return jax.random.key(key)
            return check_key(int(key), name)
    raise KindError(
        f"{name} must be an integer in [0, 2^63 - 1] or a jax.random.key; got {describe(key)}"
    )


# Shapes of problem data (``losses``/``constraints`` ``data_shape``).


class Shape(tuple):
    """An expected array shape: ints, or names ("m") of sizes that must agree across leaves."""

    def __repr__(self):
        inner = ", ".join(str(s) for s in self)
        return f"({inner},)" if len(self) == 1 else f"({inner})"


def shape(*dims) -> Shape:
    return Shape(dims)


def _spec_str(spec) -> str:
    if isinstance(spec, Shape):
        return "a scalar" if spec == () else f"an array {spec!r}"
    return "(" + ", ".join(_spec_str(s) for s in spec) + ")"


def check_data_shapes(name: str, data, spec, owner: str, dim: int) -> None:
    """``data`` (one round's data) must have the pytree structure and shapes of ``spec`` (a
    ``Shape`` or nested tuples of them): never broadcast."""
    sizes: dict = {}
    expected = f"{owner} on a feasible set in R^{dim} takes {_spec_str(spec)} per round"

    def match(path, x, s):
        if isinstance(s, Shape):
            if isinstance(x, (tuple, list, dict)):
                raise ValueError(
                    f"{name}{path} must be {_spec_str(s)} ({expected}); got a "
                    f"{type(x).__name__} of {len(x)} items"
                )
            got = tuple(np.shape(x))
            ok = len(got) == len(s)
            for g, e in zip(got, s):
                if isinstance(e, str):
                    if g == 0 and len(got) == len(s):
                        raise ValueError(
                            f"{name}{path} has shape {got}: its axis {e} must not "
                            f"be empty ({expected})"
                        )
                    ok = ok and sizes.setdefault(e, g) == g
                else:
                    ok = ok and g == e
            if not ok:
                raise ValueError(
                    f"{name}{path} must have shape {s!r} ({expected}); got shape {got}"
                )
            return
        if not isinstance(x, (tuple, list)) or len(x) != len(s):
            got = (
                f"a {type(x).__name__} of {len(x)} items"
                if isinstance(x, (tuple, list, dict))
                else f"an array of shape {tuple(np.shape(x))}"
            )
            raise ValueError(
                f"{name}{path} must be a tuple of {len(s)} items ({expected}); got {got}"
            )
        for i, (xi, si) in enumerate(zip(x, s)):
            match(f"{path}[{i}]", xi, si)

    match("", data, spec)


def check_grid(hyper, name: str = "hyper") -> int:
    """Every field a scalar or a vector; the vectors of one common length G >= 1 (or length 1,
    broadcast).  Returns G."""
    leaves = jax.tree_util.tree_flatten_with_path(hyper)[0]
    if not leaves:
        raise KindError(f"{name} must hold hyperparameter arrays; got {describe(hyper)}")
    lengths = {}
    for path, leaf in leaves:
        field = jax.tree_util.keystr(path).lstrip(".")
        check_real(f"{name}.{field}", leaf)
        shp = jnp.shape(leaf)
        if len(shp) > 1:
            raise ValueError(
                f"{name}.{field} must be a scalar or a vector (one grid axis); got shape {shp}"
            )
        if len(shp) == 1:
            if shp[0] == 0:
                raise ValueError(
                    f"{name}.{field} must be a scalar or a non-empty vector; got an "
                    f"empty grid (length 0)"
                )
            lengths[field] = shp[0]
    sizes = set(lengths.values()) - {1}
    if len(sizes) > 1:
        raise ValueError(
            f"{name} grid axes must have one common length G (or length 1); got "
            + ", ".join(f"{k}: {v}" for k, v in lengths.items())
            + " (build grids with jaxbco.grid or grid_of)"
        )
    return sizes.pop() if sizes else 1
