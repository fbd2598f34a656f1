"""Non-smooth and robust losses: absolute value ||x - theta||_1 and Huber."""

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco import _checks
from jaxbco.losses._base import AbstractLoss


class Absolute(AbstractLoss):
    """f(x, theta) = ||x - theta||_1 (non-smooth; F_t = sqrt(d))."""

    smooth = False

    blocks = True

    def value(self, x, theta):
        return jnp.sum(jnp.abs(x - theta), axis=0)

    def curvature(self, theta):
        return jnp.asarray(jnp.inf, theta.dtype)

    def data_shape(self, dim):
        return _checks.shape(dim)

    def lipschitz(self, theta, radius):
        return jnp.sqrt(jnp.asarray(theta.shape[-1], theta.dtype))


class Huber(AbstractLoss):
    """f(x, theta) = sum_i H_kappa(x_i - theta_i), H_kappa(r) = r^2/(2 kappa) if |r| <= kappa
    else |r| - kappa/2 (Huber 1964): curvature 1/kappa, F_t = sqrt(d)."""

    blocks = True

    kappa: jax.Array = eqx.field(converter=jnp.asarray, default=1.0)

    def __check_init__(self):
        _checks.check_scalar("kappa", self.kappa)
        _checks.check_range("kappa", self.kappa, low=0.0, low_open=True)

    def value(self, x, theta):
        r = jnp.abs(x - theta)
        return jnp.sum(jnp.where(r <= self.kappa, 0.5 * r * r / self.kappa, r - 0.5 * self.kappa), axis=0)

    def curvature(self, theta):
        return 1.0 / self.kappa

    def data_shape(self, dim):
        return _checks.shape(dim)

    def lipschitz(self, theta, radius):
        return jnp.sqrt(jnp.asarray(theta.shape[-1], theta.dtype))
