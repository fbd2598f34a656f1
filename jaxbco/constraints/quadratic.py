"""Convex quadratic constraints: g(x) = (x − q)ᵀP(x − q) − s with P symmetric PSD, and a ball."""

import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks, ops
from jaxbco.constraints._base import AbstractConstraint


class Ellipsoid(AbstractConstraint):
    """An ellipsoid: g(x, (P, q, s)) = (x − q)ᵀP(x − q) − s, P symmetric positive semidefinite.

    Curvature 2‖P‖₂; interior point q when s is positive.  Data: (P, q, s) of shapes
    ((d, d), (d,), ()).  No constructor arguments.

    Raises:
        ValueError: (before a run, ``check_data``) for a P that is not symmetric or not PSD.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints
        >>> g = constraints.Ellipsoid()
        >>> P = jnp.diag(jnp.array([1.0, 4.0]))
        >>> phi = (P, jnp.zeros(2), jnp.asarray(1.0))   # x₁² + 4x₂² ≤ 1
        >>> float(g.value(jnp.array([0.0, 0.5]), phi)), g.quadratic_form
        (0.0, 'ellipsoid')
    """

    kind = "smooth"
    quadratic_form = "ellipsoid"
    blocks = True

    def value(self, x, phi):
        P, q, s = phi
        r = x - q  # P (d, d); on blocks (d, d, 1) shared or (d, d, runs), with r (d, runs)
        return ops.inner(r, ops.apply(P, r)) - s

    def value_and_gradient(self, x, phi):
        """(rᵀPr − s, 2Pr), r = x − q: one product with P."""
        P, q, s = phi
        r = x - q
        Pr = ops.apply(P, r)
        return ops.inner(r, Pr) - s, 2.0 * Pr

    def curvature(self, phi):
        P, _, _ = phi
        return 2.0 * ops.spectral_norm(P)

    def quadratic(self, phi):
        """(P, q, s) of g = (x − q)ᵀP(x − q) − s."""
        return phi

    def scale(self, phi):
        """maxᵢⱼ |Pᵢⱼ| (|s| where P = 0, else 1)."""
        P, _, s = phi
        c = jnp.max(jnp.abs(P), axis=(0, 1))
        c = jnp.where(c > 0, c, jnp.abs(s))
        return jnp.where(c > 0, c, jnp.ones_like(c))

    def normalised(self, phi):
        P, q, s = phi
        c = self.scale(phi)
        return P / c, q, s / c

    def data_shape(self, dim):
        return (checks.shape(dim, dim), checks.shape(dim), checks.shape())

    def check_data(self, phi, name):
        P = np.asarray(phi[0], np.float64)
        scale = np.max(np.abs(P)) if P.size else 0.0
        asym = np.max(np.abs(P - np.swapaxes(P, -1, -2))) if P.size else 0.0
        if asym > 1e-6 * (1.0 + scale):
            raise ValueError(
                f"{name}[0] (P of the Ellipsoid (x - q)^T P (x - q) - s) must be "
                f"symmetric; got max |P - P^T| = {asym:.3g}"
            )
        low = np.min(np.linalg.eigvalsh(P)) if P.size else 0.0
        if low < -1e-6 * (1.0 + scale):
            raise ValueError(
                f"{name}[0] (P of the Ellipsoid (x - q)^T P (x - q) - s) must be "
                f"positive semidefinite (a convex g); got smallest eigenvalue {low:.3g}"
            )

    def interior_point(self, phi):
        return phi[1]

    def lipschitz(self, phi, radius):
        P, q, _ = phi
        return 2.0 * jnp.linalg.norm(P, ord=2) * (radius + jnp.linalg.norm(q))


class Ball(AbstractConstraint):
    """A ball: g(x, (q, s)) = ‖x − q‖₂² − s, feasible on the ball of radius √s about q.

    The isotropic ellipsoid P = I (the values of ``Ellipsoid`` with data (I, q, s)); its own
    type lets the prox solver use closed forms (on an ``L2Ball`` domain: the projection onto
    two balls, ``solvers.BallBall``).  Data: (q, s) of shapes ((d,), ()).  No constructor
    arguments.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints
        >>> g = constraints.Ball()   # ‖x‖₂² ≤ 4
        >>> float(g.value(jnp.array([1.0, 2.0]), (jnp.zeros(2), jnp.asarray(4.0))))
        1.0
    """

    kind = "smooth"
    quadratic_form = "ball"
    blocks = True
    kernel = True

    def value(self, x, phi):
        q, s = phi
        r = x - q
        return ops.inner(r, r) - s

    def curvature(self, phi):
        return jnp.asarray(2.0, phi[0].dtype)

    def quadratic(self, phi):
        """(I, q, s): P the identity, laid out like q's trailing axes (shared on a block)."""
        q, s = phi
        d = q.shape[0]
        return jnp.eye(d, dtype=q.dtype).reshape((d, d) + (1,) * (q.ndim - 1)), q, s

    def data_shape(self, dim):
        return (checks.shape(dim), checks.shape())

    def interior_point(self, phi):
        return phi[0]

    def lipschitz(self, phi, radius):
        q, _ = phi
        return 2.0 * (radius + jnp.linalg.norm(q))
