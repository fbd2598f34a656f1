"""Logistic loss for online classification: f_t(x) = log(1 + exp(-y_t <w_t, x>))."""

import jax.numpy as jnp

from jaxbco import _ops
from jaxbco.losses._base import AbstractLoss


class Logistic(AbstractLoss):
    """f(x, (w, y)) = log(1 + exp(-y <w, x>)) with features w and label y in {-1, +1}.

    Curvature ||w||^2 / 4, F_t = ||w||.
    """

    def value(self, x, theta):
        w, y = theta
        return jnp.logaddexp(0.0, -y * _ops.dot(w, x))

    def curvature(self, theta):
        w, _ = theta
        return 0.25 * _ops.dot(w, w)

    def lipschitz(self, theta, radius):
        w, _ = theta
        return jnp.linalg.norm(w)
