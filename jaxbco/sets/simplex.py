"""The scaled probability simplex X = {x ≥ 0 : ∑ᵢ xᵢ = total} (no interior: perturb in its hull)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax.projections as proj

from jaxbco._src import checks, ops
from jaxbco._src.normal import normal
from jaxbco.sets._base import AbstractSet

#: Up to this dimension the projection is the sort-free O(d²) form below, faster than
#: optax's sort on XLA's CPU backend.
PAIRWISE_MAX_DIM = 64


def _project_pairwise(z, total):
    """Π onto {x ≥ 0, ∑ x = total}: max(z − τ, 0) with τ = max_k (S_k − total)/k, S_k
    the sum of the k largest entries (the prefix means of the sorted projection rule are
    unimodal in k, peaking at the support size).  The prefix of z_i is {j : z_j ≥ z_i}, so
    no sort is needed: d^2 comparisons and masked sums, elementwise (batch-independent)."""
    ge = z[None, :] >= z[:, None]  # ge[i, j, ...]: z_j >= z_i
    count = jnp.sum(ge, axis=1).astype(z.dtype)
    prefix = jnp.sum(jnp.where(ge, z[None, :], 0.0), axis=1)
    tau = jnp.max((prefix - total) / count, axis=0)  # one per run on a block (d, runs...)
    return jnp.maximum(z - tau, 0.0)


class Simplex(AbstractSet):
    """The simplex {x ∈ ℝᵈ : x ≥ 0, ∑ᵢ xᵢ = total} (total = 1: the probability simplex).

    The affine hull {∑ x = total} has dimension d − 1; directions u are uniform on the unit
    sphere of {∑ u = 0} and the estimator of Eq. (4) uses d − 1 in its factor (d − 1)/(2δ).
    Inscribed ball (in the hull): c = total/d, r = total/√(d(d − 1)); D = total √2.

    Args:
        size: the dimension d, an int ≥ 2 (static).
        total: a positive scalar, the sum of the coordinates (default 1).
        ones: filled in by the constructor (leave it out).

    Raises:
        ValueError: for a size below 2 or a total that is not positive.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import sets
        >>> X = sets.Simplex(3)
        >>> X.project(jnp.array([0.5, 0.5, 2.0]))
        Array([0., 0., 1.], dtype=float32)
        >>> X.hull_dim
        2
    """

    size: int = eqx.field(
        static=True, converter=lambda n: int(n) if isinstance(n, np.integer) else n
    )
    total: jax.Array = eqx.field(converter=jnp.asarray, default=1.0)
    # ones(d), filled in: the centre's shape as an array of the problem, so that it is laid
    # out (d, 1) on seeds-minor blocks like the problem's other arrays (``jaxbco._src.blocks``)
    ones: jax.Array | None = eqx.field(default=None, repr=False)
    blocks = True
    kernel = True
    form = "simplex"

    def __post_init__(self):
        if self.ones is None:
            ok = isinstance(self.size, int) and not isinstance(self.size, bool) and self.size >= 1
            self.ones = jnp.ones((self.size if ok else 0,), jnp.result_type(self.total))

    def __check_init__(self):
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 2:
            raise ValueError(
                f"size (the simplex dimension d) must be an integer >= 2; got {self.size!r}"
            )
        checks.check_scalar("total", self.total)
        checks.check_range("total", self.total, low=0.0, low_open=True)

    @property
    def dim(self) -> int:
        return self.size

    @property
    def hull_dim(self) -> int:
        return self.size - 1

    def project(self, x):
        if self.size <= PAIRWISE_MAX_DIM:
            return _project_pairwise(x, self.total.astype(x.dtype))
        return ops.columns(self._project_sorted, x)

    def _project_sorted(self, x):
        # optax promotes to the default float (float64 under x64) and its custom JVP then
        # rejects float32 tangents: project in the default float and cast back.
        wide = jnp.result_type(float)
        return proj.projection_simplex(x.astype(wide), self.total.astype(wide)).astype(x.dtype)

    def inscribed_ball(self):
        d = self.size
        return self.ones * (self.total / d), self.total / (d * (d - 1)) ** 0.5

    def diameter(self):
        return self.total * 2.0**0.5

    def sample_direction(self, key, dtype):
        z = self.tangent(normal(key, (self.size,), dtype))  # (d, runs...) for a block of keys
        return z / jnp.sqrt(ops.sum_axis(z * z, 0))

    def tangent(self, v):
        return v - jnp.mean(v, axis=0)

    def face(self, x, v, tol):
        free = x > tol
        w = jnp.where(free, v, 0.0)
        count = jnp.maximum(jnp.sum(free, axis=0), 1).astype(v.dtype)
        return jnp.where(free, w - jnp.sum(w, axis=0) / count, 0.0)

    def min_linear(self, a):
        return float(self.total) * np.min(np.asarray(a, np.float64), axis=-1)

    def support(self, v):
        return self.total * jnp.max(v)

    def membership(self, x):
        return jnp.max(-x)

    def membership_pieces(self, x):
        return -x

    def barrier_slacks(self, x):
        return x  # the sum row is the affine hull's (``hull_projector``)

    def hull_projector(self, dtype):
        return jnp.eye(self.size, dtype=dtype) - jnp.full(
            (self.size, self.size), 1.0 / self.size, dtype
        )
