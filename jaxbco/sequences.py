"""Data sequences: theta_t (loss data) and phi_t (constraint data) as pure functions of (key, t).

A sequence is sampled inside the scan, round by round, from round t's stream
(``jaxbco.keys``: a ``RoundKey``, stream 0 the loss data, 2 the constraint data; a sequence
that does not declare ``blocks`` gets a typed key derived from it): nothing of size (seeds x T x d) is ever materialised, and round t's data is
the same whatever batch, chunk or order it is computed in.
"""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import _checks, _ops, _random
from jaxbco._normal import normal


class AbstractSequence(eqx.Module):
    """``sample(key, t)`` returns the data of round t (t = 1..T, an int32 scalar).

    Declared by each class itself (not inherited; ``jaxbco._blocks``): ``blocks``, its
    ``sample`` also takes a ``KeyBlock`` or ``RoundKey`` of runs (drawing through
    ``jaxbco._random``) and returns their data with the runs last
    (the sequence's own arrays laid out with trailing unit axes); ``shared``, its data do not
    depend on the key (one sample per round serves every seed)."""

    blocks: ClassVar[bool] = False
    #: declared by each class itself: its block code also runs inside the fused GPU kernel
    #: (``jaxbco._blocks``, ``jaxbco.fused``)
    kernel: ClassVar[bool] = False
    shared: ClassVar[bool] = False

    @abc.abstractmethod
    def sample(self, key: jax.Array, t: jax.Array):
        """The data of round t."""


class Fixed(AbstractSequence):
    """The same data every round (a fixed loss or a fixed constraint)."""

    blocks = True
    kernel = True
    shared = True

    value: object = eqx.field(converter=lambda v: jax.tree_util.tree_map(_checks.numbers, v))

    def __check_init__(self):
        _checks.check_numbers("Fixed value", self.value)

    def sample(self, key, t):
        return self.value


class IIDUniform(AbstractSequence):
    """theta_t ~ U[low, high] i.i.d. (coordinate-wise)."""

    blocks = True
    kernel = True

    low: jax.Array = eqx.field(converter=_checks.real)
    high: jax.Array = eqx.field(converter=_checks.real)

    def __check_init__(self):
        _checks.check_real("IIDUniform low", self.low)
        _checks.check_real("IIDUniform high", self.high)
        _checks.check_finite("low", self.low)
        _checks.check_finite("high", self.high)
        if jnp.shape(self.high) not in ((), jnp.shape(self.low)):
            raise ValueError(f"high must be a scalar or have the shape of low {jnp.shape(self.low)} "
                             f"(theta_t has low's shape); got shape {jnp.shape(self.high)}")
        if _checks.is_concrete((self.low, self.high)) and not np.all(
            np.asarray(self.high) >= np.asarray(self.low)
        ):
            raise ValueError("high - low must lie in [0, inf) in every coordinate")

    def sample(self, key, t):
        u = _random.uniform(key, _random.event_shape(self.low, key), self.low.dtype)
        return self.low + (self.high - self.low) * u


class IIDNormal(AbstractSequence):
    """theta_t ~ N(mean, std^2) i.i.d. (coordinate-wise)."""

    blocks = True
    kernel = True

    mean: jax.Array = eqx.field(converter=_checks.real)
    std: jax.Array = eqx.field(converter=_checks.real)

    def __check_init__(self):
        _checks.check_real("IIDNormal mean", self.mean)
        _checks.check_real("IIDNormal std", self.std)
        _checks.check_finite("mean", self.mean)
        if jnp.shape(self.std) not in ((), jnp.shape(self.mean)):
            raise ValueError(f"std must be a scalar or have the shape of mean {jnp.shape(self.mean)} "
                             f"(theta_t has mean's shape); got shape {jnp.shape(self.std)}")
        _checks.check_range("std", self.std, low=0.0)

    def sample(self, key, t):
        z = normal(key, _random.event_shape(self.mean, key), self.mean.dtype)
        return self.mean + self.std * z


class Switching(AbstractSequence):
    """Piecewise regimes: theta_t = means[k(t)] + std * N(0, I), k(t) = #{boundaries < t}.

    ``means`` has shape (regimes, d); ``boundaries`` (regimes - 1,) are the last rounds of each
    regime but the last.  With ``period`` > 0 the regimes repeat with that period instead.
    An adversarial-style sequence: the best fixed point changes between regimes.
    """

    blocks = True

    means: jax.Array = eqx.field(converter=jnp.asarray)
    boundaries: jax.Array = eqx.field(converter=lambda b: _rounds("boundaries", b))
    std: jax.Array = eqx.field(converter=jnp.asarray, default=0.0)

    def __check_init__(self):
        if jnp.ndim(self.means) != 2:
            raise ValueError(f"means must have shape (regimes, d); got {jnp.shape(self.means)}")
        if jnp.shape(self.boundaries) != (self.means.shape[0] - 1,):
            raise ValueError(
                f"boundaries must have shape ({self.means.shape[0] - 1},), one per regime change; "
                f"got {jnp.shape(self.boundaries)}"
            )
        if jnp.shape(self.std) not in ((), self.means.shape[1:]):
            raise ValueError(f"std must be a scalar or have the shape of one regime's mean "
                             f"{self.means.shape[1:]}; got shape {jnp.shape(self.std)}")
        _checks.check_range("std", self.std, low=0.0)
        _checks.check_finite("means", self.means)
        if _checks.is_concrete(self.boundaries) and self.boundaries.shape[0] > 0:
            b = np.asarray(self.boundaries)
            if b[0] < 1 or np.any(np.diff(b) <= 0):
                raise ValueError(f"boundaries must be strictly increasing rounds >= 1; got {b.tolist()}")

    def sample(self, key, t):
        k = jnp.sum(t > self.boundaries)
        noise = normal(key, _random.event_shape(self.means, key)[1:], self.means.dtype)
        return self.means[k] + self.std * noise


class Replay(AbstractSequence):
    """Explicit recorded data: round t gets ``values[t - 1]`` (any pytree, leading axis T)."""

    blocks = True
    shared = True

    values: object = eqx.field(converter=lambda v: jax.tree_util.tree_map(_checks.numbers, v))

    def __check_init__(self):
        _checks.check_numbers("Replay values", self.values)
        _check_rounds("Replay", "values", self.values)
        _checks.check_finite("replayed data", self.values)

    @property
    def length(self) -> int:
        return jax.tree_util.tree_leaves(self.values)[0].shape[0]

    def sample(self, key, t):
        return jax.tree_util.tree_map(lambda v: v[t - 1], self.values)


def _rounds(name: str, b) -> jax.Array:
    """Round numbers as int32, refusing values that are not whole numbers (never cut)."""
    if _checks.is_concrete(b):
        a = np.asarray(b)
        if a.dtype.kind not in "iub" and (a.dtype.kind != "f" or not np.all(np.isfinite(a))
                                          or np.any(a != np.round(a))):
            raise ValueError(f"{name} must be whole round numbers (int32); got "
                             f"{a.ravel()[:5].tolist()}")
    return jnp.asarray(b, jnp.int32)


def _check_rounds(owner: str, name: str, values) -> None:
    """Every leaf of recorded data has a leading round axis, of one common length >= 1."""
    leaves = jax.tree_util.tree_leaves(values)
    if not leaves:
        raise ValueError(f"{owner} {name} must hold arrays with a leading round axis; got {values!r}")
    shapes = [jnp.shape(leaf) for leaf in leaves]
    if any(len(sh) == 0 for sh in shapes):
        raise ValueError(f"{owner} {name} must have a leading round axis (length T) on every "
                         f"array; got shapes {shapes}")
    lengths = sorted({sh[0] for sh in shapes})
    if len(lengths) > 1:
        raise ValueError(f"{owner} {name} must record one number of rounds in every array (one "
                         f"leading length); got leading lengths {lengths} (shapes {shapes})")
    if lengths[0] < 1:
        raise ValueError(f"{owner} {name} must record at least 1 round; got shapes {shapes}")


class Classification(AbstractSequence):
    """Online classification stream: w_t ~ N(0, I_d), y_t = sign(<w_true, w_t> + noise N(0,1)).

    Yields (w_t, y_t) for the ``Logistic`` loss.
    """

    blocks = True
    kernel = True

    w_true: jax.Array = eqx.field(converter=jnp.asarray)
    noise: jax.Array = eqx.field(converter=jnp.asarray, default=0.1)

    def __check_init__(self):
        _checks.check_vector("w_true", self.w_true)
        _checks.check_finite("w_true", self.w_true)
        _checks.check_scalar("noise", self.noise)
        _checks.check_range("noise", self.noise, low=0.0)

    def sample(self, key, t):
        kw, kn = _random.split(key)
        w = normal(kw, _random.event_shape(self.w_true, key), self.w_true.dtype)
        z = _ops.inner(self.w_true, w) + self.noise * normal(kn, (), self.w_true.dtype)
        return w, jnp.where(z >= 0, 1.0, -1.0).astype(self.w_true.dtype)


class Slackened(AbstractSequence):
    """Time-varying constraint data (phi, s_t) with a slack s_t ~ U[low, high], low >= 0.

    Used with ``constraints.Shifted``: g_t(x) = g(x, phi) - s_t.  Every point with
    g(x, phi) <= 0 is feasible in every round, so the offline problem stays feasible, and the
    intersection over t is {g(x, phi) <= min_t s_t}.
    """

    blocks = True
    kernel = True

    base: object = eqx.field(converter=lambda v: jax.tree_util.tree_map(jnp.asarray, v))
    low: jax.Array = eqx.field(converter=jnp.asarray)
    high: jax.Array = eqx.field(converter=jnp.asarray)

    def __check_init__(self):
        _checks.check_scalar("low", self.low)
        _checks.check_scalar("high", self.high)
        _checks.check_finite("base", self.base)
        _checks.check_range("low", self.low, low=0.0)
        _checks.check_range("high", self.high, low=0.0)
        if _checks.is_concrete((self.low, self.high)) and float(self.high) < float(self.low):
            raise ValueError(f"high must lie in [low, inf) = [{float(self.low):g}, inf); got "
                             f"{float(self.high):g}")

    def sample(self, key, t):
        u = _random.uniform(key, (), self.low.dtype)
        return self.base, self.low + (self.high - self.low) * u


class Alternating(AbstractSequence):
    """Deterministic alternation: round t gets ``values[(t - 1) % len(values)]``.

    With constant constraints g_t = -1, +1, -1, ... this is Guo et al. (2023)'s example where
    the soft violation stays 0 and the hard violation grows like T/2.
    """

    blocks = True
    shared = True

    values: object = eqx.field(converter=lambda v: jax.tree_util.tree_map(jnp.asarray, v))

    def __check_init__(self):
        _check_rounds("Alternating", "values", self.values)
        _checks.check_finite("alternating data", self.values)

    def sample(self, key, t):
        n = jax.tree_util.tree_leaves(self.values)[0].shape[0]
        return jax.tree_util.tree_map(lambda v: v[(t - 1) % n], self.values)
