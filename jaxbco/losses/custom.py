"""A user-supplied convex loss f(x, theta) written in JAX."""

from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp

from jaxbco import _checks
from jaxbco.losses._base import AbstractLoss


class CustomLoss(AbstractLoss):
    """Wrap a JAX function ``fn(x, theta) -> scalar`` (convexity in x is the user's promise).

    ``curvature_bound``: a first guess at the Hessian norm (what ``curvature`` returns), used
    only by the offline comparator, whose FISTA raises it by backtracking wherever a step shows
    it too small (``comparator.offline_optimum``); ``None``: no guess (it starts from 1).
    ``sigma``: the strong-convexity modulus (``strong_convexity``; 0 = only convex).
    """

    fn: Callable = eqx.field(static=True)
    curvature_bound: float | None = eqx.field(static=True, default=None)
    sigma: float = eqx.field(static=True, default=0.0)
    smooth = False  # not known: the certificate looks beside x* for kinks

    def __check_init__(self):
        _checks.check_kind("CustomLoss fn", self.fn, Callable, "a function fn(x, theta)")
        if self.curvature_bound is not None:
            _checks.check_scalar("CustomLoss curvature_bound", self.curvature_bound)
            _checks.check_range("CustomLoss curvature_bound", self.curvature_bound, low=0.0,
                                low_open=True)
        _checks.check_scalar("CustomLoss sigma", self.sigma)
        _checks.check_range("CustomLoss sigma", self.sigma, low=0.0)

    def value(self, x, theta):
        return self.fn(x, theta)

    def curvature(self, theta):
        bound = jnp.inf if self.curvature_bound is None else self.curvature_bound
        return jnp.asarray(bound)

    def strong_convexity(self):
        return jnp.asarray(self.sigma)
