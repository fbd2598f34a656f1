"""Linear loss f_t(x) = <theta_t, x>."""

import jax.numpy as jnp

from jaxbco import _checks, _ops
from jaxbco.losses._base import AbstractLoss


class Linear(AbstractLoss):
    """f(x, theta) = <theta, x>: F_t = ||theta_t||, no curvature."""

    blocks = True
    kernel = True

    def value(self, x, theta):
        return _ops.inner(theta, x)

    def curvature(self, theta):
        return jnp.zeros((), theta.dtype)

    def data_shape(self, dim):
        return _checks.shape(dim)

    def lipschitz(self, theta, radius):
        return jnp.linalg.norm(theta)
