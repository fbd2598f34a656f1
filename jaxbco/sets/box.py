"""The box X = {x : lower ≤ x ≤ upper} (coordinate-wise)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax.projections as proj

from jaxbco._src import checks
from jaxbco.sets._base import AbstractSet, gaussian_direction


class Box(AbstractSet):
    """The box [lower, upper] = {x : lowerᵢ ≤ xᵢ ≤ upperᵢ for every i}.

    Its inscribed ball is centred at the midpoint with r = minᵢ (upperᵢ − lowerᵢ)/2; the
    diameter is ‖upper − lower‖₂.

    Args:
        lower: (d,) the lower bounds.
        upper: (d,) the upper bounds, each above its lower bound.

    Raises:
        ValueError: for bounds of different shapes, non-finite ones, or upperᵢ ≤ lowerᵢ.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import sets
        >>> X = sets.Box(-jnp.ones(2), jnp.ones(2))
        >>> X.project(jnp.array([2.0, 0.5]))
        Array([1. , 0.5], dtype=float32)
    """

    blocks = True
    kernel = True
    form = "box"

    lower: jax.Array = eqx.field(converter=jnp.asarray)
    upper: jax.Array = eqx.field(converter=jnp.asarray)

    def __check_init__(self):
        checks.check_vector("lower", self.lower)
        if jnp.ndim(self.lower) != 1 or jnp.shape(self.lower) != jnp.shape(self.upper):
            raise ValueError(
                f"lower and upper must be vectors of one shape; got {jnp.shape(self.lower)} "
                f"and {jnp.shape(self.upper)}"
            )
        checks.check_finite("lower", self.lower)
        checks.check_finite("upper", self.upper)
        if checks.is_concrete((self.lower, self.upper)) and not np.all(
            np.asarray(self.upper) > np.asarray(self.lower)
        ):
            raise ValueError("upper - lower must lie in (0, inf) in every coordinate")

    @property
    def dim(self) -> int:
        return self.lower.shape[0]

    @property
    def hull_dim(self) -> int:
        return self.dim

    def project(self, x):
        return proj.projection_box(x, self.lower, self.upper)

    def inscribed_ball(self):
        return 0.5 * (self.lower + self.upper), 0.5 * jnp.min(self.upper - self.lower)

    def diameter(self):
        return jnp.linalg.norm(self.upper - self.lower)

    def sample_direction(self, key, dtype):
        return gaussian_direction(key, self.dim, dtype)

    def tangent(self, v):
        return v

    def face(self, x, v, tol):
        return jnp.where((x - self.lower <= tol) | (self.upper - x <= tol), 0.0, v)

    def min_linear(self, a):
        a = np.asarray(a, np.float64)
        lo, hi = np.asarray(self.lower, np.float64), np.asarray(self.upper, np.float64)
        return np.sum(np.minimum(a * lo, a * hi), axis=-1)

    def support(self, v):
        return jnp.sum(jnp.maximum(v * self.lower, v * self.upper))

    def membership(self, x):
        return jnp.max(jnp.maximum(self.lower - x, x - self.upper))

    def membership_pieces(self, x):
        return jnp.concatenate([self.lower - x, x - self.upper])

    def barrier_slacks(self, x):
        return jnp.concatenate([x - self.lower, self.upper - x])
