"""The abstract loss family f(x, θ): the round's loss is fₜ(x) = f(x, θₜ)."""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco._src.declarations import own_structure


class AbstractLoss(eqx.Module):
    """A convex loss family: ``value(x, theta)`` is fₜ(x) = f(x, θₜ) for the round's data θₜ.

    A loss of your own subclasses this and implements ``value`` and ``curvature`` (or wraps a
    function in ``CustomLoss``); ``strong_convexity``, ``data_shape``, ``check_data`` and
    ``lipschitz`` are optional.  The algorithms see f only through its values (two-point
    feedback, Alg. 1 line 4), or through ``jax.grad`` for a full-information baseline.
    ``blocks`` (declared by each class itself, not inherited): ``value`` also takes seeds-minor
    blocks, x (d, runs) and θ with the runs last.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import losses
        >>> f = losses.Huber()   # a subclass
        >>> isinstance(f, losses.AbstractLoss), f.smooth, f.offline
        (True, True, 'first-order')
        >>> float(f.value(jnp.array([0.5, 3.0]), jnp.zeros(2))), float(f.curvature(jnp.zeros(2)))
        (2.625, 1.0)
    """

    blocks: ClassVar[bool] = False
    #: declared by each class itself: its block code also runs inside the fused GPU kernel
    #: (``jaxbco.fused``)
    kernel: ClassVar[bool] = False
    #: differentiable everywhere (False: kinks possible, e.g. ``Absolute``, or not known, a
    #: ``CustomLoss``): the comparator's certificate then also takes cuts beside x*
    #: (``jaxbco.certificate``)
    smooth: ClassVar[bool] = True
    #: what the offline comparator x* can use (``jaxbco.comparator``): "quadratic" (x* the
    #: projection of the mean θ; ``statistics``, ``total`` and ``mean_cut`` from running sums),
    #: "linear" (x* minimises ⟨mean θ, x⟩; the same three), "newton" (closed-form
    #: ``derivatives``: projected Newton), "smoothed" (FISTA on ``smoothed(width)``), or
    #: "first-order" (FISTA with backtracking on values and gradients, the default)
    offline: ClassVar[str] = "first-order"
    #: ``curvature`` is a bound the comparator's FISTA may trust (steps 1/L, no backtracking)
    exact_curvature: ClassVar[bool] = False
    #: f(x, θ) = ‖x − θ‖₁ (``Absolute``): the mean loss is piecewise linear with breakpoints
    #: θₜ,ᵢ, and the comparator finishes its x* by exact local linear programmes
    #: (``jaxbco.offline.absolute``)
    l1_breakpoints: ClassVar[bool] = False
    #: the sum over rounds is minus the log of a wealth (``LogWealth``): reports give wealth,
    #: and the horizon defaults to the replayed days
    wealth: ClassVar[bool] = False
    #: a user's function of unknown shape (``CustomLoss``, ``CustomConstraint``): before a run
    #: jaxbco probes it for finiteness at x₁ and convexity, and checks its ``curvature_bound``
    probe_convexity: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        """A class that defines ``value`` declares its structure itself (``smooth``,
        ``offline``, ``exact_curvature``, ``l1_breakpoints``, ``wealth``: the base's unless
        set in its own body)."""
        super().__init_subclass__(**kwargs)
        base = AbstractLoss.__dict__
        declared = ("smooth", "offline", "exact_curvature", "l1_breakpoints", "wealth")
        own_structure(cls, ("value",), {n: base[n] for n in declared})

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
        return (
            self.value(x, theta),
            jax.grad(self.value)(x, theta),
            jax.hessian(self.value)(x, theta),
        )

    def strong_convexity(self) -> jax.Array:
        """The strong-convexity modulus σ of Assumption 4 (0 when f is only convex), a scalar."""
        return jnp.asarray(0.0)

    def data_shape(self, dim: int):
        """The shapes of one round's data θₜ for X ⊂ ℝ^dim (``checks.shape`` leaves,
        tuples for tuple data), checked before a run so that nothing broadcasts; None when
        the family does not say (a ``CustomLoss``)."""
        return None

    def check_data(self, theta, name: str) -> None:
        """Raise ValueError for data values outside the family's domain (NumPy arrays of the
        recorded rounds, leading axes the rounds); nothing by default."""

    def lipschitz(self, theta, radius: jax.Array) -> jax.Array:
        """An upper bound on Fₜ = Lip(f(·, θ)) over a ball of the given radius about 0, a scalar."""
        raise NotImplementedError(f"{type(self).__name__} has no Lipschitz bound")

    def smoothed(self, width) -> AbstractLoss:
        """A smooth loss within ``width`` of f (curvature 1/width), for an ``offline``
        "smoothed" family (``Absolute``: Huber's with κ = width)."""
        raise NotImplementedError(f"{type(self).__name__} has no smoothed twin")

    def statistics(self, theta):
        """One round's sufficient statistics, for an ``offline`` "quadratic" or "linear" family:
        their sums over rounds give ∑ₛ f(x, θₛ) at any x (``total``); vector axis leading."""
        raise NotImplementedError(f"{type(self).__name__} has no sufficient statistics")

    def total(self, x, sums, t):
        """∑ₛ₌₁ᵗ f(x, θₛ) from the sums of ``statistics`` over rounds 1..t."""
        raise NotImplementedError(f"{type(self).__name__} has no sufficient statistics")

    def mean_cut(self, x, m, m2):
        """(F(x), ∇F(x)) of the mean loss F from the means (m, m2) of ``statistics``."""
        raise NotImplementedError(f"{type(self).__name__} has no sufficient statistics")
