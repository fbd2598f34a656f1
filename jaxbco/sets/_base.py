"""Abstract feasible set X: projection, an inscribed ball, shrinkage, perturbation directions."""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco._src import ops
from jaxbco._src.declarations import own_structure
from jaxbco._src.normal import normal


class AbstractSet(eqx.Module):
    """A compact convex feasible set X ⊂ ℝᵈ with a Euclidean projection and an inscribed ball.

    The inscribed ball B(c, r) (relative to the affine hull of X) defines the shrunk set
    (1 − ξ)X := c + (1 − ξ)(X − c); for x ∈ (1 − ξ)X and a unit direction u in the hull,
    x + δu lies in X whenever δ ≤ ξr (Flaxman et al. 2004, Observation 2), so the queries of
    Alg. 1 line 4 stay in X.

    A set of your own subclasses this and implements ``dim``, ``hull_dim``, ``project``,
    ``inscribed_ball``, ``diameter``, ``sample_direction`` and ``tangent``.  ``blocks``
    (declared by each class itself, not inherited): its methods also take seeds-minor blocks
    (vectors (d, runs), per-run scalars (runs,)).

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import sets
        >>> X = sets.Simplex(3)   # a subclass: {x ≥ 0, ∑x = 1}
        >>> isinstance(X, sets.AbstractSet), X.dim, X.hull_dim
        (True, 3, 2)
        >>> X.project(jnp.array([1.0, 0.0, 0.0])), float(X.diameter())
        (Array([1., 0., 0.], dtype=float32), 1.4142135381698608)
    """

    blocks: ClassVar[bool] = False
    #: declared by each class itself: its block code also runs inside the fused GPU kernel
    #: (``jaxbco.fused``)
    kernel: ClassVar[bool] = False
    #: the set's standard form, for the solvers and the kernel that have code for it: "box"
    #: (``lower``, ``upper``), "simplex" (``total``), "l2-ball" and "l1-ball" (``center``,
    #: ``radius``); None (the default): none of these, only the methods below are used
    form: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs):
        """A class that defines ``project`` declares its structure itself (``form``,
        ``steer``, ``smooth_membership``: the base's unless set in its own body)."""
        super().__init_subclass__(**kwargs)
        base = AbstractSet.__dict__
        declared = ("form", "steer", "smooth_membership")
        own_structure(cls, ("project",), {n: base[n] for n in declared})

    @property
    @abc.abstractmethod
    def dim(self) -> int:
        """The ambient dimension d (a Python int)."""

    @property
    @abc.abstractmethod
    def hull_dim(self) -> int:
        """The dimension of X's affine hull: the d in the estimator's d/(2δ), Eq. (4)."""

    @abc.abstractmethod
    def project(self, x: jax.Array) -> jax.Array:
        """The Euclidean projection Π_X(x) = argmin over z ∈ X of ‖z − x‖₂.

        Args:
            x: (d,) the point to project.

        Returns:
            (d,) the nearest point of X, of x's dtype.
        """

    @abc.abstractmethod
    def inscribed_ball(self) -> tuple[jax.Array, jax.Array]:
        """A ball inside X (within its affine hull).

        Returns:
            (c, r): the centre, (d,), and the radius, a scalar array.
        """

    @abc.abstractmethod
    def diameter(self) -> jax.Array:
        """The diameter D = max over x, y ∈ X of ‖x − y‖₂ (Assumption 1), a scalar array."""

    @abc.abstractmethod
    def sample_direction(self, key: jax.Array, dtype) -> jax.Array:
        """A direction u uniform on the unit sphere of the hull's direction space (Alg. 1 line 3).

        Args:
            key: a JAX PRNG key.
            dtype: the floating dtype of u.

        Returns:
            (d,) a unit vector.
        """

    @abc.abstractmethod
    def tangent(self, v: jax.Array) -> jax.Array:
        """The orthogonal projection of a vector v, (d,), onto the hull's direction space (v
        itself for a full-dimensional set); returns (d,)."""

    def face(self, x: jax.Array, v: jax.Array, tol) -> jax.Array:
        """The orthogonal projection of v onto the direction space of X's face containing x (x
        within ``tol`` of a bound counts as on it): v where x is interior.  The prox
        certificate (``solvers.gap``) reads the multiplier off it; one run or a block."""
        return self.tangent(v)

    def min_linear(self, a):
        """min over x ∈ X of ⟨a, x⟩ for each row of ``a`` (..., d), in NumPy float64 (input
        validation decides linear feasibility with it); None where the set does not know it."""
        return None

    def support(self, v: jax.Array) -> jax.Array:
        """The support function σ_X(v) = max over x ∈ X of ⟨v, x⟩, for one vector v (d,) (the
        comparator's certificate, ``jaxbco.certificate``)."""
        raise NotImplementedError(f"{type(self).__name__} has no support function")

    def membership(self, x: jax.Array) -> jax.Array:
        """A convex function of x, at most 0 exactly on X within its affine hull (a ball's
        ‖x − c‖ − r): the certificate takes its cuts as X's normal cone (``jaxbco.certificate``)."""
        raise NotImplementedError(f"{type(self).__name__} has no membership function")

    def membership_pieces(self, x: jax.Array) -> jax.Array | None:
        """The affine pieces whose maximum is ``membership`` (a box's 2 d faces), each at x,
        or None: their exact normals are X's normal cone at x, so the certificate takes them
        as cuts instead of probing a kinked ``membership`` at x ± heᵢ."""
        return None

    def barrier_slacks(self, x: jax.Array) -> jax.Array | None:
        """Smooth concave functions of x, all positive exactly on X's relative interior (a box's
        x − lo and hi − x), or None: −∑ log of them is a barrier of X, for the comparator's
        log-barrier method over many linear rows (``jaxbco.offline.barrier``)."""
        return None

    def lift(self, x: jax.Array) -> jax.Array | None:
        """For a set without ``barrier_slacks``: extra coordinates t (k,) with ``lifted_slacks``
        positive at (x, t) for x in X's interior (an L1 ball's tᵢ = |xᵢ − cᵢ| + a share of
        its slack), or None."""
        return None

    def lifted_slacks(self, z: jax.Array) -> jax.Array:
        """Smooth concave functions of z = (x, t) whose positive set has X's interior as its
        shadow on x (an L1 ball's tᵢ ∓ (xᵢ − cᵢ) and r − ∑ t): a barrier of X in a lifted
        space, for the log-barrier method (``jaxbco.offline.barrier.Lifted``)."""
        raise NotImplementedError(f"{type(self).__name__} has no lifted barrier")

    def hull_projector(self, dtype) -> jax.Array:
        """(d, d): the orthogonal projector onto the directions of X's affine hull (I for a
        full-dimensional set)."""
        return jnp.eye(self.dim, dtype=dtype)

    #: whether the normal cone at a point of X may need more than the cuts at x ± heᵢ
    #: (an L1 ball's vertices of the cube of signs): the certificate then steers more cuts
    steer: ClassVar[bool] = False
    #: whether ``membership`` is differentiable wherever it is 0 (a ball's norm): its gradient
    #: at x alone spans X's normal cone there, and the certificate takes no probe cuts beside it
    smooth_membership: ClassVar[bool] = False


def project_shrunk(domain: AbstractSet, x: jax.Array, xi: jax.Array) -> jax.Array:
    """The projection onto the shrunk set (1 − ξ)X = c + (1 − ξ)(X − c) (Eq. (5)'s set).

    With φ(z) = c + s(z − c), s = 1 − ξ, a similarity map, Π_φ(X) = φ ∘ Π_X ∘ φ⁻¹.

    Args:
        domain: the set X.
        x: (d,) the point to project.
        xi: the shrinkage ξ ∈ [0, 1), a scalar.

    Returns:
        (d,) the nearest point of (1 − ξ)X, of x's dtype.
    """
    c, _ = domain.inscribed_ball()
    s = 1.0 - xi
    return (c + s * (domain.project(c + (x - c) / s) - c)).astype(x.dtype)


def gaussian_direction(key: jax.Array, dim: int, dtype) -> jax.Array:
    """A uniform point on the unit sphere of ℝ^dim: a normalised standard normal vector."""
    z = normal(key, (dim,), dtype)  # (dim, runs...) for a block of keys
    return z / jnp.sqrt(ops.sum_axis(z * z, 0))
