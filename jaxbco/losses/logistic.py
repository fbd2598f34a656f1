"""Logistic loss for online classification: f_t(x) = log(1 + exp(-y_t <w_t, x>))."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import _checks, _ops
from jaxbco.losses._base import AbstractLoss


class Logistic(AbstractLoss):
    """f(x, (w, y)) = log(1 + exp(-y <w, x>)) with features w and label y in {-1, +1}.

    Curvature ||w||^2 / 4, F_t = ||w||.
    """

    blocks = True
    kernel = True

    def value(self, x, theta):
        w, y = theta
        return jnp.logaddexp(0.0, -y * _ops.inner(w, x))

    def derivatives(self, x, theta):
        """f = softplus(z), z = -y <w, x>: grad = sigmoid(z) (-y w), Hessian
        sigmoid(z) sigmoid(-z) y^2 w w^T (closed form: one outer product, not d autodiff passes)."""
        w, y = theta
        z = -y * _ops.inner(w, x)
        s = jax.nn.sigmoid(z)
        return (jnp.logaddexp(0.0, z), (-y * s) * w,
                (y * y * s * jax.nn.sigmoid(-z)) * w[:, None] * w[None, :])

    def curvature(self, theta):
        w, _ = theta
        return 0.25 * _ops.inner(w, w)

    def data_shape(self, dim):
        return (_checks.shape(dim), _checks.shape())

    def check_data(self, theta, name):
        y = np.asarray(theta[1])
        bad = (y != 1.0) & (y != -1.0)
        if np.any(bad):
            raise ValueError(f"{name} labels y must lie in {{-1, +1}} (Logistic: log(1 + exp(-y <w, x>))); "
                             f"got {np.unique(y[bad])[:5].tolist()}")

    def lipschitz(self, theta, radius):
        w, _ = theta
        return jnp.linalg.norm(w)
