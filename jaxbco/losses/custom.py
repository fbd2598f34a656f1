"""A user-supplied convex loss f(x, θ) written in JAX."""

from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp

from jaxbco._src import checks
from jaxbco.losses._base import AbstractLoss


class CustomLoss(AbstractLoss):
    """A loss of your own: a JAX function ``fn(x, theta)`` returning a scalar, convex in x.

    Convexity in x is the user's promise (the validation before a run checks it on samples).

    Args:
        fn: the function f(x, θ): x (d,), θ one round's data of the loss sequence; it returns
            a scalar of x's dtype and must be traceable by JAX (static field).
        curvature_bound: a first guess at ‖∇²f‖₂ (what ``curvature`` returns), used only by
            the offline comparator, whose FISTA raises it by backtracking wherever a step
            shows it too small (``comparator.offline_optimum``); None: no guess (it starts
            from 1).
        sigma: the strong-convexity modulus (``strong_convexity``; 0: only convex).

    Raises:
        TypeError: for an ``fn`` that is not callable.
        ValueError: for a ``curvature_bound`` that is not positive or a negative ``sigma``.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import losses
        >>> quartic = losses.CustomLoss(lambda x, theta: jnp.sum((x - theta) ** 4))
        >>> float(quartic.value(jnp.ones(2), jnp.zeros(2)))
        2.0
        >>> jax.grad(quartic.value)(jnp.ones(2), jnp.zeros(2))
        Array([4., 4.], dtype=float32)
    """

    fn: Callable = eqx.field(static=True)
    curvature_bound: float | None = eqx.field(static=True, default=None)
    sigma: float = eqx.field(static=True, default=0.0)
    smooth = False  # not known: the certificate looks beside x* for kinks
    probe_convexity = True

    def __check_init__(self):
        checks.check_kind("CustomLoss fn", self.fn, Callable, "a function fn(x, theta)")
        if self.curvature_bound is not None:
            checks.check_scalar("CustomLoss curvature_bound", self.curvature_bound)
            checks.check_range(
                "CustomLoss curvature_bound", self.curvature_bound, low=0.0, low_open=True
            )
        checks.check_scalar("CustomLoss sigma", self.sigma)
        checks.check_range("CustomLoss sigma", self.sigma, low=0.0)

    def value(self, x, theta):
        return self.fn(x, theta)

    def curvature(self, theta):
        bound = jnp.inf if self.curvature_bound is None else self.curvature_bound
        return jnp.asarray(bound)

    def strong_convexity(self):
        return jnp.asarray(self.sigma)
