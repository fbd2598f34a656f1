"""The fused GPU kernel as a back-end: the round loop as one Pallas kernel (``jaxbco.fused``),
where every component declares ``kernel`` and the set has a padded twin."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from jaxbco import fused
from jaxbco.backends._base import AbstractBackend
from jaxbco.engine import Chunk


class FusedKernel(AbstractBackend):
    """Rounds as one kernel launch per chunk (``fused.launch``).

    Args:
        config: the launch choices (``fused.Config``: block, warps; ``interpret`` off a GPU).

    Example:
        >>> from jaxbco import backends, problems
        >>> from jaxbco.algorithms import RectifiedBCO
        >>> backend = backends.FusedKernel()   # GPU only; the CPU runs it interpreted (slow)
        >>> backend.name, backend.blocker(problems.make("quadratic-ball", dim=2), RectifiedBCO())
        ('fused kernel', None)
    """

    name: ClassVar[str] = "fused kernel"
    flag: ClassVar[str | None] = "kernel"
    config: fused.Config = eqx.field(static=True, default=fused.Config())

    def blocker(
        self, problem, algorithm, directions=None, record_decisions: bool = False, dtype=jnp.float32
    ) -> str | None:
        return fused.blocker(problem, algorithm, directions, record_decisions, dtype)

    def advance(self, chunk: Chunk, carry, t0, directions):
        return fused.launch(chunk, carry, t0, self.config)  # no replayed directions (blocker)
