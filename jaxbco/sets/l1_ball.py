"""The cross-polytope X = {x : ‖x − center‖₁ ≤ radius}."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax.projections as proj

from jaxbco._src import checks, ops
from jaxbco.sets._base import AbstractSet, gaussian_direction

_FACET_DIM = 10  # barrier_slacks up to 2^10 facets


class L1Ball(AbstractSet):
    """The L1 ball {x : ‖x − center‖₁ ≤ radius}.

    Its inscribed Euclidean ball is centred at the centre with r = radius / √d; the diameter
    is D = 2 radius.  The projection is optax's ``projection_l1_ball`` about the centre.

    Args:
        center: (d,) the ball's centre.
        radius: a positive scalar, the L1 radius.

    Raises:
        ValueError: for a centre that is not a finite vector or a radius that is not positive.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import sets
        >>> X = sets.L1Ball(jnp.zeros(2), 1.0)
        >>> X.project(jnp.array([2.0, 0.0])), float(X.inscribed_ball()[1])   # r = 1/√2
        (Array([1., 0.], dtype=float32), 0.7071067690849304)
    """

    blocks = True
    form = "l1-ball"

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
        return ops.columns(self._project, x)

    def _project(self, x):
        # optax promotes to the default float (float64 under x64): project there, cast back.
        # One column x (d,); the centre is (d,), or (d, 1) as laid out on seeds-minor blocks.
        wide = jnp.result_type(float)
        c = jnp.reshape(self.center, x.shape)
        z = proj.projection_l1_ball((x - c).astype(wide), jnp.reshape(self.radius, ()).astype(wide))
        return (c + z.astype(x.dtype)).astype(x.dtype)

    def inscribed_ball(self):
        return self.center, self.radius / jnp.sqrt(jnp.asarray(self.dim, self.radius.dtype))

    def diameter(self):
        return 2.0 * self.radius

    def sample_direction(self, key, dtype):
        return gaussian_direction(key, self.dim, dtype)

    def tangent(self, v):
        return v

    def face(self, x, v, tol):
        r = x - self.center
        on = jnp.sum(jnp.abs(r), axis=0) >= self.radius - tol
        support = jnp.abs(r) > tol
        sign = jnp.where(support, jnp.sign(r), 0.0)
        w = jnp.where(support, v, 0.0)
        count = jnp.maximum(jnp.sum(support, axis=0), 1).astype(v.dtype)
        return jnp.where(on, w - (jnp.sum(w * sign, axis=0) / count) * sign, v)

    def min_linear(self, a):
        a = np.asarray(a, np.float64)
        c = np.asarray(self.center, np.float64)
        return a @ c - float(self.radius) * np.max(np.abs(a), axis=-1)

    def support(self, v):
        return jnp.dot(v, self.center) + self.radius * jnp.max(jnp.abs(v))

    steer = True

    def membership(self, x):
        return jnp.sum(jnp.abs(x - self.center)) - self.radius

    def barrier_slacks(self, x):
        # r - <s, x - c> over the 2^d sign vectors s (its facets), up to d = 10; else None
        d = x.shape[0]
        if d > _FACET_DIM:
            return None
        signs = 1.0 - 2.0 * ((np.arange(2**d)[:, None] >> np.arange(d)) & 1)
        return self.radius - jnp.asarray(signs, x.dtype) @ (x - self.center)

    def lift(self, x):
        # above d = 10 (no barrier_slacks): t_i = |x_i - c_i| + an equal share of half the slack
        if x.shape[0] <= _FACET_DIM:
            return None
        r = jnp.abs(x - self.center)
        return r + 0.5 * (self.radius - jnp.sum(r)) / x.shape[0]

    def lifted_slacks(self, z):
        d = self.dim
        x, t = z[:d], z[d:]
        r = x - self.center
        return jnp.concatenate([t - r, t + r, (self.radius - jnp.sum(t))[None]])
