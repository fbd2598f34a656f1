"""Linear constraints: one halfspace ⟨a, x⟩ ≤ b, or several with g = maxᵢ (⟨aᵢ, x⟩ − bᵢ)."""

import jax.numpy as jnp

from jaxbco._src import checks, ops
from jaxbco.constraints._base import AbstractConstraint


class Linear(AbstractConstraint):
    """One halfspace: g(x, (a, b)) = ⟨a, x⟩ − b.

    Data: (a, b) of shapes ((d,), ()).  No constructor arguments.  The prox step has a closed
    form on an ``L2Ball`` (``solvers.BallHalfspace``) and a 1-D dual elsewhere.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints
        >>> g = constraints.Linear()
        >>> float(g.value(jnp.array([1.0, 2.0]), (jnp.array([1.0, 1.0]), jnp.asarray(2.0))))
        1.0
    """

    kind = "linear"
    blocks = True
    kernel = True

    def value(self, x, phi):
        a, b = phi
        return ops.inner(a, x) - b

    def rows(self, phi):
        a, b = phi
        return a[None], jnp.expand_dims(b, 0)  # b (or seeds-minor b, (S,)) as one row

    def curvature(self, phi):
        return jnp.zeros((), phi[0].dtype)

    def scale(self, phi):
        """‖a‖₂ (1 where a = 0)."""
        return _nonzero(jnp.sqrt(ops.inner(phi[0], phi[0])))

    def normalised(self, phi):
        a, b = phi
        c = self.scale(phi)
        return a / c, b / c

    def data_shape(self, dim):
        return (checks.shape(dim), checks.shape())

    def lipschitz(self, phi, radius):
        return jnp.linalg.norm(phi[0])


class MultiLinear(AbstractConstraint):
    """m halfspaces as one: g(x, (A, b)) = maxᵢ (Ax − b)ᵢ, the paper's reduction (Sec. 2.2).

    Data: (A, b) of shapes ((m, d), (m,)).  No constructor arguments.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints
        >>> phi = (jnp.eye(2), jnp.array([0.5, 0.5]))   # x₁ ≤ 0.5 and x₂ ≤ 0.5
        >>> float(constraints.MultiLinear().value(jnp.array([1.0, 2.0]), phi))
        1.5
    """

    kind = "polyhedral"
    blocks = True

    def value(self, x, phi):
        A, b = phi  # (m, d), (m,); on blocks (m, d, 1), (m, 1) with x (d, runs)
        return jnp.max(jnp.sum(A * x[None], axis=1) - b, axis=0)

    def rows(self, phi):
        return phi

    def data_shape(self, dim):
        return (checks.shape("m", dim), checks.shape("m"))

    def scale(self, phi):
        """maxᵢ ‖aᵢ‖₂ (1 where A = 0)."""
        A = phi[0]
        return _nonzero(jnp.sqrt(jnp.max(jnp.sum(A * A, axis=1), axis=0)))

    def normalised(self, phi):
        A, b = phi
        c = self.scale(phi)
        return A / c, b / c

    def lipschitz(self, phi, radius):
        return jnp.max(jnp.linalg.norm(phi[0], axis=-1))


def _nonzero(c):
    """c where positive, else 1 (a zero row leaves g = -b, kept as given)."""
    return jnp.where(c > 0, c, jnp.ones_like(c))
