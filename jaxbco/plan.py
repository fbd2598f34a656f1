"""The path a run takes, said before it runs and kept in ``Result``: the back-end (and which
component kept a faster one off, ``jaxbco.backends``), the prox method the algorithm's solver
picks for the set and constraint, and how the comparator x* is found
(the selected method's name, ``comparator.select``).  ``jaxbco run``/``sweep``/``compare`` print it; after a run,
``speed`` gives its seed-rounds/s with the compile time split out (``CompileClock``).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import jax

from jaxbco.backends import Selection, select
from jaxbco.comparator import AbstractOfflineMethod
from jaxbco.comparator import select as select_method


class Path(NamedTuple):
    """The path a run takes: its back-end, prox method(s) and comparator method.

    Args:
        engine: what runs the rounds: "seeds-minor", "vmap" or "fused kernel".
        engine_reason: why a faster back-end was not taken ("" when none was passed over).
        prox: the prox method(s) the algorithm's solver picks, by their reported names.
        comparator: how x* is found ("off (...)" with ``comparator=False``).
        comparator_cost: what x* costs per seed, in passes over the rounds' data (the
            method's ``cost``; "" where there is no x*).

    Example:
        >>> from jaxbco import plan, problems
        >>> from jaxbco.algorithms import RectifiedBCO
        >>> path = plan.before(problems.make("quadratic-ball", dim=2), RectifiedBCO(), 100)
        >>> path.engine, path.prox
        ('seeds-minor', 'BallHalfspace (closed form: ball n halfspace)')
    """

    engine: str
    engine_reason: str
    prox: str
    comparator: str
    comparator_cost: str = ""


def prox_names(problem, algorithm) -> str:
    """The prox methods ``algorithm`` calls on ``problem``, by their reported names.

    Args:
        problem: the problem (its set and constraint choose the method).
        algorithm: the algorithm.

    Returns:
        The names joined by "; ", or "none (the algorithm's own update)" for an algorithm whose
        update calls no prox method.

    Example:
        >>> from jaxbco import plan, problems
        >>> from jaxbco.algorithms import FlaxmanBGDXOnly, RectifiedBCO
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> plan.prox_names(problem, RectifiedBCO())
        'BallHalfspace (closed form: ball n halfspace)'
        >>> plan.prox_names(problem, FlaxmanBGDXOnly())
        "none (the algorithm's own update)"
    """
    methods = algorithm.prox_methods(problem)
    if not methods:
        return "none (the algorithm's own update)"
    return "; ".join(
        f"{m.__name__} ({m.name})" if hasattr(m, "name") else m.__name__ for m in methods
    )


def describe(
    problem,
    algorithm,
    horizon: int,
    *,
    comparator: bool = True,
    selection: Selection | None = None,
    dtype=None,
) -> Path:
    """The path of a run whose back-end is already selected.

    Args:
        problem: the problem.
        algorithm: the algorithm.
        horizon: the number of rounds T (the comparator's method may depend on it).
        comparator: False: no x* ("off (regret against x_1)"); True: x*'s method as
            ``comparator.select`` picks it; or the method already selected (a run's own).
        selection: the back-end (``backends.select``); None: as on a CPU without the kernel.
        dtype: the run's dtype, which x*'s method may depend on (None: the problem's own).

    Returns:
        The ``Path``.

    Example:
        >>> from jaxbco import plan, problems
        >>> from jaxbco.algorithms import RectifiedBCO
        >>> path = plan.describe(problems.make("switching-box", dim=2), RectifiedBCO(), 100)
        >>> path.engine, path.comparator
        ('seeds-minor', 'proximal point on the mean theta (linear)')
    """
    if selection is None:
        selection = select(problem, algorithm, platform="cpu", kernel=False)
    method = None
    if isinstance(comparator, AbstractOfflineMethod):  # selected already: what runs
        method = comparator
    elif comparator:
        method = select_method(problem, horizon, dtype=dtype)
    if method is not None:
        how, cost = method.name, method.cost
    else:
        how, cost = ("none" if comparator else "off (regret against x_1)"), ""
    return Path(selection.engine, selection.reason, prox_names(problem, algorithm), how, cost)


def before(
    problem, algorithm, horizon: int, *, comparator: bool = True, kernel=None, dtype="float32"
) -> Path:
    """The path ``sweep`` will take on the default device, said before anything runs.

    The back-end is selected as ``sweep`` selects it (``backends.select`` with ``kernel``); on
    a GPU where the fused kernel is not taken, ``engine_reason`` says why.

    Args:
        problem: the problem.
        algorithm: the algorithm.
        horizon: the number of rounds T.
        comparator: False: no x*.
        kernel: as ``sweep``'s ``kernel`` (None: the fused kernel on a GPU where it covers the
            run).
        dtype: "float32" or "float64".

    Returns:
        The ``Path``.

    Example:
        >>> from jaxbco import algorithms, plan, problems
        >>> problem = problems.make("quadratic-ball", 3)
        >>> path = plan.before(problem, algorithms.RectifiedBCO(), 100)
        >>> path.engine
        'seeds-minor'
    """
    chosen = select(problem, algorithm, platform=jax.default_backend(), kernel=kernel, dtype=dtype)
    return describe(
        problem, algorithm, horizon, comparator=comparator, selection=chosen, dtype=dtype
    )


def engine_text(path: Path) -> str:
    """The back-end, with the reason a faster one was not taken where there is one."""
    return path.engine + (f" ({path.engine_reason})" if path.engine_reason else "")


def lines(path: Path) -> list[tuple[str, str]]:
    """The path as the CLI prints it: (label, value) pairs."""
    out = [("back-end", engine_text(path)), ("prox", path.prox), ("comparator", path.comparator)]
    return out + ([("x* cost", path.comparator_cost)] if path.comparator_cost else [])


class CompileClock:
    """A context manager that counts the seconds JAX spends tracing, lowering and compiling while
    it is open, in this process (any thread), from JAX's ``/jax/core/compile/`` duration events.

    Attributes:
        seconds: the compile seconds counted so far.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import plan
        >>> with plan.CompileClock() as clock:
        ...     _ = jax.jit(lambda x: x * 2)(jnp.ones(3))
        >>> clock.seconds >= 0.0
        True
    """

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
    """Seed-rounds per second with the compile time left out.

    speed = seed_rounds / (wall_s − compile_s).

    Args:
        seed_rounds: the seed-rounds run (G·S·T).
        wall_s: the wall time, compile included.
        compile_s: the compile time within ``wall_s``.

    Returns:
        The speed, or NaN when nothing ran (no seed-rounds, or no time left after compiling).

    Example:
        >>> from jaxbco import plan
        >>> plan.speed(1000.0, 3.0, 1.0)
        500.0
    """
    run_s = wall_s - compile_s
    return float(seed_rounds / run_s) if seed_rounds > 0 and run_s > 0 else float("nan")


def path_fields(problem, algorithm, horizon, comparator, chosen, dtype) -> dict:
    """``Result``'s engine, engine_reason, prox_method and comparator_method (``plan``)."""
    kw = dict(comparator=comparator, selection=chosen, dtype=dtype)
    path = describe(problem, algorithm, horizon, **kw)
    names = ("engine", "engine_reason", "prox_method", "comparator_method")
    return dict(zip(names, (path.engine, path.engine_reason, path.prox, path.comparator)))
