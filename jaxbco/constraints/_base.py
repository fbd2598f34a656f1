"""The abstract constraint family g(x, φ): the round's constraint is gₜ(x) = g(x, φₜ) ≤ 0."""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax

from jaxbco._src import ops
from jaxbco._src.declarations import own_structure


class AbstractConstraint(eqx.Module):
    """A convex constraint family: ``value(x, phi)`` is gₜ(x) = g(x, φₜ), feasible where ≤ 0.

    A constraint of your own subclasses this and implements ``value`` (or wraps a function in
    ``CustomConstraint``); the other methods are optional.  Several constraints are one:
    g = maxₖ gₖ (the paper's Sec. 2.2).  ``kind`` names the structure a family offers: ``"linear"`` (one halfspace, ``rows`` gives
    it), ``"polyhedral"`` (g = max_i of linear rows), ``"smooth"`` (differentiable,
    ``curvature`` bounds its Hessian), ``"nonsmooth"`` (convex with kinks: cutting planes,
    ``solvers.CuttingPlane``).  The offline comparator and Yu-Neely read it; the prox
    solver ``Dual`` picks its method from it and ``quadratic_form`` (``Dual.method``),
    unless the class declares its own ``prox_method`` (an ``AbstractProxSolver`` class, e.g. a
    researcher's closed form, or one of ``jaxbco.solvers``' methods chosen by hand).

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import constraints
        >>> g = constraints.Linear()   # a subclass: ⟨a, x⟩ − b
        >>> isinstance(g, constraints.AbstractConstraint), g.kind
        (True, 'linear')
        >>> phi = (jnp.array([1.0, 0.0]), jnp.asarray(0.5))
        >>> value, grad = g.value_and_gradient(jnp.array([1.0, 1.0]), phi)
        >>> float(value), grad
        (0.5, Array([1., 0.], dtype=float32))
    """

    kind: str = eqx.field(static=True, init=False, default="smooth")
    #: declared by each class itself, not inherited: ``value`` and ``rows`` also take
    #: seeds-minor blocks (vectors (d, runs), per-run scalars (runs,))
    blocks: ClassVar[bool] = False
    #: declared by each class itself: its block code also runs inside the fused GPU kernel
    #: (``jaxbco.fused``)
    kernel: ClassVar[bool] = False
    #: the prox method (an ``AbstractProxSolver`` class) ``solvers.Dual`` uses for this family
    #: on every set; None: ``solvers.Dual.method`` chooses from the declarations
    prox_method: ClassVar[type | None] = None
    #: g is a quadratic (x − q)ᵀP(x − q) − s whose ``quadratic(phi)`` gives (P, q, s):
    #: "ellipsoid", or "ball" where P = I (closed forms on a ball); None: neither
    quadratic_form: ClassVar[str | None] = None
    #: g is a shift gₜ(x) = base(x, φ) − sₜ of the constraint ``base`` with data (φ, sₜ)
    #: (``Shifted``): it has its base's structure, and with ``slack`` data
    #: (``sequences.Slackened``) the rounds' sets meet in {base(·, φ) ≤ minₜ sₜ}
    shift: ClassVar[bool] = False
    #: a user's function of unknown shape (``CustomLoss``, ``CustomConstraint``): before a run
    #: jaxbco probes it for finiteness at x₁ and convexity, and checks its ``curvature_bound``
    probe_convexity: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        """A class that defines ``value`` or ``rows`` declares its structure itself (``kind``,
        ``prox_method``, ``quadratic_form``, ``shift``: the base's unless set in its own body)."""
        super().__init_subclass__(**kwargs)
        base = {"kind": "smooth", "prox_method": None, "quadratic_form": None, "shift": False}
        own_structure(cls, ("value", "rows"), base)

    @property
    def probe_kinks(self) -> bool:
        """Whether g may have kinks (the ``"nonsmooth"`` kind, or a user's function): the
        comparator's certificate then also takes cuts beside x* (``jaxbco.certificate``)."""
        return self.kind == "nonsmooth"

    @abc.abstractmethod
    def value(self, x: jax.Array, phi) -> jax.Array:
        """The constraint function g(x, φ).

        Args:
            x: (d,) the point.
            phi: one round's data φₜ (a pytree of arrays; its shapes are the family's).

        Returns:
            A scalar array of x's floating dtype; x is feasible where it is ≤ 0.
        """

    def value_and_gradient(self, x: jax.Array, phi):
        """(g(x, φ), ∇ₓg(x, φ)), a scalar and (d,): by a VJP unless a family writes it out."""
        return ops.value_and_grad(lambda z: self.value(z, phi), x)

    def rows(self, phi) -> tuple[jax.Array, jax.Array]:
        """(A, b), (m, d) and (m,), with g(x) = maxᵢ (Ax − b)ᵢ, for the linear kinds."""
        raise NotImplementedError(f"{type(self).__name__} is not polyhedral")

    def curvature(self, phi) -> jax.Array:
        """An upper bound on ‖∇²g(·, φ)‖₂, for the ``smooth`` kind (a scalar)."""
        raise NotImplementedError(f"{type(self).__name__} has no curvature bound")

    def data_shape(self, dim: int):
        """The shapes of one round's data φₜ for X ⊂ ℝ^dim (``checks.shape`` leaves, tuples
        for tuple data), checked before a run so that nothing broadcasts; None when the
        family does not say (a ``CustomConstraint``)."""
        return None

    def check_data(self, phi, name: str) -> None:
        """Raise ValueError for data outside the family's domain (NumPy arrays of the recorded
        rounds, leading axes the rounds); nothing by default."""

    def scale(self, phi):
        """A positive size c of the data, homogeneous of degree 1 (g's data times k has scale
        k c), laid out like g's value; 1 for a family that does not say."""
        return 1.0

    def normalised(self, phi):
        """The data of g / ``scale(phi)``: the same set {g ≤ 0}, the same shapes, a unit-sized g.
        Exact penalties (the comparator's projections, ``project_feasible``) and the feasibility
        checks use it, so a constraint given as 1e-20 or 1e20 times a well-scaled one is
        projected on alike.  ``phi`` itself for a family without a ``scale``."""
        return phi

    def scale_at(self, x, phi):
        """g's size near x, for a family whose data carry no scale of their own (a user's
        function): |g(x)| + ‖∇g(x)‖_∞ (1 + ‖x‖_∞) there; 1 for the others, whose
        ``normalised`` data are unit-sized already.  An exact penalty β[g]₊ takes
        β / ``scale_at`` (``comparator``, ``project_feasible``)."""
        return 1.0

    def flipped(self):
        """The same g declared the other way, smooth for kinked or kinked for smooth, where
        that is only a declaration (a user's function: the comparator then tries both prox
        paths and keeps the better certified x*); None (the default) for a family that knows
        its structure."""
        return None

    def interior_point(self, phi):
        """A point x, (d,), with g(x, φ) below 0 if the family knows one, else ``None``."""
        return None

    def lipschitz(self, phi, radius) -> jax.Array:
        """An upper bound on Gₜ = Lip(g(·, φ)) over a ball of the given radius about 0."""
        raise NotImplementedError(f"{type(self).__name__} has no Lipschitz bound")


def unshifted(constraint: AbstractConstraint) -> AbstractConstraint:
    """The constraint under any ``shift`` (``Shifted``) wrappers: it has their structure.

    Args:
        constraint: a constraint family.

    Returns:
        ``constraint`` itself, or the base it shifts (at any depth).

    Example:
        >>> from jaxbco import constraints
        >>> type(constraints.unshifted(constraints.Shifted(constraints.Linear()))).__name__
        'Linear'
    """
    while constraint.shift:
        constraint = constraint.base
    return constraint


def structured(constraint: AbstractConstraint) -> bool:
    """Whether g declares a structure beyond smooth or kinked (linear or polyhedral rows, a
    quadratic form), at any depth of shifts: its prox methods are exact from far outside X.

    Args:
        constraint: a constraint family.

    Returns:
        False for a user's function (``CustomConstraint``) and any family that only declares
        ``kind`` "smooth" or "nonsmooth".
    """
    base = unshifted(constraint)
    return base.kind in ("linear", "polyhedral") or base.quadratic_form is not None
