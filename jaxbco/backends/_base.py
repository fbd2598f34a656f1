"""What a back-end is: which declaration it needs from the components, what keeps a run off
it and why, and how it advances a chunk of rounds."""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from jaxbco._src import blocks
from jaxbco.engine import Chunk


class AbstractBackend(eqx.Module):
    """A back-end: it runs rounds t0 .. t0 + length - 1 of every (setting, seed) run.

    Final classes declare ``name`` (what ``Result.engine`` reports) and ``flag``, the
    declaration every component and prox method must make for a run to take it
    (``"blocks"`` or ``"kernel"``; None: any run), and implement ``advance``.

    Example:
        >>> from jaxbco import backends
        >>> [(b.name, b.flag) for b in (backends.SeedsMinorScan(), backends.VmapScan())]
        [('seeds-minor', 'blocks'), ('vmap', None)]
    """

    name: ClassVar[str]
    flag: ClassVar[str | None]

    def blocker(
        self, problem, algorithm, directions=None, record_decisions: bool = False, dtype=jnp.float32
    ) -> str | None:
        """Why this back-end cannot run the problem with the algorithm, or None when it can.

        Args:
            problem: the problem.
            algorithm: the algorithm.
            directions: replayed directions, or None.
            record_decisions: whether xₜ is recorded at the checkpoints.
            dtype: the run's dtype.

        Returns:
            None, or one phrase naming what keeps the run off (``blocks.blocker``).
        """
        return None if self.flag is None else blocks.blocker(problem, algorithm, self.flag)

    @abc.abstractmethod
    def advance(self, chunk: Chunk, carry, t0, directions):
        """Rounds t0 .. t0 + chunk.length - 1 of every run.

        Args:
            chunk: what every chunk of the run shares (``Chunk``).
            carry: the ``engine.Carry`` before round t0.
            t0: the first round, an int32 scalar.
            directions: None, or the chunk's replayed uₜ, (length, d) or (length, S, d).

        Returns:
            The ``engine.Carry`` after the chunk.
        """
