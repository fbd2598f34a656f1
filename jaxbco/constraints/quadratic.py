"""Convex quadratic (ellipsoid) constraint g(x) = (x - q)^T P (x - q) - s, P symmetric PSD."""

import jax.numpy as jnp

from jaxbco import _ops
from jaxbco.constraints._base import AbstractConstraint


class Ellipsoid(AbstractConstraint):
    """g(x, (P, q, s)) = (x - q)^T P (x - q) - s: curvature 2 ||P||_2, interior point q if s > 0."""

    kind = "smooth"

    def value(self, x, phi):
        P, q, s = phi
        r = x - q
        return _ops.dot(r, _ops.matvec(P, r)) - s

    def curvature(self, phi):
        P, _, _ = phi
        return 2.0 * jnp.linalg.norm(P, ord=2)

    def interior_point(self, phi):
        return phi[1]

    def lipschitz(self, phi, radius):
        P, q, _ = phi
        return 2.0 * jnp.linalg.norm(P, ord=2) * (radius + jnp.linalg.norm(q))
