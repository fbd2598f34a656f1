"""Given data: sequences whose round-t data is set in advance, not drawn (one fixed value,
a recorded table replayed, values cycled in turn); the key is unused."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco._src import checks
from jaxbco._src.recorded_data import check_rounds, first_rounds
from jaxbco.sequences._base import AbstractSequence


class Fixed(AbstractSequence):
    """The same data every round (a fixed loss or a fixed constraint).

    Args:
        value: the data of every round, any pytree of numbers (e.g. (a, b) of shapes ((d,), ())
            for ``constraints.Linear``).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import sequences
        >>> seq = sequences.Fixed((jnp.array([1.0, 0.0]), jnp.asarray(0.5)))   # a halfspace
        >>> a, b = seq.sample(jax.random.key(0), jnp.int32(7))
        >>> a, float(b), seq.shared
        (Array([1., 0.], dtype=float32), 0.5, True)
    """

    blocks = True
    kernel = True
    shared = True
    constant = True

    value: object = eqx.field(converter=lambda v: jax.tree_util.tree_map(checks.numbers, v))

    def __check_init__(self):
        checks.check_numbers("Fixed value", self.value)

    def recorded(self, horizon=None):
        return jax.tree_util.tree_map(lambda v: v[None], self.value)

    def every_round(self):
        return self.value

    def sample(self, key, t):
        return self.value


class Replay(AbstractSequence):
    """Recorded data: round t gets ``values[t - 1]``.

    Args:
        values: any pytree of arrays with one leading round axis of length T' ≥ T (the
            horizon of a run may not exceed it).

    Raises:
        ValueError: for arrays without a common leading round axis, or non-finite data.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import sequences
        >>> seq = sequences.Replay(jnp.arange(6.0).reshape(3, 2))   # 3 rounds of (2,) data
        >>> seq.sample(jax.random.key(0), jnp.asarray(2, jnp.int32)), seq.length
        (Array([2., 3.], dtype=float32), 3)
    """

    blocks = True
    shared = True

    values: object = eqx.field(converter=lambda v: jax.tree_util.tree_map(checks.numbers, v))

    def __check_init__(self):
        checks.check_numbers("Replay values", self.values)
        check_rounds("Replay", "values", self.values)
        checks.check_finite("replayed data", self.values)

    @property
    def length(self) -> int:
        return jax.tree_util.tree_leaves(self.values)[0].shape[0]

    def recorded(self, horizon=None):
        return first_rounds(self.values, horizon)

    def sample(self, key, t):
        return jax.tree_util.tree_map(lambda v: v[t - 1], self.values)


class Alternating(AbstractSequence):
    """Deterministic alternation: round t gets ``values[(t − 1) mod n]``, n the leading length.

    With constant constraints gₜ = −1, +1, −1, ... this is Guo et al. (2023)'s example where
    the soft violation stays 0 and the hard violation grows like T/2.

    Args:
        values: any pytree of arrays with one leading axis of length n ≥ 1.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import sequences
        >>> seq = sequences.Alternating(jnp.array([-1.0, 1.0]))
        >>> key = jax.random.key(0)
        >>> [float(seq.sample(key, jnp.int32(t))) for t in (1, 2, 3)]
        [-1.0, 1.0, -1.0]
    """

    blocks = True
    shared = True

    values: object = eqx.field(converter=lambda v: jax.tree_util.tree_map(jnp.asarray, v))

    def __check_init__(self):
        check_rounds("Alternating", "values", self.values)
        checks.check_finite("alternating data", self.values)

    def recorded(self, horizon=None):
        return first_rounds(self.values, horizon)

    def sample(self, key, t):
        n = jax.tree_util.tree_leaves(self.values)[0].shape[0]
        return jax.tree_util.tree_map(lambda v: v[(t - 1) % n], self.values)
