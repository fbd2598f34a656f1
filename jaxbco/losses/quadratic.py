"""The quadratic loss fₜ(x) = scale ‖x − θₜ‖₂², strongly convex with σ = 2 scale."""

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco._src import checks, ops
from jaxbco.losses._base import AbstractLoss


class Quadratic(AbstractLoss):
    """The quadratic loss f(x, θ) = scale ‖x − θ‖₂² (Thms. 3-4 with σ = 2 scale).

    ``Quadratic()`` is ‖x − θ‖₂²; ``strongly_convex_quadratic(sigma)`` is (σ/2)‖x − θ‖₂².
    Curvature 2 scale, Lipschitz constant 2 scale (R + ‖θₜ‖) on a ball of radius R about 0.
    Data: θₜ of shape (d,).

    Args:
        scale: a positive scalar (default 1).

    Raises:
        ValueError: for a scale that is not a positive scalar.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import losses
        >>> loss = losses.Quadratic()
        >>> float(loss.value(jnp.array([1.0, 2.0]), jnp.zeros(2)))
        5.0
        >>> float(loss.strong_convexity())
        2.0
    """

    blocks = True
    kernel = True
    offline = "quadratic"

    scale: jax.Array = eqx.field(converter=jnp.asarray, default=1.0)

    def __check_init__(self):
        checks.check_scalar("scale", self.scale)
        checks.check_range("scale", self.scale, low=0.0, low_open=True)

    def value(self, x, theta):
        r = x - theta
        return self.scale * ops.inner(r, r)

    def curvature(self, theta):
        return 2.0 * self.scale

    def data_shape(self, dim):
        return checks.shape(dim)

    def strong_convexity(self):
        return 2.0 * self.scale

    def lipschitz(self, theta, radius):
        return 2.0 * self.scale * (radius + jnp.linalg.norm(theta))

    def statistics(self, theta):
        """(θ, ‖θ‖²)."""
        return theta, ops.inner(theta, theta)

    def total(self, x, sums, t):
        """scale (t‖x‖² − 2⟨x, S_θ⟩ + S_sq), the inner products as chains of adds
        (``ops.sum_axis``: a seed's value the same whatever the batch)."""
        s_theta, s_sq = sums
        inner = lambda a, b: ops.sum_axis(a * b, 0)
        return self.scale * (t * inner(x, x) - 2.0 * inner(x, s_theta) + s_sq)

    def mean_cut(self, x, m, m2):
        """scale (‖x‖² − 2⟨x, m⟩ + m2), gradient 2 scale (x − m)."""
        F = self.scale * (jnp.dot(x, x) - 2.0 * jnp.dot(x, m) + m2)
        return F, 2.0 * self.scale * (x - m)


def strongly_convex_quadratic(sigma) -> Quadratic:
    """The σ-strongly convex quadratic f(x, θ) = (σ/2)‖x − θ‖₂² (Assumption 4).

    Args:
        sigma: the modulus σ > 0.

    Returns:
        A ``Quadratic`` with scale σ/2.

    Raises:
        ValueError: for σ that is not positive.

    Example:
        >>> from jaxbco import losses
        >>> float(losses.strongly_convex_quadratic(4.0).scale)
        2.0
    """
    checks.check_range("sigma", sigma, low=0.0, low_open=True)
    return Quadratic(scale=0.5 * jnp.asarray(sigma))
