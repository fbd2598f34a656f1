"""The Euclidean ball X = {x : ‖x − center‖₂ ≤ radius}."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax.projections as proj

from jaxbco._src import checks, ops
from jaxbco.sets._base import AbstractSet, gaussian_direction


class L2Ball(AbstractSet):
    """The Euclidean ball B(center, radius) = {x : ‖x − center‖₂ ≤ radius}.

    Its inscribed ball is itself and its diameter D = 2 radius; the projection is optax's
    ``projection_l2_ball`` about the centre.

    Args:
        center: (d,) the ball's centre.
        radius: a positive scalar, the ball's radius.

    Raises:
        ValueError: for a centre that is not a finite vector or a radius that is not positive.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import sets
        >>> X = sets.L2Ball(jnp.zeros(3), 1.0)
        >>> X.project(jnp.array([3.0, 0.0, 4.0]))
        Array([0.6, 0. , 0.8], dtype=float32)
        >>> X.dim, float(X.diameter())
        (3, 2.0)
    """

    blocks = True
    kernel = True
    form = "l2-ball"

    center: jax.Array = eqx.field(converter=jnp.asarray)
    radius: jax.Array = eqx.field(converter=jnp.asarray)

    def __check_init__(self):
        checks.check_vector("center", self.center)
        checks.check_finite("center", self.center)
        checks.check_scalar("radius", self.radius)
        checks.check_range("radius", self.radius, low=0.0, low_open=True)

    @property
    def dim(self) -> int:
        return self.center.shape[0]

    @property
    def hull_dim(self) -> int:
        return self.dim

    def project(self, x):
        if jnp.ndim(x) == 1:
            return self.center + proj.projection_l2_ball(x - self.center, self.radius)
        # A seeds-minor block (d, ..., seeds) (``jaxbco.backends.seeds_minor``): optax's projection takes the
        # norm of the whole array, so the same formula column by column.
        r = x - self.center
        n2 = ops.inner(r, r)
        big = n2 > self.radius * self.radius
        return self.center + r * jnp.where(
            big, self.radius / jnp.sqrt(jnp.where(big, n2, 1.0)), 1.0
        )

    def inscribed_ball(self):
        return self.center, self.radius

    def diameter(self):
        return 2.0 * self.radius

    def sample_direction(self, key, dtype):
        return gaussian_direction(key, self.dim, dtype)

    def tangent(self, v):
        return v

    def face(self, x, v, tol):
        r = x - self.center
        norm = jnp.sqrt(jnp.sum(r * r, axis=0))
        u = r / jnp.where(norm > 0, norm, 1.0)
        return jnp.where(norm >= self.radius - tol, v - jnp.sum(v * u, axis=0) * u, v)

    def min_linear(self, a):
        a = np.asarray(a, np.float64)
        c = np.asarray(self.center, np.float64)
        return a @ c - float(self.radius) * np.linalg.norm(a, axis=-1)

    def support(self, v):
        return jnp.dot(v, self.center) + self.radius * jnp.sqrt(jnp.sum(v * v))

    smooth_membership = True  # ||x - c|| - r: a kink only at the centre, where it is -r

    def membership(self, x):
        return jnp.sqrt(jnp.sum((x - self.center) ** 2)) - self.radius

    def barrier_slacks(self, x):
        # (r^2 - |x - c|^2) / (2 r): the ball, smooth also at the centre
        return ((self.radius**2 - jnp.sum((x - self.center) ** 2)) / (2 * self.radius))[None]
