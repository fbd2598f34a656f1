"""Quadratic loss f_t(x) = scale ||x - theta_t||^2; strongly convex with sigma = 2 scale."""

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco import _checks, _ops
from jaxbco.losses._base import AbstractLoss


class Quadratic(AbstractLoss):
    """f(x, theta) = scale ||x - theta||_2^2 (Thms. 3-4 with sigma = 2 scale).

    ``Quadratic()`` is ||x - theta||^2; ``strongly_convex_quadratic(sigma)`` is (sigma/2)||x - theta||^2.
    """

    blocks = True
    kernel = True

    scale: jax.Array = eqx.field(converter=jnp.asarray, default=1.0)

    def __check_init__(self):
        _checks.check_scalar("scale", self.scale)
        _checks.check_range("scale", self.scale, low=0.0, low_open=True)

    def value(self, x, theta):
        r = x - theta
        return self.scale * _ops.inner(r, r)

    def curvature(self, theta):
        return 2.0 * self.scale

    def data_shape(self, dim):
        return _checks.shape(dim)

    def strong_convexity(self):
        return 2.0 * self.scale

    def lipschitz(self, theta, radius):
        return 2.0 * self.scale * (radius + jnp.linalg.norm(theta))


def strongly_convex_quadratic(sigma) -> Quadratic:
    """f(x, theta) = (sigma/2) ||x - theta||^2, sigma-strongly convex (Assumption 4)."""
    _checks.check_range("sigma", sigma, low=0.0, low_open=True)
    return Quadratic(scale=0.5 * jnp.asarray(sigma))
