"""User constraints, and the time-varying shift g_t(x) = g(x, phi) - s_t."""

from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp

from jaxbco import _checks
from jaxbco.constraints._base import AbstractConstraint


class CustomConstraint(AbstractConstraint):
    """Wrap a JAX function ``fn(x, phi) -> scalar``, convex in x.

    ``smooth``: whether fn is differentiable in x.  A fn with kinks (an L1 budget
    sum |x - c| - r, max(x) - b, a norm ||x - c|| - r at c) needs ``smooth=False``: its prox
    and projections then run the cutting-plane loop (``solvers.CuttingPlane``) instead of the
    interior point, which assumes a Hessian.

    On a box, simplex, ball or L1 ball the accurate solver (``SmoothIPM``) uses fn's own
    Hessian (``jax.hessian``) and no bound.  ``curvature_bound``: a first guess at its Hessian
    norm for the steps of ``SmoothDual`` (a set of your own); a guess below the truth costs a
    few rejected steps (each lane doubles it where a step fails its quadratic model), never an
    inexact prox; one far above it, slow steps.  ``interior``: an optional function
    phi -> x with fn(x, phi) < 0 (it caps the interior point's penalty: fewer steps).
    """

    fn: Callable = eqx.field(static=True)
    curvature_bound: float = eqx.field(static=True, default=1.0)
    interior: Callable | None = eqx.field(static=True, default=None)
    smooth: bool = eqx.field(static=True, default=True)
    kind = "smooth"

    def __check_init__(self):
        _checks.check_kind("CustomConstraint fn", self.fn, Callable, "a function fn(x, phi)")
        _checks.check_scalar("CustomConstraint curvature_bound", self.curvature_bound)
        _checks.check_range("CustomConstraint curvature_bound", self.curvature_bound, low=0.0,
                            low_open=True)
        _checks.check_bool("CustomConstraint smooth", self.smooth)
        if self.interior is not None:
            _checks.check_kind("CustomConstraint interior", self.interior, Callable,
                               "None or a function phi -> x with fn(x, phi) < 0")

    def __post_init__(self):
        if self.smooth is False:
            object.__setattr__(self, "kind", "nonsmooth")

    @property
    def probe_kinks(self) -> bool:
        """Always: a user's function may have kinks it does not declare."""
        return True

    def value(self, x, phi):
        return self.fn(x, phi)

    def curvature(self, phi):
        return jnp.asarray(self.curvature_bound)

    def interior_point(self, phi):
        return None if self.interior is None else self.interior(phi)

    def scale_at(self, x, phi):
        value, grad = self.value_and_gradient(x, phi)
        c = jnp.abs(value) + jnp.max(jnp.abs(grad), axis=0) * (1.0 + jnp.max(jnp.abs(x), axis=0))
        return jnp.where(jnp.isfinite(c) & (c > 0), c, jnp.ones_like(c))


class Shifted(AbstractConstraint):
    """g_t(x) = g(x, phi) - s_t with data (phi, s_t), s_t >= 0 (see ``sequences.Slackened``)."""

    base: AbstractConstraint
    blocks = True  # when its base runs on blocks (``jaxbco._blocks.undeclared`` looks inside)
    kernel = True  # likewise

    def __post_init__(self):
        object.__setattr__(self, "kind", self.base.kind)

    @property
    def probe_kinks(self):
        return self.base.probe_kinks

    def value(self, x, phi):
        inner, s = phi
        return self.base.value(x, inner) - s

    def rows(self, phi):
        inner, s = phi
        A, b = self.base.rows(inner)
        return A, b + jnp.expand_dims(s, 0)  # s per row (seeds-minor s: (1, S))

    def curvature(self, phi):
        return self.base.curvature(phi[0])

    def quadratic(self, phi):
        """The base's (P, q, s0) with s = s0 + s_t (a quadratic base only)."""
        P, q, s0 = self.base.quadratic(phi[0])
        return P, q, s0 + phi[1]

    def scale(self, phi):
        """The base's scale."""
        return self.base.scale(phi[0])

    def scale_at(self, x, phi):
        return self.base.scale_at(x, phi[0])

    def normalised(self, phi):
        inner, s = phi
        return self.base.normalised(inner), s / self.base.scale(inner)

    def data_shape(self, dim):
        inner = self.base.data_shape(dim)
        return None if inner is None else (inner, _checks.shape())

    def check_data(self, phi, name):
        self.base.check_data(phi[0], f"{name}[0]")

    def interior_point(self, phi):
        return self.base.interior_point(phi[0])

    def lipschitz(self, phi, radius):
        return self.base.lipschitz(phi[0], radius)
