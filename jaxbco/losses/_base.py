"""Abstract loss family f(x, theta): the round's loss is f_t(x) = f(x, theta_t)."""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp


class AbstractLoss(eqx.Module):
    """A convex loss family.  ``value(x, theta)`` is f_t(x) for the round's data theta_t.

    ``blocks`` (declared by each class itself, not inherited): ``value`` also takes seeds-minor
    blocks, x (d, runs) and theta with the runs last (``jaxbco._blocks``)."""

    blocks: ClassVar[bool] = False
    #: declared by each class itself: its block code also runs inside the fused GPU kernel
    #: (``jaxbco._blocks``, ``jaxbco.fused``)
    kernel: ClassVar[bool] = False
    #: differentiable everywhere (False: kinks possible, e.g. ``Absolute``, or not known, a
    #: ``CustomLoss``): the comparator's certificate then also takes cuts beside x*
    #: (``jaxbco.certificate``)
    smooth: ClassVar[bool] = True

    @abc.abstractmethod
    def value(self, x: jax.Array, theta) -> jax.Array:
        """f(x, theta), a scalar."""

    @abc.abstractmethod
    def curvature(self, theta) -> jax.Array:
        """An upper bound on ||Hessian of f(., theta)||_2 (inf when f is not smooth)."""

    def derivatives(self, x: jax.Array, theta):
        """(f, grad f, Hessian of f) at x for one run (the offline comparator's Newton passes):
        by autodiff unless the family has them in closed form."""
        return (self.value(x, theta), jax.grad(self.value)(x, theta),
                jax.hessian(self.value)(x, theta))

    def strong_convexity(self) -> jax.Array:
        """The modulus sigma of Assumption 4 (0 when f is only convex)."""
        return jnp.asarray(0.0)

    def data_shape(self, dim: int):
        """The shapes of one round's data theta_t for X in R^dim (``_checks.shape`` leaves,
        tuples for tuple data), checked before a run so that nothing broadcasts; None when
        the family does not say (a ``CustomLoss``)."""
        return None

    def check_data(self, theta, name: str) -> None:
        """Raise ValueError for data values outside the family's domain (NumPy arrays of the
        recorded rounds, leading axes the rounds); nothing by default."""

    def lipschitz(self, theta, radius: jax.Array) -> jax.Array:
        """An upper bound on F_t = Lip(f(., theta)) over a ball of the given radius about 0."""
        raise NotImplementedError(f"{type(self).__name__} has no Lipschitz bound")
