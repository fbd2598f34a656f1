"""The abstract loss family f(x, θ): the round's loss is fₜ(x) = f(x, θₜ)."""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp


class AbstractLoss(eqx.Module):
    """A convex loss family: ``value(x, theta)`` is fₜ(x) = f(x, θₜ) for the round's data θₜ.

    A loss of your own subclasses this and implements ``value`` and ``curvature`` (or wraps a
    function in ``CustomLoss``); ``strong_convexity``, ``data_shape``, ``check_data`` and
    ``lipschitz`` are optional.  The algorithms see f only through its values (two-point
    feedback, Alg. 1 line 4), or through ``jax.grad`` for a full-information baseline.
    ``blocks`` (declared by each class itself, not inherited): ``value`` also takes seeds-minor
    blocks, x (d, runs) and θ with the runs last (``jaxbco._blocks``)."""

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
        """The loss f(x, θ).

        Args:
            x: (d,) the point.
            theta: one round's data θₜ (a pytree of arrays; its shapes are the family's).

        Returns:
            A scalar array of x's floating dtype.
        """

    @abc.abstractmethod
    def curvature(self, theta) -> jax.Array:
        """An upper bound on ‖∇²f(·, θ)‖₂, the Hessian's spectral norm (inf when f is not
        smooth).

        Args:
            theta: one round's data θₜ.

        Returns:
            A scalar array.
        """

    def derivatives(self, x: jax.Array, theta):
        """(f, ∇f, ∇²f) at x for one run (the offline comparator's Newton passes):
        by autodiff unless the family has them in closed form."""
        return (self.value(x, theta), jax.grad(self.value)(x, theta),
                jax.hessian(self.value)(x, theta))

    def strong_convexity(self) -> jax.Array:
        """The strong-convexity modulus σ of Assumption 4 (0 when f is only convex), a scalar."""
        return jnp.asarray(0.0)

    def data_shape(self, dim: int):
        """The shapes of one round's data θₜ for X ⊂ ℝ^dim (``_checks.shape`` leaves,
        tuples for tuple data), checked before a run so that nothing broadcasts; None when
        the family does not say (a ``CustomLoss``)."""
        return None

    def check_data(self, theta, name: str) -> None:
        """Raise ValueError for data values outside the family's domain (NumPy arrays of the
        recorded rounds, leading axes the rounds); nothing by default."""

    def lipschitz(self, theta, radius: jax.Array) -> jax.Array:
        """An upper bound on Fₜ = Lip(f(·, θ)) over a ball of the given radius about 0, a scalar."""
        raise NotImplementedError(f"{type(self).__name__} has no Lipschitz bound")
