"""The one back-end selector: a run's back-end and why no faster one was taken.

``sweep``, ``make_run``, ``Result.engine`` / ``engine_reason``, ``plan.before`` (the CLI's
summary, ``jaxbco compare``'s lines) all read ``select``: the fused GPU kernel where the caller's
``kernel`` and the platform ask for it and ``fused.blocker`` finds nothing against it, else the
seeds-minor scan where every component declares ``blocks`` (``backend.blocker``), else the
``vmap`` scan.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxbco import backend, fused


class Selection(NamedTuple):
    """The back-end chosen for a run.

    Args:
        engine: "fused kernel", "seeds-minor" or "vmap" (``backend.FUSED`` ...).
        reason: why no faster back-end was taken ("" when the fastest was).
        config: the fused kernel's launch choices, or None: the scan engine.
    """

    engine: str
    reason: str
    config: fused.Config | None


def select(problem, algorithm, *, platform: str, kernel=None, directions=None,
           record_decisions: bool = False, dtype=jnp.float32) -> Selection:
    """The back-end that runs ``problem`` with ``algorithm`` on ``platform``.

    Args:
        problem: the problem.
        algorithm: the algorithm.
        platform: the devices' platform ("cpu", "gpu", ...).
        kernel: as ``sweep``'s: None (the fused kernel on a GPU where it covers the run), True
            (wherever it covers it; ValueError where it does not), False, or a ``fused.Config``.
        directions: replayed directions, or None.
        record_decisions: whether x_t is recorded at the checkpoints.
        dtype: the run's dtype.

    Returns:
        A ``Selection``; on a GPU off the kernel its reason says why ("not the fused kernel:
        ..." where the seeds-minor scan runs instead).

    Example:
        >>> from jaxbco import algorithms, problems, selection
        >>> sel = selection.select(problems.make("quadratic-ball", 3), algorithms.RectifiedBCO(),
        ...                        platform="cpu")
        >>> sel.engine, sel.reason, sel.config
        ('seeds-minor', '', None)
    """
    config = fused.choose(kernel, platform, problem, algorithm, directions, record_decisions, dtype)
    if config is not None:
        return Selection(backend.FUSED, "", config)
    engine, why = backend.choose(problem, algorithm)
    if platform == "gpu" and fused.check(kernel) is not False and why == "":
        why = "not the fused kernel: " + fused.blocker(problem, algorithm, directions,
                                                        record_decisions, dtype)
    return Selection(engine, why, None)
