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


class Ball(AbstractConstraint):
    """g(x, (q, s)) = ||x - q||^2 - s: the isotropic ellipsoid P = I (same values as
    ``Ellipsoid`` with data (I, q, s)), a ball of radius sqrt(s) about q.  Its own type lets
    the prox solver use closed forms (on a ball domain: the projection onto two balls)."""

    kind = "smooth"

    def value(self, x, phi):
        q, s = phi
        r = x - q
        return _ops.dot(r, r) - s

    def curvature(self, phi):
        return jnp.asarray(2.0, phi[0].dtype)

    def interior_point(self, phi):
        return phi[0]

    def lipschitz(self, phi, radius):
        q, _ = phi
        return 2.0 * (radius + jnp.linalg.norm(q))
