"""Coordinates padded to a power of two: Triton's tensors have power-of-two shapes, so the
fused kernel holds a run's d-vectors in P = 2^k >= d rows, the rows >= d zero.

The problem's sets are replaced by padded versions whose every method (projection, inscribed
ball, diameter, hull directions, ``hull_dim``) is that of the d real coordinates, so the round
code runs unchanged on (P, B) blocks.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco._src import blocks as _blocks
from jaxbco._src.normal import normal
from jaxbco.sets import AbstractSet, Box, L2Ball, Simplex


def real_rows(true_dim: int, rows: int):
    """(rows, 1): True in the rows of the d real coordinates."""
    return jax.lax.broadcasted_iota(jnp.int32, (rows, 1), 0) < true_dim


def masked_direction(key, true_dim: int, rows: int, dtype, tangent=None):
    """``sets.gaussian_direction`` in the d real rows of a (rows, runs) block, zeros below
    (then ``tangent``, where given): rows j < d draw the set's own numbers j (the same
    counters).  Normalised by a reduction (Triton has no slices for ``ops.sum_axis``'s chain):
    the unpadded direction to float round-off."""
    z = jnp.where(real_rows(true_dim, rows), normal(key, (rows,), dtype), 0.0)
    z = z if tangent is None else tangent(z)
    return z / jnp.sqrt(jnp.sum(z * z, axis=0))


#: the set forms (``AbstractSet.form``) with a padded twin below
PADDED_FORMS = ("l2-ball", "box", "simplex")


class AbstractPadded(AbstractSet):
    """A set's padded twin, by composition: ``base`` is the set itself with its vectors padded
    to P rows (``padded_problem``), ``true_dim`` the d real coordinates.  Every method is the
    base's unless the final class says otherwise (``hull_dim`` and the directions always: they
    are those of the d real coordinates)."""

    base: AbstractSet
    true_dim: int = eqx.field(static=True, default=0)

    @property
    def dim(self) -> int:
        return self.base.dim

    @property
    def hull_dim(self) -> int:
        return self.true_dim

    def project(self, x):
        return self.base.project(x)

    def inscribed_ball(self):
        return self.base.inscribed_ball()

    def diameter(self):
        return self.base.diameter()

    def tangent(self, v):
        return self.base.tangent(v)

    def face(self, x, v, tol):
        return self.base.face(x, v, tol)

    def min_linear(self, a):
        return self.base.min_linear(a)

    def support(self, v):
        return self.base.support(v)

    def membership(self, x):
        return self.base.membership(x)

    def hull_projector(self, dtype):
        return self.base.hull_projector(dtype)


class PaddedBall(AbstractPadded):
    """An ``L2Ball`` whose centre is padded to P coordinates; ``hull_dim`` and the directions
    stay those of the d real ones."""

    blocks = True
    kernel = True
    form = "l2-ball"

    @property
    def center(self):
        return self.base.center

    @property
    def radius(self):
        return self.base.radius

    def sample_direction(self, key, dtype):
        return masked_direction(key, self.true_dim, self.center.shape[0], dtype)


class PaddedBox(AbstractPadded):
    """A ``Box`` whose bounds are padded to P coordinates of [0, 0]; ``hull_dim``, the inscribed
    ball and the diameter stay those of the d real coordinates (bounds laid out (P, 1))."""

    blocks = True
    kernel = True
    form = "box"

    @property
    def lower(self):
        return self.base.lower

    @property
    def upper(self):
        return self.base.upper

    def sample_direction(self, key, dtype):
        return masked_direction(key, self.true_dim, self.lower.shape[0], dtype)

    def inscribed_ball(self):
        real = jax.lax.broadcasted_iota(jnp.int32, self.lower.shape, 0) < self.true_dim
        width = jnp.where(real, self.upper - self.lower, jnp.inf)
        return 0.5 * (self.lower + self.upper), 0.5 * jnp.min(width, axis=0)

    def diameter(self):
        r = self.upper - self.lower
        return jnp.sqrt(jnp.sum(r * r, axis=0))


class PaddedSimplex(AbstractPadded):
    """A ``Simplex`` in R^d padded to P coordinates that stay 0 (``size`` = P): the projection,
    the hull's directions, ``hull_dim`` = d - 1 and the inscribed ball are those of the d real
    coordinates (seeds-minor blocks (P, B))."""

    blocks = True
    kernel = True
    form = "simplex"

    @property
    def size(self) -> int:
        return self.base.size

    @property
    def total(self):
        return self.base.total

    @property
    def hull_dim(self) -> int:
        return self.true_dim - 1

    def _real(self):
        return real_rows(self.true_dim, self.size)

    def project(self, x):
        """``sets.simplex``'s sort-free rule, column by column, the padded rows at -inf (never
        in a prefix, never in the support)."""
        z = jnp.where(self._real(), x, -jnp.inf)
        ge = z[None, :, :] >= z[:, None, :]  # ge[i, j, s]: z_j >= z_i
        count = jnp.sum(ge.astype(z.dtype), axis=1)
        prefix = jnp.sum(jnp.where(ge, z[None, :, :], 0.0), axis=1)
        tau = jnp.max((prefix - self.total) / count, axis=0)
        return jnp.maximum(z - tau, 0.0)

    def sample_direction(self, key, dtype):
        return masked_direction(key, self.true_dim, self.size, dtype, self.tangent)

    def inscribed_ball(self):
        d = self.true_dim
        c = jnp.where(self._real(), self.total / d, 0.0)
        return c, self.total / (d * (d - 1)) ** 0.5

    def tangent(self, v):
        mean = jnp.sum(jnp.where(self._real(), v, 0.0), axis=0) / self.true_dim
        return jnp.where(self._real(), v - mean, 0.0)


def pow2(n: int) -> int:
    """The smallest power of two >= n."""
    return 1 << max(0, int(n) - 1).bit_length()


def _pad_rows(a, rows: int, axis: int = 0):
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, rows - a.shape[axis])
    return jnp.pad(a, widths)


def padded_problem(problem, P: int):
    """The problem with every coordinate vector padded to P rows of zeros and laid out (P, 1)
    (``blocks.expand``), its set a ``PaddedBall`` or ``PaddedBox``."""
    d = problem.dim
    padded = jax.tree_util.tree_map(
        lambda a: _pad_rows(a, P) if isinstance(a, jax.Array) and a.ndim == 1 else a, problem
    )
    leaves = jax.tree_util.tree_leaves(padded.domain)
    if padded.domain.form == "l2-ball":
        template = PaddedBall(L2Ball(jnp.zeros(1), jnp.ones(())), d)
    elif padded.domain.form == "box":
        template = PaddedBox(Box(-jnp.ones(1), jnp.ones(1)), d)
    else:
        template = PaddedSimplex(Simplex(P, 1.0), true_dim=d)
    domain = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(template), leaves)
    return _blocks.expand(eqx.tree_at(lambda p: p.domain, padded, domain))
