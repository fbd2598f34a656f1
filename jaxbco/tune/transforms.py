"""Parameterisations of the free hyperparameters: an unconstrained coordinate z per field.

c = 1/2 + sigmoid(z) / 2, eps = softplus(z), xi = sigmoid(z), delta = xi r sigmoid(z) (so
delta <= xi r; r: the inscribed radius of X) and exp(z) for the positive scales and step sizes;
a field of any other ``eqx.Module`` hyper pytree (a baseline's, your own) gets its
``Transform`` from the range its class declares (a class attribute ``ranges = {"rho":
"positive"}`` or ``eqx.field(metadata={"range": (0.0, None)})``; ``from_range``) or from the
``transforms`` dict, which overrides both.  ``Space`` maps z <-> hyper for the free fields of one setting.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

_ZCLIP = 15.0  # sigmoid arguments are clipped to +-15 (float32 sigmoid(17) rounds to 1)
_ZINV = 12.0  # inverse maps clamp to +-12 (a start at c = 1/2 becomes c = 1/2 + 3e-6)


class Transform(NamedTuple):
    """value = forward(z, hyper, r); z = inverse(value, hyper, r) (NumPy, concrete);
    bounds(value0, hyper0, r) -> (lo, hi): the default search box, in value units.  ``late``:
    forward reads other free fields of ``hyper`` (delta reads xi), so it is applied after them.
    ``start_clip``: (lo, hi) in z for the starting point of gradient tuning only (c's theorem
    value 1/2 is the edge of its range, where sigmoid is flat: tuning starts at z >= -4)."""

    forward: Callable
    inverse: Callable
    bounds: Callable
    late: bool = False
    start_clip: tuple = (-np.inf, np.inf)


def _sigmoid(z):
    return jax.nn.sigmoid(jnp.clip(z, -_ZCLIP, _ZCLIP))


def _logit(p):
    edge = 1.0 / (1.0 + np.exp(_ZINV))
    p = np.clip(np.asarray(p, np.float64), edge, 1.0 - edge)
    return np.log(p) - np.log1p(-p)


def interval(lo: float, hi: float, bounds=None, start_clip=(-np.inf, np.inf)) -> Transform:
    """value = lo + (hi - lo) sigmoid(z), in (lo, hi)."""
    span = hi - lo
    default = (
        (lambda v, h, r: bounds)
        if bounds is not None
        else (lambda v, h, r: (lo + 1e-3 * span, hi - 1e-3 * span))
    )
    return Transform(
        lambda z, h, r: lo + span * _sigmoid(z),
        lambda v, h, r: _logit((np.asarray(v, np.float64) - lo) / span),
        default,
        start_clip=start_clip,
    )


def positive_softplus(bounds=None) -> Transform:
    """value = softplus(z) > 0."""

    def inverse(v, h, r):
        v = np.maximum(np.asarray(v, np.float64), 1e-30)
        return v + np.log(-np.expm1(-v))

    default = (lambda v, h, r: bounds) if bounds is not None else (lambda v, h, r: (0.01, 2.0))
    return Transform(lambda z, h, r: jax.nn.softplus(z), inverse, default)


def positive_log(factor: float = 100.0) -> Transform:
    """value = exp(z) > 0; default search box [value0 / factor, value0 * factor]."""
    return Transform(
        lambda z, h, r: jnp.exp(z),
        lambda v, h, r: np.log(np.asarray(v, np.float64)),
        lambda v, h, r: (float(v) / factor, float(v) * factor),
    )


def unit_interval(factor: float = 10.0) -> Transform:
    """value = sigmoid(z) in (0, 1); default box [value0 / factor, min(value0 * factor, 1/2)]."""
    return Transform(
        lambda z, h, r: _sigmoid(z),
        lambda v, h, r: _logit(v),
        lambda v, h, r: (float(v) / factor, min(float(v) * factor, 0.5)),
    )


def delta_ratio(lo_ratio: float = 0.01, hi_ratio: float = 0.999) -> Transform:
    """delta = xi r sigmoid(w) in (0, xi r]; default box delta / (xi r) in [0.01, 0.999];
    tuning starts at w <= 3 (the theorem value delta = xi r is the edge, sigmoid is flat)."""
    return Transform(
        lambda w, h, r: h.xi * r * _sigmoid(w),
        lambda v, h, r: _logit(np.asarray(v, np.float64) / (float(np.asarray(h.xi)) * r)),
        lambda v, h, r: (
            lo_ratio * float(np.asarray(h.xi)) * r,
            hi_ratio * float(np.asarray(h.xi)) * r,
        ),
        late=True,
        start_clip=(-np.inf, 3.0),
    )


def unbounded(width: float = 1.0) -> Transform:
    """value = z (no range); default box [value0 - width, value0 + width]."""
    return Transform(
        lambda z, h, r: z,
        lambda v, h, r: np.asarray(v, np.float64),
        lambda v, h, r: (float(v) - width, float(v) + width),
    )


def _shifted_log(lo: float, sign: float) -> Transform:
    """value = lo + sign exp(z): (lo, inf) for sign +1, (-inf, lo) for sign -1."""
    return Transform(
        lambda z, h, r: lo + sign * jnp.exp(z),
        lambda v, h, r: np.log(np.maximum(sign * (np.asarray(v, np.float64) - lo), 1e-300)),
        lambda v, h, r: (
            (lo + (float(v) - lo) / 100, lo + (float(v) - lo) * 100)
            if sign > 0
            else (lo - (lo - float(v)) * 100, lo - (lo - float(v)) / 100)
        ),
    )


RANGES = ("positive", "unit", "unbounded", "(lo, hi) with lo or hi None for no bound")


def from_range(spec) -> Transform:
    """The transform of a declared range: "positive" (exp), "unit" ((0, 1), sigmoid),
    "unbounded" (identity), or (lo, hi) with either end None for no bound (a finite interval:
    lo + (hi - lo) sigmoid(z); half-bounded: lo + exp(z) or hi - exp(z)).

    Args:
        spec: the declared range.

    Returns:
        The ``Transform`` between z and the value.

    Raises:
        ValueError: for a range that is none of these.

    Example:
        >>> import jax.numpy as jnp
        >>> float(from_range((2.0, None)).forward(jnp.asarray(0.0), None, 1.0))
        3.0
    """
    if spec == "positive":
        return positive_log()
    if spec == "unit":
        return unit_interval()
    if spec == "unbounded":
        return unbounded()
    if isinstance(spec, (tuple, list)) and len(spec) == 2:
        lo, hi = (None if b is None or not np.isfinite(b) else float(b) for b in spec)
        if lo is not None and hi is not None and lo < hi:
            return interval(lo, hi)
        if lo is not None and hi is None:
            return positive_log() if lo == 0.0 else _shifted_log(lo, 1.0)
        if lo is None and hi is not None:
            return _shifted_log(hi, -1.0)
        if lo is None and hi is None:
            return unbounded()
    raise ValueError(f"a declared range must be one of {', '.join(RANGES)}; got {spec!r}")


def declared_range(cls, name: str):
    """The range a hyperparameter class declares for ``name``: its ``ranges`` class attribute
    (name -> range) or the field's ``metadata["range"]``; None when it declares none."""
    ranges = getattr(cls, "ranges", None)
    if isinstance(ranges, dict) and name in ranges:
        return ranges[name]
    for f in dataclasses.fields(cls):
        if f.name == name and "range" in f.metadata:
            return f.metadata["range"]
    return None


def default_transforms() -> dict[str, Transform]:
    """By field name: ``Hyper``'s fields and the baselines' step sizes (all positive ones exp)."""
    log = positive_log()
    out = {
        "c": interval(0.5, 1.0, bounds=(0.501, 0.99), start_clip=(-4.0, np.inf)),
        "eps": positive_softplus(),
        "xi": unit_interval(),
        "delta": delta_ratio(),
    }
    for name in (
        "sigma",
        "alpha_scale",
        "gamma_scale",
        "eta_scale",
        "eta",
        "nu",
        "delta_m",
        "V",
        "alpha",
        "gamma",
    ):
        out[name] = log
    return out


@dataclasses.dataclass(frozen=True)
class Space:
    """The free fields of ``base`` (one setting, no grid axis) and their transforms.
    ``decode(z)`` works on tracers (z: shape (k,); vmap for a batch); ``encode`` is NumPy."""

    base: Any
    names: tuple
    transforms: tuple
    radius: float

    @property
    def k(self) -> int:
        return len(self.names)

    def _order(self):
        idx = range(self.k)
        late = [self.transforms[i].late for i in idx]
        return [i for i in idx if not late[i]] + [i for i in idx if late[i]]

    def decode(self, z):
        h = self.base
        for i in self._order():
            name = self.names[i]
            value = self.transforms[i].forward(z[i], h, self.radius)
            h = eqx.tree_at(lambda m: getattr(m, name), h, value)
        return h

    def encode(self, hyper) -> np.ndarray:
        z = np.zeros(self.k)
        for i in self._order():  # xi is encoded (and set) before delta reads it
            z[i] = self.transforms[i].inverse(getattr(hyper, self.names[i]), hyper, self.radius)
        return z

    def start(self, hyper) -> np.ndarray:
        """``encode`` clipped to each transform's ``start_clip`` (where gradient tuning starts)."""
        z = self.encode(hyper)
        return np.asarray([np.clip(zi, *tr.start_clip) for zi, tr in zip(z, self.transforms)])

    def values(self, hyper) -> dict:
        return {n: float(np.asarray(getattr(hyper, n))) for n in self.names}

    def box(self, bounds: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The search box in z (from value bounds; ``bounds`` overrides the defaults)."""
        bounds = {} if bounds is None else bounds
        if not isinstance(bounds, dict):
            raise TypeError(f"bounds must be a dict name -> (lo, hi); got {type(bounds).__name__}")
        unknown = sorted(set(bounds) - set(self.names))
        if unknown:
            raise ValueError(
                f"bounds names {unknown}, which are not free hyperparameters; the "
                f"free ones are {list(self.names)}"
            )
        lo, hi = np.zeros(self.k), np.zeros(self.k)
        for i, (name, tr) in enumerate(zip(self.names, self.transforms)):
            v0 = np.asarray(getattr(self.base, name))
            b = bounds.get(name) or tr.bounds(v0, self.base, self.radius)
            lo[i] = tr.inverse(b[0], self.base, self.radius)
            hi[i] = tr.inverse(b[1], self.base, self.radius)
            if not lo[i] < hi[i]:
                raise ValueError(
                    f"the search bounds of {name} must satisfy lo < hi inside its range; got {b}"
                )
        return lo, hi


def make_space(problem, init, free, transforms: dict | None = None) -> Space:
    """Validate ``free`` against the fields of ``init`` and pick each one's transform."""
    if isinstance(free, str):
        free = tuple(f for f in free.split(",") if f)
    free = tuple(free)
    if not free:
        raise ValueError("free must name at least one hyperparameter")
    if len(set(free)) != len(free):
        raise ValueError(f"free names a hyperparameter twice: {list(free)}")
    fields = [f.name for f in dataclasses.fields(init)]
    table = default_transforms()
    for name in fields:  # what the class declares wins over the by-name defaults
        declared = declared_range(type(init), name)
        if declared is not None:
            table[name] = from_range(declared)
    table.update(transforms or {})
    for name in free:
        if name not in fields:
            raise ValueError(
                f"free hyperparameter {name!r} is not a field of {type(init).__name__}; "
                f"choose from: {', '.join(fields)}"
            )
        if name not in table:
            raise ValueError(
                f"no parameterisation for {name!r}: declare its range on "
                f"{type(init).__name__} (a class attribute ranges = {{{name!r}: 'positive'}}; "
                f"ranges: {', '.join(RANGES)}), or pass transforms={{{name!r}: Transform(...)}}"
            )
        if np.ndim(getattr(init, name)) != 0:
            raise ValueError(
                f"the initial hyperparameters must be one setting (scalars); {name} has "
                f"shape {np.shape(getattr(init, name))}"
            )
    if "delta" in free and table["delta"].late and not hasattr(init, "xi"):
        raise ValueError(
            "delta's default parameterisation needs a field xi (delta = xi r sigmoid(w))"
        )
    _, r = problem.domain.inscribed_ball()
    base = jax.tree_util.tree_map(lambda v: jnp.asarray(v), init)
    return Space(base, free, tuple(table[n] for n in free), float(r))
