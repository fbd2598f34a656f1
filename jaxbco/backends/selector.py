"""The one back-end selector: a run's back-end and why no faster one was taken.

``sweep``, ``make_run``, ``Result.engine`` / ``engine_reason``, ``plan.before`` (the CLI's
summary, ``jaxbco compare``'s lines) all read ``select``: the fused GPU kernel where the caller's
``kernel`` and the platform ask for it and nothing keeps the run off it, else the seeds-minor
scan where every component declares ``blocks``, else the ``vmap`` scan.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxbco import fused
from jaxbco.backends._base import AbstractBackend
from jaxbco.backends.fused_kernel import FusedKernel
from jaxbco.backends.seeds_minor import SeedsMinorScan
from jaxbco.backends.vmap_scan import VmapScan


class Selection(NamedTuple):
    """The back-end chosen for a run.

    Args:
        backend: the back-end that runs it.
        reason: why no faster back-end was taken ("" when the fastest was).
        scan: the best scan back-end (seeds-minor or vmap): the run's back-end under the
            caller's transformations, or where the kernel fails to compile.

    Example:
        >>> from jaxbco import backends, problems
        >>> from jaxbco.algorithms import RectifiedBCO
        >>> selection = backends.select(problems.make("quadratic-ball", dim=2), RectifiedBCO(),
        ...                             platform="cpu")
        >>> selection.backend.name, selection.reason, selection.scan.name
        ('seeds-minor', '', 'seeds-minor')
    """

    backend: AbstractBackend
    reason: str
    scan: AbstractBackend

    @property
    def engine(self) -> str:
        """The back-end's name ("fused kernel", "seeds-minor" or "vmap")."""
        return self.backend.name

    @property
    def config(self):
        """The fused kernel's ``fused.Config``, or None for a scan back-end."""
        return getattr(self.backend, "config", None)


def choose(problem, algorithm) -> tuple[str, str]:
    """The scan back-end that runs ``problem`` with ``algorithm``, with the reason the faster
    one was not taken.

    Args:
        problem: the problem.
        algorithm: the algorithm.

    Returns:
        ("seeds-minor", "") or ("vmap", the phrase naming what does not declare ``blocks``).

    Example:
        >>> from jaxbco import algorithms, backends, problems
        >>> backends.choose(problems.make("quadratic-ball", 3), algorithms.RectifiedBCO())
        ('seeds-minor', '')
    """
    why = SeedsMinorScan().blocker(problem, algorithm)
    return (SeedsMinorScan.name, "") if why is None else (VmapScan.name, why)


def select(
    problem,
    algorithm,
    *,
    platform: str,
    kernel=None,
    directions=None,
    record_decisions: bool = False,
    dtype=jnp.float32,
) -> Selection:
    """The back-end that runs ``problem`` with ``algorithm`` on ``platform``.

    Args:
        problem: the problem.
        algorithm: the algorithm.
        platform: the devices' platform ("cpu", "gpu", ...).
        kernel: as ``sweep``'s: None (the fused kernel on a GPU where it covers the run), True
            (wherever it covers it; ValueError where it does not), False, or a ``fused.Config``.
        directions: replayed directions, or None.
        record_decisions: whether xₜ is recorded at the checkpoints.
        dtype: the run's dtype.

    Returns:
        A ``Selection``; on a GPU off the kernel its reason says why ("not the fused kernel:
        ..." where the seeds-minor scan runs instead).

    Example:
        >>> from jaxbco import algorithms, backends, problems
        >>> sel = backends.select(problems.make("quadratic-ball", 3), algorithms.RectifiedBCO(),
        ...                       platform="cpu")
        >>> sel.engine, sel.reason, sel.config
        ('seeds-minor', '', None)
    """
    name, why = choose(problem, algorithm)
    scan = SeedsMinorScan() if name == SeedsMinorScan.name else VmapScan()
    config = fused.choose(kernel, platform, problem, algorithm, directions, record_decisions, dtype)
    if config is not None:
        return Selection(FusedKernel(config), "", scan)
    if platform == "gpu" and fused.check(kernel) is not False and why == "":
        why = "not the fused kernel: " + fused.blocker(
            problem, algorithm, directions, record_decisions, dtype
        )
    return Selection(scan, why, scan)
