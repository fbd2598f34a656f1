"""The log-wealth loss of online portfolio selection: fₜ(x) = −log⟨rₜ, x⟩ (Cover 1991)."""

import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks, ops
from jaxbco.losses._base import AbstractLoss


class LogWealth(AbstractLoss):
    """The log-wealth loss f(x, r) = −log⟨r, x⟩ (Cover 1991), for price relatives r > 0.

    r are the gross returns of day t and x a portfolio on the probability simplex:
    ∑ₜ fₜ(xₜ) = −log(final wealth of the sequence xₜ).  Convex (not strongly),
    ∇f = −r/⟨r, x⟩, ∇²f = r rᵀ/⟨r, x⟩².  On the simplex ⟨r, x⟩ ≥ minᵢ rᵢ, so
    Fₜ ≤ ‖rₜ‖/minᵢ rₜ,ᵢ and the curvature is at most (‖rₜ‖/minᵢ rₜ,ᵢ)²: these bounds hold on X
    (where jaxbco evaluates f; the queries x ± δu stay in X), not on a ball about 0, which
    ``lipschitz`` ignores.  Data: r of shape (d,), positive.  No constructor arguments.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import losses
        >>> f = losses.LogWealth().value(jnp.full(2, 0.5), jnp.asarray([1.1, 0.9]))
        >>> abs(float(f)) < 1e-6   # −log 1 = 0
        True
    """

    blocks = True
    wealth = True

    def value(self, x, theta):
        return -jnp.log(ops.inner(theta, x))

    def curvature(self, theta):
        return (jnp.linalg.norm(theta) / jnp.min(theta)) ** 2

    def data_shape(self, dim):
        return checks.shape(dim)

    def check_data(self, theta, name):
        r = np.asarray(theta)
        if np.any(r <= 0):
            raise ValueError(
                f"{name} (price relatives r_t of LogWealth: -log <r_t, x>) must lie in "
                f"(0, inf); got min {float(np.min(r)):g}"
            )

    def lipschitz(self, theta, radius):
        return jnp.linalg.norm(theta) / jnp.min(theta)
