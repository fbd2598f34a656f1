"""The logistic loss of online classification: fₜ(x) = log(1 + exp(−yₜ⟨wₜ, x⟩))."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks, ops
from jaxbco._src.sums import mean_over_axis
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

    def mean_derivatives(self, x, thetas):
        """Over T gathered rounds (w (T, d), y (T,)), with zₜ = −yₜ⟨wₜ, x⟩:
        F = mean softplus(z), ∇F = mean σ(zₜ)(−yₜwₜ) and ∇²F = Wᵀ diag(yₜ²σ(zₜ)σ(−zₜ)) W / T,
        the last one matrix product (not T outer products); F and ∇F summed plainly in blocks
        of 32 rounds, the blocks joined with Kahan's compensation.

        Args:
            x: (d,) the point.
            thetas: (w (T, d), y (T,)).

        Returns:
            (F, ∇F, ∇²F).

        Example:
            >>> import jax.numpy as jnp
            >>> from jaxbco import losses
            >>> thetas = (jnp.ones((4, 2)), jnp.array([1.0, -1.0, 1.0, -1.0]))
            >>> f, g, H = losses.Logistic().mean_derivatives(jnp.zeros(2), thetas)
            >>> [round(float(v), 4) for v in g], round(float(H[0, 0]), 4)
            ([0.0, 0.0], 0.25)
        """
        w, y = thetas
        z = -y * (w @ x)
        s = jax.nn.sigmoid(z)
        hess = (w * (y * y * s * jax.nn.sigmoid(-z))[:, None]).T @ w / z.shape[0]
        return (
            mean_over_axis(jnp.logaddexp(0.0, z)),
            mean_over_axis((-y * s)[:, None] * w),
            hess,
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
