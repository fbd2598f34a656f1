"""Abstract feasible set X: projection, an inscribed ball, shrinkage, perturbation directions."""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco import _ops
from jaxbco._normal import normal


class AbstractSet(eqx.Module):
    """A compact convex set X in R^d with a Euclidean projection and an inscribed ball.

    The inscribed ball B(c, r) (relative to the affine hull of X) defines the shrunk set
    (1-xi) X := c + (1-xi)(X - c); for x in (1-xi) X and a unit direction u in the hull,
    x + delta u lies in X whenever delta <= xi r (Flaxman et al. 2004, Observation 2).

    ``blocks`` (declared by each class itself, not inherited): its methods also take
    seeds-minor blocks (``jaxbco._blocks``).
    """

    blocks: ClassVar[bool] = False
    #: declared by each class itself: its block code also runs inside the fused GPU kernel
    #: (``jaxbco._blocks``, ``jaxbco.fused``)
    kernel: ClassVar[bool] = False

    @property
    @abc.abstractmethod
    def dim(self) -> int:
        """Ambient dimension d."""

    @property
    @abc.abstractmethod
    def hull_dim(self) -> int:
        """Dimension of the affine hull of X: the d in the estimator's d/(2 delta), Eq. (4)."""

    @abc.abstractmethod
    def project(self, x: jax.Array) -> jax.Array:
        """Euclidean projection onto X."""

    @abc.abstractmethod
    def inscribed_ball(self) -> tuple[jax.Array, jax.Array]:
        """(c, r): a ball of radius r about c, inside X (within its affine hull)."""

    @abc.abstractmethod
    def diameter(self) -> jax.Array:
        """D = max ||x - y|| over X (Assumption 1)."""

    @abc.abstractmethod
    def sample_direction(self, key: jax.Array, dtype) -> jax.Array:
        """u uniform on the unit sphere of the hull's direction space."""

    @abc.abstractmethod
    def tangent(self, v: jax.Array) -> jax.Array:
        """Orthogonal projection of a vector onto the hull's direction space."""

    def face(self, x: jax.Array, v: jax.Array, tol) -> jax.Array:
        """Orthogonal projection of v onto the direction space of X's face containing x (x
        within ``tol`` of a bound counts as on it): v where x is interior.  The prox
        certificate (``solvers.gap``) reads the multiplier off it; one run or a block."""
        return self.tangent(v)

    def min_linear(self, a):
        """min over X of <a, x> for each row of ``a`` (..., d), in NumPy float64 (input
        validation decides linear feasibility with it); None where the set does not know it."""
        return None

    def support(self, v: jax.Array) -> jax.Array:
        """sigma_X(v) = max over X of <v, x>, for one vector v (d,) (the comparator's
        certificate, ``jaxbco.certificate``)."""
        raise NotImplementedError(f"{type(self).__name__} has no support function")

    def membership(self, x: jax.Array) -> jax.Array:
        """A convex function of x, <= 0 exactly on X within its affine hull (a ball's
        ||x - c|| - r): the certificate takes its cuts as X's normal cone (``jaxbco.certificate``)."""
        raise NotImplementedError(f"{type(self).__name__} has no membership function")

    def hull_projector(self, dtype) -> jax.Array:
        """(d, d): the orthogonal projector onto the directions of X's affine hull (I for a
        full-dimensional set)."""
        return jnp.eye(self.dim, dtype=dtype)

    #: whether the normal cone at a point of X may need more than the cuts at x +- h e_i
    #: (an L1 ball's vertices of the cube of signs): the certificate then steers more cuts
    steer: ClassVar[bool] = False


def project_shrunk(domain: AbstractSet, x: jax.Array, xi: jax.Array) -> jax.Array:
    """Projection onto (1-xi) X = c + (1-xi)(X - c).

    With phi(z) = c + s (z - c), s = 1 - xi, a similarity map, Pi_{phi(X)} = phi o Pi_X o phi^{-1}.
    """
    c, _ = domain.inscribed_ball()
    s = 1.0 - xi
    return (c + s * (domain.project(c + (x - c) / s) - c)).astype(x.dtype)


def gaussian_direction(key: jax.Array, dim: int, dtype) -> jax.Array:
    """Uniform point on the unit sphere S^{dim-1}: a normalised standard normal vector."""
    z = normal(key, (dim,), dtype)  # (dim, runs...) for a block of keys
    return z / jnp.sqrt(_ops.sum_axis(z * z, 0))
