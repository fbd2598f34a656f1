"""Non-smooth and robust losses: the absolute value ‖x − θ‖₁ and Huber's."""

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco._src import checks
from jaxbco.losses._base import AbstractLoss


class Absolute(AbstractLoss):
    """The absolute loss f(x, θ) = ‖x − θ‖₁ (non-smooth; Fₜ = √d).

    Data: θₜ of shape (d,).  No constructor arguments.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import losses
        >>> f = losses.Absolute()
        >>> float(f.value(jnp.array([0.5, -3.0]), jnp.zeros(2))), f.smooth   # ‖x − θ‖₁, kinked
        (3.5, False)
    """

    smooth = False
    offline = "smoothed"
    l1_breakpoints = True

    blocks = True

    def value(self, x, theta):
        return jnp.sum(jnp.abs(x - theta), axis=0)

    def curvature(self, theta):
        return jnp.asarray(jnp.inf, theta.dtype)

    def data_shape(self, dim):
        return checks.shape(dim)

    def lipschitz(self, theta, radius):
        return jnp.sqrt(jnp.asarray(theta.shape[-1], theta.dtype))

    def smoothed(self, width):
        """Huber's loss with κ = width."""
        return Huber(width)


class Huber(AbstractLoss):
    """Huber's loss f(x, θ) = ∑ᵢ H_κ(xᵢ − θᵢ) (Huber 1964).

    H_κ(r) = r²/(2κ) if |r| ≤ κ, else |r| − κ/2: curvature 1/κ, Fₜ = √d.  Data: θₜ of shape (d,).

    Args:
        kappa: the threshold κ > 0, a scalar (default 1).

    Raises:
        ValueError: for κ that is not a positive scalar.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import losses
        >>> f = losses.Huber(kappa=1.0)
        >>> float(f.value(jnp.array([0.5, 3.0]), jnp.zeros(2)))   # 0.5²/2 + (3 − 1/2)
        2.625
    """

    blocks = True
    exact_curvature = True

    kappa: jax.Array = eqx.field(converter=jnp.asarray, default=1.0)

    def __check_init__(self):
        checks.check_scalar("kappa", self.kappa)
        checks.check_range("kappa", self.kappa, low=0.0, low_open=True)

    def value(self, x, theta):
        r = jnp.abs(x - theta)
        return jnp.sum(
            jnp.where(r <= self.kappa, 0.5 * r * r / self.kappa, r - 0.5 * self.kappa), axis=0
        )

    def curvature(self, theta):
        return 1.0 / self.kappa

    def data_shape(self, dim):
        return checks.shape(dim)

    def lipschitz(self, theta, radius):
        return jnp.sqrt(jnp.asarray(theta.shape[-1], theta.dtype))
