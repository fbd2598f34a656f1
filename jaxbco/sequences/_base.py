"""The data sequence's interface: ``AbstractSequence``, data of round t as a pure function of
(key, t), and the flags a sequence declares (``blocks``, ``kernel``, ``shared``, ``constant``,
``slack``)."""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax

from jaxbco._src.declarations import own_structure


class AbstractSequence(eqx.Module):
    """A data sequence: ``sample(key, t)`` returns the data of round t (t = 1..T).

    A sequence of your own subclasses this and implements ``sample``.  Declared by each class
    itself (not inherited): ``blocks``, its ``sample`` also takes a ``KeyBlock`` or
    ``RoundKey`` of runs (drawing with ``jaxbco.keys``' functions) and returns their
    data with the runs last (its own arrays with trailing unit axes); ``shared``, its data do
    not depend on the key (one sample per round serves every seed).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import sequences
        >>> seq = sequences.IIDNormal(jnp.zeros(2), jnp.ones(2))   # a subclass
        >>> isinstance(seq, sequences.AbstractSequence), seq.blocks, seq.shared
        (True, True, False)
        >>> seq.sample(jax.random.key(0), jnp.int32(1)).shape   # θ₁
        (2,)
    """

    blocks: ClassVar[bool] = False
    #: declared by each class itself: its block code also runs inside the fused GPU kernel
    #: (``jaxbco.fused``)
    kernel: ClassVar[bool] = False
    shared: ClassVar[bool] = False
    #: every round gets the same data, whatever the key and the round (``Fixed``)
    constant: ClassVar[bool] = False
    #: data (φ, sₜ): a fixed ``base`` φ, a slack sₜ in [``low``, ``high``] (``Slackened``); with
    #: a ``shift`` constraint the rounds' sets meet in {g(·, φ) ≤ minₜ sₜ}
    slack: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        """A class that draws its data itself (defines ``sample``) declares its structure
        itself: ``constant``, ``shared`` and ``slack`` it does not set, and the ``recorded``
        table, ``length`` and ``every_round`` it does not define, are the base's (drawn,
        per seed), never a parent's, whose claims its ``sample`` may break (a ``Fixed``
        whose ``sample`` drifts is not constant)."""
        super().__init_subclass__(**kwargs)
        base = AbstractSequence.__dict__
        declared = ("constant", "shared", "slack", "recorded", "length", "every_round")
        own_structure(cls, ("sample",), {n: base[n] for n in declared})

    def recorded(self, horizon: int | None = None):
        """The data of every distinct round of a run of ``horizon`` rounds, as a table.

        Args:
            horizon: T (None: every recorded round).

        Returns:
            A pytree with a leading round axis (constant: one row; replayed: the first T rows;
            cycled: one cycle), or None for drawn data (the default).
        """
        return None

    @property
    def length(self) -> int | None:
        """How many rounds the sequence can supply (a horizon may not exceed it); None: any."""
        return None

    def every_round(self):
        """The data of every round, for a ``constant`` sequence (its one recorded row)."""
        return jax.tree_util.tree_map(lambda v: v[0], self.recorded())

    @abc.abstractmethod
    def sample(self, key: jax.Array, t: jax.Array):
        """The data of round t.

        Args:
            key: round t's PRNG key (the same key for the same seed and round, whatever else
                runs).
            t: the round, an int32 scalar in 1..T.

        Returns:
            One round's data: a pytree of arrays with the shapes the loss or constraint family
            expects (e.g. (d,) for ``losses.Quadratic``, ((d,), ()) for ``constraints.Linear``).
        """
