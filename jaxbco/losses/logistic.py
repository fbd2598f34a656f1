"""The logistic loss of online classification: fₜ(x) = log(1 + exp(−yₜ⟨wₜ, x⟩))."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks, ops
from jaxbco.losses._base import AbstractLoss


class Logistic(AbstractLoss):
    """The logistic loss f(x, (w, y)) = log(1 + exp(−y⟨w, x⟩)), features w, label y ∈ {−1, +1}.

    Curvature ‖w‖₂²/4, Lipschitz constant Fₜ = ‖w‖₂.  Data: (w, y) of shapes ((d,), ()), e.g.
    from ``sequences.Classification``.  No constructor arguments.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import losses
        >>> loss = losses.Logistic()
        >>> float(loss.value(jnp.zeros(2), (jnp.ones(2), jnp.asarray(1.0))))  # log 2
        0.693...
    """

    blocks = True
    kernel = True
    offline = "newton"

    def value(self, x, theta):
        w, y = theta
        return jnp.logaddexp(0.0, -y * ops.inner(w, x))

    def derivatives(self, x, theta):
        """f = softplus(z), z = −y⟨w, x⟩: ∇f = sigmoid(z)(−y w), ∇²f =
        sigmoid(z) sigmoid(−z) y² w wᵀ (closed form: one outer product, not d autodiff passes)."""
        w, y = theta
        z = -y * ops.inner(w, x)
        s = jax.nn.sigmoid(z)
        return (
            jnp.logaddexp(0.0, z),
            (-y * s) * w,
            (y * y * s * jax.nn.sigmoid(-z)) * w[:, None] * w[None, :],
        )

    def curvature(self, theta):
        w, _ = theta
        return 0.25 * ops.inner(w, w)

    def data_shape(self, dim):
        return (checks.shape(dim), checks.shape())

    def check_data(self, theta, name):
        y = np.asarray(theta[1])
        bad = (y != 1.0) & (y != -1.0)
        if np.any(bad):
            raise ValueError(
                f"{name} labels y must lie in {{-1, +1}} (Logistic: log(1 + exp(-y <w, x>))); "
                f"got {np.unique(y[bad])[:5].tolist()}"
            )

    def lipschitz(self, theta, radius):
        w, _ = theta
        return jnp.linalg.norm(w)
