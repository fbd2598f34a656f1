"""A user-supplied convex loss f(x, theta) written in JAX."""

from typing import Callable

import equinox as eqx
import jax.numpy as jnp

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

    def value(self, x, theta):
        return self.fn(x, theta)

    def curvature(self, theta):
        bound = jnp.inf if self.curvature_bound is None else self.curvature_bound
        return jnp.asarray(bound)

    def strong_convexity(self):
        return jnp.asarray(self.sigma)
