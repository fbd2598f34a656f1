"""A user's constraint function, and the time-varying shift gₜ(x) = g(x, φ) − sₜ."""

import dataclasses
from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp

from jaxbco._src import checks
from jaxbco._src.blocks import per_run
from jaxbco.constraints._base import AbstractConstraint


class CustomConstraint(AbstractConstraint):
    """A constraint of your own: a JAX function ``fn(x, phi)`` returning a scalar, convex in x.

    On a box, simplex, ball or L1 ball the accurate prox solver (``solvers.SmoothIPM``) uses
    fn's own Hessian (``jax.hessian``) and no bound; on a set of your own, ``SmoothDual``.

    Args:
        fn: the function g(x, φ): x (d,), φ one round's data of the constraint sequence; it
            returns a scalar of x's dtype, feasible where ≤ 0 (static field).
        curvature_bound: a first guess at ‖∇²g‖₂ for the steps of ``SmoothDual``; a guess
            below the truth costs a few rejected steps (each lane doubles it where a step
            fails its quadratic model), never an inexact prox; one far above it, slow steps.
        interior: an optional function φ ↦ x with fn(x, φ) below 0 (it caps the interior
            point's penalty: fewer steps).
        smooth: whether fn is differentiable in x (default True).  A fn with kinks (an L1
            budget ∑|x − c| − r, max(x) − b, a norm ‖x − c‖ − r at c) needs ``smooth=False``:
            its prox and projections then run the cutting-plane loop
            (``solvers.CuttingPlane``) instead of the interior point, which assumes a Hessian.

    Raises:
        TypeError: for an ``fn`` or ``interior`` that is not callable.
        ValueError: for a ``curvature_bound`` that is not positive or a non-bool ``smooth``.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints
        >>> budget = constraints.CustomConstraint(lambda x, r: jnp.sum(jnp.abs(x)) - r,
        ...                                       smooth=False)   # ‖x‖₁ ≤ r
        >>> budget.kind
        'nonsmooth'
        >>> float(budget.value(jnp.array([1.0, -2.0]), jnp.asarray(1.0)))
        2.0
    """

    fn: Callable = eqx.field(static=True)
    curvature_bound: float = eqx.field(static=True, default=1.0)
    interior: Callable | None = eqx.field(static=True, default=None)
    smooth: bool = eqx.field(static=True, default=True)
    kind = "smooth"
    probe_convexity = True
    blocks = True  # fn, written for one run, under vmap over a block's runs (``per_run``)

    def __check_init__(self):
        checks.check_kind("CustomConstraint fn", self.fn, Callable, "a function fn(x, phi)")
        checks.check_scalar("CustomConstraint curvature_bound", self.curvature_bound)
        checks.check_range(
            "CustomConstraint curvature_bound", self.curvature_bound, low=0.0, low_open=True
        )
        checks.check_bool("CustomConstraint smooth", self.smooth)
        if self.interior is not None:
            checks.check_kind(
                "CustomConstraint interior",
                self.interior,
                Callable,
                "None or a function phi -> x with fn(x, phi) < 0",
            )

    def __post_init__(self):
        if self.smooth is False:
            object.__setattr__(self, "kind", "nonsmooth")

    @property
    def probe_kinks(self) -> bool:
        """Always: a user's function may have kinks it does not declare."""
        return True

    def value(self, x, phi):
        return self.fn(x, phi) if x.ndim == 1 else per_run(self.fn, x, phi)

    def flipped(self):
        """The same fn declared the other way (``smooth`` negated)."""
        return dataclasses.replace(self, smooth=not self.smooth)

    def curvature(self, phi):
        return jnp.asarray(self.curvature_bound)

    def interior_point(self, phi):
        return None if self.interior is None else self.interior(phi)

    def scale_at(self, x, phi):
        value, grad = self.value_and_gradient(x, phi)
        c = jnp.abs(value) + jnp.max(jnp.abs(grad), axis=0) * (1.0 + jnp.max(jnp.abs(x), axis=0))
        return jnp.where(jnp.isfinite(c) & (c > 0), c, jnp.ones_like(c))


class Shifted(AbstractConstraint):
    """A time-varying shift of a constraint: gₜ(x) = g(x, φ) − sₜ with data (φ, sₜ), sₜ ≥ 0.

    Pair it with ``sequences.Slackened``, which draws the slack sₜ; it keeps its base's
    structure (``kind``, rows, quadratic form), so the prox solver is the base's.

    Args:
        base: the constraint family g being shifted.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints
        >>> g = constraints.Shifted(constraints.Linear())
        >>> phi = ((jnp.array([1.0, 1.0]), jnp.asarray(2.0)), jnp.asarray(0.5))
        >>> float(g.value(jnp.array([1.0, 2.0]), phi))   # (1 + 2 − 2) − 0.5
        0.5
    """

    base: AbstractConstraint
    blocks = True  # when its base runs on blocks (``jaxbco._src.blocks.undeclared`` looks inside)
    kernel = True  # likewise
    shift = True

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
        """The base's (P, q, s₀) with s = s₀ + sₜ (a quadratic base only)."""
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
        return None if inner is None else (inner, checks.shape())

    def check_data(self, phi, name):
        self.base.check_data(phi[0], f"{name}[0]")

    def interior_point(self, phi):
        return self.base.interior_point(phi[0])

    def lipschitz(self, phi, radius):
        return self.base.lipschitz(phi[0], radius)
