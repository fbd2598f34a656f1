"""The path a run takes, said before it runs and kept in ``Result``: the back-end (and which
component kept a faster one off, ``jaxbco.backend``), the prox method the algorithm's solver
picks for the set and constraint, and how the comparator x* is found
(``comparator.comparator_method``).  ``jaxbco run``/``sweep``/``compare`` print it; after a run,
``speed`` gives its seed-rounds/s with the compile time split out (``CompileClock``).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import jax

from jaxbco import backend, fused
from jaxbco.comparator import comparator_method


class Path(NamedTuple):
    """What runs the rounds (``engine``: seeds-minor, vmap or fused kernel; ``engine_reason``:
    why a faster back-end was not taken, "" when none was passed over), the prox method(s)
    and the comparator's method ("off" with ``comparator=False``)."""

    engine: str
    engine_reason: str
    prox: str
    comparator: str


def prox_names(problem, algorithm) -> str:
    """The prox methods ``algorithm`` calls on ``problem``, by their reported names; "none"
    for an algorithm whose update calls none."""
    methods = algorithm.prox_methods(problem)
    if not methods:
        return "none (the algorithm's own update)"
    return "; ".join(f"{m.__name__} ({m.name})" if hasattr(m, "name") else m.__name__
                     for m in methods)


def describe(problem, algorithm, horizon: int, *, comparator: bool = True,
             kernel_config=None) -> Path:
    """The path of a run whose kernel choice is already made (``kernel_config``: the fused
    kernel's ``Config`` or None for the scan engine)."""
    if kernel_config is not None:
        engine, why = backend.FUSED, ""
    else:
        engine, why = backend.choose(problem, algorithm)
    how = comparator_method(problem, horizon) if comparator else "off (regret against x_1)"
    return Path(engine, why, prox_names(problem, algorithm), how)


def before(problem, algorithm, horizon: int, *, comparator: bool = True, kernel=None,
           dtype="float32") -> Path:
    """The path ``sweep`` will take on the default device (the kernel choice as ``sweep``
    makes it with ``kernel``)."""
    platform = jax.default_backend()
    config = fused.choose(kernel, platform, problem, algorithm, None, False, dtype)
    path = describe(problem, algorithm, horizon, comparator=comparator, kernel_config=config)
    if config is None and platform == "gpu" and kernel is not False and path.engine_reason == "":
        why = fused.blocker(problem, algorithm, None, False, dtype)  # why not the fused kernel
        path = path._replace(engine_reason=f"not the fused kernel: {why}")
    return path


def engine_text(path: Path) -> str:
    """The back-end, with the reason a faster one was not taken where there is one."""
    return path.engine + (f" ({path.engine_reason})" if path.engine_reason else "")


def lines(path: Path) -> list[tuple[str, str]]:
    """The path as the CLI prints it: (label, value) pairs."""
    return [("back-end", engine_text(path)), ("prox", path.prox), ("comparator", path.comparator)]


class CompileClock:
    """Seconds JAX spent tracing, lowering and compiling (its ``/jax/core/compile/`` duration
    events) while the context was open, in this process (any thread)."""

    def __init__(self):
        self.seconds = 0.0
        self._lock = threading.Lock()

    def _listen(self, event: str, duration: float, **_) -> None:
        if event.startswith("/jax/core/compile/"):
            with self._lock:
                self.seconds += duration

    def __enter__(self):
        jax.monitoring.register_event_duration_secs_listener(self._listen)
        return self

    def __exit__(self, *exc):
        jax.monitoring.unregister_event_duration_listener(self._listen)
        return False


def speed(seed_rounds: float, wall_s: float, compile_s: float) -> float:
    """Seed-rounds per second with compile time excluded (nan when nothing ran)."""
    run_s = wall_s - compile_s
    return float(seed_rounds / run_s) if seed_rounds > 0 and run_s > 0 else float("nan")
