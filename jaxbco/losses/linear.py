"""The linear loss fₜ(x) = ⟨θₜ, x⟩."""

import jax.numpy as jnp

from jaxbco._src import checks, ops
from jaxbco.losses._base import AbstractLoss


class Linear(AbstractLoss):
    """The linear loss f(x, θ) = ⟨θ, x⟩: Lipschitz constant Fₜ = ‖θₜ‖₂, no curvature.

    Data: θₜ of shape (d,).  No constructor arguments.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import losses
        >>> float(losses.Linear().value(jnp.array([1.0, 2.0]), jnp.array([3.0, -1.0])))
        1.0
    """

    blocks = True
    kernel = True
    offline = "linear"

    def value(self, x, theta):
        return ops.inner(theta, x)

    def curvature(self, theta):
        return jnp.zeros((), theta.dtype)

    def data_shape(self, dim):
        return checks.shape(dim)

    def lipschitz(self, theta, radius):
        return jnp.linalg.norm(theta)

    def statistics(self, theta):
        """(θ, 0)."""
        return theta, jnp.zeros_like(theta[0])

    def total(self, x, sums, t):
        """⟨x, S_θ⟩ as a chain of adds (``ops.sum_axis``)."""
        return ops.sum_axis(x * sums[0], 0)

    def mean_cut(self, x, m, m2):
        """⟨x, m⟩, gradient m."""
        return jnp.dot(x, m), m
