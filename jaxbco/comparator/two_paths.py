"""A user's g (``CustomConstraint``, fixed) solved two ways, a wrapper of another method (as
diffrax wraps one solver in another): the x* of the problem as declared, and of the problem
with g's ``smooth`` flipped (projections by g's interior point, or by cutting planes), the
better certified kept.  An undeclared kink, or a declared one that x* does not sit on, still
gets an exact x*.  On a batch the second path runs only where some seed's x* fails its
certificate (``lax.cond``); each seed's x* is the one-seed ``solve``'s.

Example:
    >>> import jax.numpy as jnp
    >>> from jaxbco import Problem, comparator, constraints, losses, sequences, sets
    >>> g = constraints.CustomConstraint(lambda x, r: jnp.sum(x**2) - r)
    >>> p = Problem(sets.Box(-jnp.ones(2), jnp.ones(2)), losses.Quadratic(),
    ...             sequences.IIDNormal(jnp.ones(2), 0.1), g, sequences.Fixed(jnp.asarray(0.5)))
    >>> type(comparator.select(p, 10)).__name__
    'TwoPaths'
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from jaxbco import certificate as _certificate
from jaxbco._src.prng import KeyBlock
from jaxbco.comparator._base import AbstractOfflineMethod
from jaxbco.comparator.streaming import stream_cuts


def flipped(problem):
    """The problem with its fixed user g declared the other way (``smooth`` flipped), or None."""
    other = problem.constraint.flipped()
    if other is None or not problem.constraint_data.constant:
        return None
    return dataclasses.replace(problem, constraint=other)


def _score(cert):
    worst = jnp.maximum(jnp.maximum(cert.set_violation, cert.constraint_violation), cert.gap)
    return jnp.where(jnp.isfinite(worst), worst, jnp.inf)


class TwoPaths(AbstractOfflineMethod):
    """``first`` on the problem as declared, ``second`` on it with g's ``smooth`` flipped;
    the first's x* unless its certificate fails and the second's is better.

    Attributes:
        first: the method on the problem as declared.
        second: the method on the flipped problem (``flipped``).

    Example:
        >>> import jax.numpy as jnp, jaxbco
        >>> from jaxbco import comparator, constraints, losses, sequences, sets
        >>> theta = sequences.IIDNormal(jnp.zeros(2), jnp.ones(2))
        >>> g = constraints.CustomConstraint(lambda x, r: jnp.sum(x * x) - r)   # a user's g
        >>> problem = jaxbco.Problem(sets.L2Ball(jnp.zeros(2), 1.0), losses.Quadratic(), theta, g,
        ...                          sequences.Fixed(jnp.asarray(0.25)))
        >>> method = comparator.select(problem, 100)
        >>> type(method).__name__, type(method.first).__name__
        ('TwoPaths', 'MeanProjection')
    """

    first: AbstractOfflineMethod
    second: AbstractOfflineMethod
    outside = False

    @property
    def name(self) -> str:
        return (
            f"{self.first.name}; a user's g projected both by its interior point and by "
            f"cutting planes, the better-certified x* kept"
        )

    @property
    def streams(self) -> bool:
        return self.first.streams

    @property
    def cost(self) -> str:
        return f"{self.first.cost}; as much again for the second path where the first fails"

    def solve(self, problem, seed_key, horizon: int):
        x = self.first.solve(problem, seed_key, horizon)
        if isinstance(seed_key, KeyBlock):
            return x
        y = self.second.solve(flipped(problem), seed_key, horizon)
        cert = lambda z: _score(_certificate.certify_seed(problem, seed_key, horizon, z))
        sx, sy = cert(x), cert(y)
        return jnp.where((sx > _certificate.tolerance(x.dtype)) & (sy < sx), y, x)

    def solve_batch(self, problem, seed_keys, horizon: int):
        x = self.first.solve_batch(problem, seed_keys, horizon)
        other = lambda: self.second.solve_batch(flipped(problem), seed_keys, horizon)
        return _better_batch(problem, seed_keys, horizon, x, other, None)

    def from_sums(self, problem, sums, horizon: int):
        x = self.first.from_sums(problem, sums, horizon)
        other = lambda: self.second.from_sums(flipped(problem), sums, horizon)
        cuts = lambda i: stream_cuts(problem, (sums[0][i], sums[1][i]), horizon)
        return _better_batch(problem, None, horizon, x, other, cuts)


def _better_batch(problem, seed_keys, horizon, x, other, cuts):
    """x, unless a seed's certificate fails and ``other()``'s (the second path's x*, (S, d))
    is better there; ``other()`` only where some seed fails."""
    tol = _certificate.tolerance(x.dtype)
    sx = _score(_certificate.certify_batch(problem, seed_keys, horizon, x, cuts))

    def second():
        y = other()
        sy = _score(_certificate.certify_batch(problem, seed_keys, horizon, y, cuts))
        return jnp.where(((sx > tol) & (sy < sx))[:, None], y, x)

    return jax.lax.cond(jnp.all(sx <= tol), lambda: x, second)
