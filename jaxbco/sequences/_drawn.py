"""Drawn data: sequences whose round-t data is sampled from round t's key (i.i.d. uniform or
normal, switching regimes, a classification stream, a random constraint slack)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks, ops, prng
from jaxbco._src.normal import normal
from jaxbco._src.recorded_data import round_numbers
from jaxbco.sequences._base import AbstractSequence


class IIDUniform(AbstractSequence):
    """θₜ ~ U[low, high] i.i.d. over rounds, independently in each coordinate.

    Args:
        low: (d,) (or any shape) the lower bounds; θₜ has low's shape.
        high: the upper bounds, low's shape or a scalar, at least ``low``.

    Raises:
        ValueError: for non-finite bounds, a ``high`` of another shape, or high below low.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import sequences
        >>> seq = sequences.IIDUniform(jnp.zeros(3), 1.0)
        >>> theta = seq.sample(jax.random.key(0), jnp.int32(1))
        >>> theta.shape, bool(((0 <= theta) & (theta <= 1)).all())
        ((3,), True)
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

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import sequences
        >>> seq = sequences.Switching(jnp.array([[1.0, 0.0], [-1.0, 0.0]]), jnp.array([50]))
        >>> key = jax.random.key(0)
        >>> seq.sample(key, jnp.int32(50)), seq.sample(key, jnp.int32(51))   # regime 1, then 2
        (Array([1., 0.], dtype=float32), Array([-1.,  0.], dtype=float32))
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


class Classification(AbstractSequence):
    """An online classification stream for ``losses.Logistic``: data (wₜ, yₜ) of shapes ((d,), ()).

    wₜ ~ N(0, I_d) and yₜ = sign(⟨w_true, wₜ⟩ + noise·N(0, 1)) ∈ {−1, +1}.

    Args:
        w_true: (d,) the true classifier.
        noise: the label noise's standard deviation, a non-negative scalar (default 0.1).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import sequences
        >>> w, y = sequences.Classification(jnp.ones(3)).sample(jax.random.key(0), jnp.int32(1))
        >>> w.shape, float(abs(y))   # wₜ ~ N(0, I), yₜ = ±1
        ((3,), 1.0)
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

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import sequences
        >>> seq = sequences.Slackened((jnp.array([1.0, 0.0]), jnp.asarray(0.5)), 0.0, 0.2)
        >>> (a, b), s = seq.sample(jax.random.key(0), jnp.int32(1))   # (φ, sₜ)
        >>> a, float(b), bool(0.0 <= s <= 0.2)
        (Array([1., 0.], dtype=float32), 0.5, True)
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
