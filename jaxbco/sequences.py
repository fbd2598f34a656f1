"""Data sequences: θₜ (loss data) and φₜ (constraint data) as pure functions of (key, t).

A sequence is sampled inside the scan, round by round, from round t's stream
(``jaxbco.keys``: a ``RoundKey``, stream 0 the loss data, 2 the constraint data; a sequence
that does not declare ``blocks`` gets a typed key derived from it): nothing of size
seeds × T × d is ever materialised, and round t's data is the same whatever batch, chunk or
order it is computed in.
"""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks, ops, prng
from jaxbco._src.normal import normal
from jaxbco._src.recorded_data import check_rounds, first_rounds, round_numbers


class AbstractSequence(eqx.Module):
    """A data sequence: ``sample(key, t)`` returns the data of round t (t = 1..T).

    A sequence of your own subclasses this and implements ``sample``.  Declared by each class
    itself (not inherited; ``jaxbco._src.blocks``): ``blocks``, its ``sample`` also takes a
    ``KeyBlock`` or ``RoundKey`` of runs (drawing through ``jaxbco._src.prng``) and returns their
    data with the runs last (its own arrays with trailing unit axes); ``shared``, its data do
    not depend on the key (one sample per round serves every seed)."""

    blocks: ClassVar[bool] = False
    #: declared by each class itself: its block code also runs inside the fused GPU kernel
    #: (``jaxbco._src.blocks``, ``jaxbco.fused``)
    kernel: ClassVar[bool] = False
    shared: ClassVar[bool] = False
    #: every round gets the same data, whatever the key and the round (``Fixed``)
    constant: ClassVar[bool] = False
    #: data (φ, sₜ): a fixed ``base`` φ, a slack sₜ in [``low``, ``high``] (``Slackened``); with
    #: a ``shift`` constraint the rounds' sets meet in {g(·, φ) ≤ minₜ sₜ}
    slack: ClassVar[bool] = False

    def recorded(self, horizon: int | None = None):
        """The data of every distinct round of a run of ``horizon`` rounds, as a table.

        Args:
            horizon: T (None: every recorded round).

        Returns:
            A pytree with a leading round axis (constant: one row; replayed: the first T rows;
            cycled: one cycle), or None for drawn data (the default).
        """
        return None

    @property
    def length(self) -> int | None:
        """How many rounds the sequence can supply (a horizon may not exceed it); None: any."""
        return None

    def every_round(self):
        """The data of every round, for a ``constant`` sequence (its one recorded row)."""
        return jax.tree_util.tree_map(lambda v: v[0], self.recorded())

    @abc.abstractmethod
    def sample(self, key: jax.Array, t: jax.Array):
        """The data of round t.

        Args:
            key: round t's PRNG key (the same key for the same seed and round, whatever else
                runs).
            t: the round, an int32 scalar in 1..T.

        Returns:
            One round's data: a pytree of arrays with the shapes the loss or constraint family
            expects (e.g. (d,) for ``losses.Quadratic``, ((d,), ()) for ``constraints.Linear``).
        """


class Fixed(AbstractSequence):
    """The same data every round (a fixed loss or a fixed constraint).

    Args:
        value: the data of every round, any pytree of numbers (e.g. (a, b) of shapes ((d,), ())
            for ``constraints.Linear``).
    """

    blocks = True
    kernel = True
    shared = True
    constant = True

    value: object = eqx.field(converter=lambda v: jax.tree_util.tree_map(checks.numbers, v))

    def __check_init__(self):
        checks.check_numbers("Fixed value", self.value)

    def recorded(self, horizon=None):
        return jax.tree_util.tree_map(lambda v: v[None], self.value)

    def every_round(self):
        return self.value

    def sample(self, key, t):
        return self.value


class IIDUniform(AbstractSequence):
    """θₜ ~ U[low, high] i.i.d. over rounds, independently in each coordinate.

    Args:
        low: (d,) (or any shape) the lower bounds; θₜ has low's shape.
        high: the upper bounds, low's shape or a scalar, at least ``low``.

    Raises:
        ValueError: for non-finite bounds, a ``high`` of another shape, or high below low.
    """

    blocks = True
    kernel = True

    low: jax.Array = eqx.field(converter=checks.real)
    high: jax.Array = eqx.field(converter=checks.real)

    def __check_init__(self):
        checks.check_real("IIDUniform low", self.low)
        checks.check_real("IIDUniform high", self.high)
        checks.check_finite("low", self.low)
        checks.check_finite("high", self.high)
        if jnp.shape(self.high) not in ((), jnp.shape(self.low)):
            raise ValueError(
                f"high must be a scalar or have the shape of low {jnp.shape(self.low)} "
                f"(theta_t has low's shape); got shape {jnp.shape(self.high)}"
            )
        if checks.is_concrete((self.low, self.high)) and not np.all(
            np.asarray(self.high) >= np.asarray(self.low)
        ):
            raise ValueError("high - low must lie in [0, inf) in every coordinate")

    def sample(self, key, t):
        u = prng.uniform(key, prng.event_shape(self.low, key), self.low.dtype)
        return self.low + (self.high - self.low) * u


class IIDNormal(AbstractSequence):
    """θₜ ~ N(mean, std²) i.i.d. over rounds, independently in each coordinate.

    Args:
        mean: (d,) (or any shape) the mean; θₜ has mean's shape.
        std: the standard deviations, mean's shape or a scalar, non-negative.

    Raises:
        ValueError: for a non-finite mean, a ``std`` of another shape, or a negative std.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import sequences
        >>> seq = sequences.IIDNormal(jnp.zeros(3), 0.1)
        >>> seq.sample(jax.random.key(0), jnp.asarray(1, jnp.int32)).shape
        (3,)
    """

    blocks = True
    kernel = True

    mean: jax.Array = eqx.field(converter=checks.real)
    std: jax.Array = eqx.field(converter=checks.real)

    def __check_init__(self):
        checks.check_real("IIDNormal mean", self.mean)
        checks.check_real("IIDNormal std", self.std)
        checks.check_finite("mean", self.mean)
        if jnp.shape(self.std) not in ((), jnp.shape(self.mean)):
            raise ValueError(
                f"std must be a scalar or have the shape of mean {jnp.shape(self.mean)} "
                f"(theta_t has mean's shape); got shape {jnp.shape(self.std)}"
            )
        checks.check_range("std", self.std, low=0.0)

    def sample(self, key, t):
        z = normal(key, prng.event_shape(self.mean, key), self.mean.dtype)
        return self.mean + self.std * z


class Switching(AbstractSequence):
    """Piecewise regimes: θₜ = means[k(t)] + std·N(0, I), k(t) = #{boundaries below t}.

    An adversarial-style sequence: the best fixed point changes between regimes.

    Args:
        means: (regimes, d) one mean per regime.
        boundaries: (regimes − 1,) int, the last round of each regime but the last, strictly
            increasing and at least 1.
        std: the noise's standard deviation, a scalar or (d,), non-negative (default 0).

    Raises:
        ValueError: for shapes that do not match or boundaries that are not increasing rounds.
    """

    blocks = True

    means: jax.Array = eqx.field(converter=jnp.asarray)
    boundaries: jax.Array = eqx.field(converter=lambda b: round_numbers("boundaries", b))
    std: jax.Array = eqx.field(converter=jnp.asarray, default=0.0)

    def __check_init__(self):
        if jnp.ndim(self.means) != 2:
            raise ValueError(f"means must have shape (regimes, d); got {jnp.shape(self.means)}")
        if jnp.shape(self.boundaries) != (self.means.shape[0] - 1,):
            raise ValueError(
                f"boundaries must have shape ({self.means.shape[0] - 1},), one per "
                f"regime change; got {jnp.shape(self.boundaries)}"
            )
        if jnp.shape(self.std) not in ((), self.means.shape[1:]):
            raise ValueError(
                f"std must be a scalar or have the shape of one regime's mean "
                f"{self.means.shape[1:]}; got shape {jnp.shape(self.std)}"
            )
        checks.check_range("std", self.std, low=0.0)
        checks.check_finite("means", self.means)
        if checks.is_concrete(self.boundaries) and self.boundaries.shape[0] > 0:
            b = np.asarray(self.boundaries)
            if b[0] < 1 or np.any(np.diff(b) <= 0):
                raise ValueError(
                    f"boundaries must be strictly increasing rounds >= 1; got {b.tolist()}"
                )

    def sample(self, key, t):
        k = jnp.sum(t > self.boundaries)
        noise = normal(key, prng.event_shape(self.means, key)[1:], self.means.dtype)
        return self.means[k] + self.std * noise


class Replay(AbstractSequence):
    """Recorded data: round t gets ``values[t - 1]``.

    Args:
        values: any pytree of arrays with one leading round axis of length T' ≥ T (the
            horizon of a run may not exceed it).

    Raises:
        ValueError: for arrays without a common leading round axis, or non-finite data.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import sequences
        >>> seq = sequences.Replay(jnp.arange(6.0).reshape(3, 2))   # 3 rounds of (2,) data
        >>> seq.sample(jax.random.key(0), jnp.asarray(2, jnp.int32)), seq.length
        (Array([2., 3.], dtype=float32), 3)
    """

    blocks = True
    shared = True

    values: object = eqx.field(converter=lambda v: jax.tree_util.tree_map(checks.numbers, v))

    def __check_init__(self):
        checks.check_numbers("Replay values", self.values)
        check_rounds("Replay", "values", self.values)
        checks.check_finite("replayed data", self.values)

    @property
    def length(self) -> int:
        return jax.tree_util.tree_leaves(self.values)[0].shape[0]

    def recorded(self, horizon=None):
        return first_rounds(self.values, horizon)

    def sample(self, key, t):
        return jax.tree_util.tree_map(lambda v: v[t - 1], self.values)


class Classification(AbstractSequence):
    """An online classification stream for ``losses.Logistic``: data (wₜ, yₜ) of shapes ((d,), ()).

    wₜ ~ N(0, I_d) and yₜ = sign(⟨w_true, wₜ⟩ + noise·N(0, 1)) ∈ {−1, +1}.

    Args:
        w_true: (d,) the true classifier.
        noise: the label noise's standard deviation, a non-negative scalar (default 0.1).
    """

    blocks = True
    kernel = True

    w_true: jax.Array = eqx.field(converter=jnp.asarray)
    noise: jax.Array = eqx.field(converter=jnp.asarray, default=0.1)

    def __check_init__(self):
        checks.check_vector("w_true", self.w_true)
        checks.check_finite("w_true", self.w_true)
        checks.check_scalar("noise", self.noise)
        checks.check_range("noise", self.noise, low=0.0)

    def sample(self, key, t):
        kw, kn = prng.split(key)
        w = normal(kw, prng.event_shape(self.w_true, key), self.w_true.dtype)
        z = ops.inner(self.w_true, w) + self.noise * normal(kn, (), self.w_true.dtype)
        return w, jnp.where(z >= 0, 1.0, -1.0).astype(self.w_true.dtype)


class Slackened(AbstractSequence):
    """Time-varying constraint data (φ, sₜ) with a slack sₜ ~ U[low, high], 0 ≤ low ≤ high.

    Used with ``constraints.Shifted``: gₜ(x) = g(x, φ) − sₜ.  Every point with g(x, φ) ≤ 0 is
    feasible in every round, so the offline problem stays feasible, and the intersection over
    t is {g(x, φ) ≤ minₜ sₜ}.

    Args:
        base: φ, the base constraint's data (a pytree of arrays, e.g. (a, b) for ``Linear``).
        low: the smallest slack, a scalar ≥ 0.
        high: the largest slack, a scalar ≥ low.
    """

    blocks = True
    kernel = True
    slack = True

    base: object = eqx.field(converter=lambda v: jax.tree_util.tree_map(jnp.asarray, v))
    low: jax.Array = eqx.field(converter=jnp.asarray)
    high: jax.Array = eqx.field(converter=jnp.asarray)

    def __check_init__(self):
        checks.check_scalar("low", self.low)
        checks.check_scalar("high", self.high)
        checks.check_finite("base", self.base)
        checks.check_range("low", self.low, low=0.0)
        checks.check_range("high", self.high, low=0.0)
        if checks.is_concrete((self.low, self.high)) and float(self.high) < float(self.low):
            raise ValueError(
                f"high must lie in [low, inf) = [{float(self.low):g}, inf); got "
                f"{float(self.high):g}"
            )

    def sample(self, key, t):
        u = prng.uniform(key, (), self.low.dtype)
        return self.base, self.low + (self.high - self.low) * u


class Alternating(AbstractSequence):
    """Deterministic alternation: round t gets ``values[(t − 1) mod n]``, n the leading length.

    With constant constraints gₜ = −1, +1, −1, ... this is Guo et al. (2023)'s example where
    the soft violation stays 0 and the hard violation grows like T/2.

    Args:
        values: any pytree of arrays with one leading axis of length n ≥ 1.
    """

    blocks = True
    shared = True

    values: object = eqx.field(converter=lambda v: jax.tree_util.tree_map(jnp.asarray, v))

    def __check_init__(self):
        check_rounds("Alternating", "values", self.values)
        checks.check_finite("alternating data", self.values)

    def recorded(self, horizon=None):
        return first_rounds(self.values, horizon)

    def sample(self, key, t):
        n = jax.tree_util.tree_leaves(self.values)[0].shape[0]
        return jax.tree_util.tree_map(lambda v: v[(t - 1) % n], self.values)
