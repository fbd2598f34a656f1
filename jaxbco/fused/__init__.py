"""The fused round loop: a chunk of rounds as one Pallas kernel on a GPU (``kernel.py``).

On a GPU the scan engine is launch-bound (a round is ~20 small kernels); this runs all of a
chunk's rounds in one kernel whose program instances each own B seeds of one setting, with
their state in registers.  ``sweep`` and ``make_run`` choose it by themselves (``kernel=None``)
on a GPU for the problems it covers (``applies``); ``kernel=False`` keeps the scan engine,
``kernel=True`` asks for it anywhere (on a CPU through Pallas' interpreter: slow, for tests).
It computes what the scan engine computes (the same round code, ``engine.one_run``, and the
same random streams), so results agree to float32 round-off; where the kernel fails to lower
or compile, the run falls back to the scan engine with a ``KernelWarning``.

Covered: every run whose components declare ``kernel = True`` (each class's own declaration: their
block code lowers to Pallas' Triton and keeps padded rows zero; ``blocker`` says what keeps a
run off it) on an ``L2Ball``, a ``Box`` or a ``Simplex`` of d <= 32 (``padding.py``), with
vector or scalar data, float32 or float64, no replayed directions or recorded decisions.
The rounds' data are the components' own ``sample``/``sample_direction`` on the engine's round
streams (``kernel.draw``).  Declared today: ``RectifiedBCO`` and every registered baseline;
the ``Dual`` solver's closed forms and 1-D dual (``BallHalfspace``, ``BallBall``,
``LinearDual``) and ``Subgradient``; ``Quadratic``, ``Linear`` and ``Logistic`` losses; ``Linear``, ``Ball`` and
``Shifted`` constraints; ``Fixed``, ``IIDNormal``, ``IIDUniform``, ``Classification`` and
``Slackened`` data.  Not yet: several halfspaces (the polyhedral dual's Newton: slices,
gathers, row counts of 3), quadratic constraints on boxes and simplices (the interior point's
Cholesky factors), switching data (a gather).  Everything else, and differentiation (``jaxbco.tune``, ``make_run``
under ``jax.grad``), runs the scan engine.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import engine
from jaxbco._src import blocks, checks
from jaxbco._src.shaping import cast, grid
from jaxbco.algorithms import RectifiedBCO
from jaxbco.fused import padding
from jaxbco.fused.kernel import Config
from jaxbco.fused.launcher import launch as launch

__all__ = [
    "Config",
    "KernelWarning",
    "launch",
    "applies",
    "blocker",
    "call_with_fallback",
    "choose",
    "lower_for_cuda",
    "run_chunk",
]


class KernelWarning(UserWarning):
    """The fused kernel could not be used for this run; the scan engine ran it."""


def blocker(
    problem, algorithm, directions=None, record_decisions: bool = False, dtype=jnp.float32
) -> str | None:
    """None where the fused kernel covers this run, else why not (one phrase): every component
    declares ``kernel`` (itself, not inherited), the set has a padded
    form (``padding.py``: balls, boxes, simplices of d <= 32), the data are vectors or
    scalars, float32/64, no replayed directions or recorded decisions."""
    if directions is not None:
        return "replayed directions"
    if record_decisions:
        return "recorded decisions"
    if jnp.dtype(dtype).name not in ("float32", "float64"):
        return f"{jnp.dtype(dtype).name} (float32 or float64 only)"
    why = blocks.blocker(problem, algorithm, "kernel")
    if why is not None:
        return why
    if problem.domain.form not in padding.PADDED_FORMS:
        return f"no padded form of {type(problem.domain).__name__}"
    if problem.domain.form == "simplex" and problem.dim > 32:  # (P, P, B) projection blocks
        return "a simplex of d > 32"
    arrays = [a for a in jax.tree_util.tree_leaves(problem) if isinstance(a, jax.Array)]
    if any(a.ndim > 1 for a in arrays):  # only vectors are padded to P rows
        return "data arrays of rank > 1"
    return None


def applies(
    problem, algorithm, directions=None, record_decisions: bool = False, dtype=jnp.float32
) -> bool:
    """Whether the fused kernel covers this run (a static test: ``blocker``)."""
    return blocker(problem, algorithm, directions, record_decisions, dtype) is None


def check(x):
    """``kernel=``: None (automatic), True, False or a ``Config``; a clear error otherwise."""
    if isinstance(x, Config):
        block, warps = x.block, x.warps
        if not (isinstance(block, int) and block >= 1 and block & (block - 1) == 0):
            raise ValueError(
                f"kernel Config block must be a power of two >= 1; got {checks.describe(block)}"
            )
        if not (isinstance(warps, int) and warps >= 1 and warps & (warps - 1) == 0):
            raise ValueError(
                f"kernel Config warps must be a power of two >= 1; got {checks.describe(warps)}"
            )
        return x
    if x is not None and not isinstance(x, (bool, np.bool_)):
        raise checks.KindError(
            f"kernel must be None (automatic), True, False or a jaxbco.fused.Config; "
            f"got {checks.describe(x)}"
        )
    return None if x is None else bool(x)


def choose(
    kernel,
    platform: str,
    problem,
    algorithm,
    directions=None,
    record_decisions: bool = False,
    dtype=jnp.float32,
    config: Config | None = None,
):
    """The kernel ``Config`` to run with, or None for the scan engine.

    ``kernel``: None (on a GPU where ``applies``), True (wherever it applies: interpreted off
    a GPU; ValueError where it does not), a ``Config`` (as True, with its launch choices) or
    False; checked (``check``)."""
    kernel = check(kernel)
    if kernel is False:
        return None
    if isinstance(kernel, Config):
        config, kernel = kernel, True
    why = blocker(problem, algorithm, directions, record_decisions, dtype)
    fits = why is None
    if kernel is True and not fits:
        raise ValueError(
            f"kernel=True: the fused kernel does not cover this run ({why}; see "
            f"jaxbco.fused); use kernel=None or False"
        )
    if not fits or (kernel is None and platform != "gpu"):
        return None
    config = config or Config()
    return config._replace(interpret=config.interpret or platform != "gpu")


def warn_fallback(err: Exception) -> None:
    """The one-line warning when the kernel fails to lower or compile."""
    first = str(err).strip().splitlines()[0][:200] if str(err).strip() else type(err).__name__
    warnings.warn(
        f"the fused GPU kernel failed to compile ({type(err).__name__}: {first}); "
        f"running the scan engine instead (kernel=False skips the attempt)",
        KernelWarning,
        stacklevel=3,
    )


def run_chunk(call, backend, fallback, carry):
    """One chunk, ``call(backend)``; where ``backend`` is the fused kernel and it fails to lower
    or compile (the donated ``carry`` is then still intact), a warning and ``call(fallback)``,
    the scan back-end, from then on.  Returns (carry, the back-end that ran)."""
    if backend == fallback:
        return call(backend), fallback
    try:
        return call(backend), backend
    except Exception as err:  # noqa: BLE001 (any failure of the kernel's lowering or compile)
        if any(
            leaf.is_deleted()
            for leaf in jax.tree_util.tree_leaves(carry)
            if isinstance(leaf, jax.Array)
        ):
            raise  # it ran and failed: nothing to fall back on
        warn_fallback(err)
        return call(fallback), fallback


def call_with_fallback(call, backend, fallback, traced: bool):
    """``call(backend)`` (``make_run``'s whole program); on concrete inputs, where the kernel
    fails to lower or compile, a warning and ``call(fallback)``."""
    if backend == fallback or traced:
        return call(backend)
    try:
        return call(backend)
    except Exception as err:  # noqa: BLE001 (the kernel failed to lower or compile)
        warn_fallback(err)
        return call(fallback)


def lower_for_cuda(
    problem,
    config: Config | None = None,
    seeds: int = 64,
    horizon: int = 40,
    dtype=jnp.float32,
    algorithm=None,
):
    """One chunk of ``problem`` (``algorithm``, by default Algorithm 1, with its default
    hyperparameters) through the kernel,
    lowered for NVIDIA GPUs on any machine (``jax.stages.Lowered``): Pallas' Triton lowering
    checks what the interpreter does not (supported primitives, power-of-two shapes).  For
    tests and ``benchmarks/kernel_sass.py``."""
    problem = cast(problem, dtype)
    algorithm = algorithm or RectifiedBCO(strongly_convex=problem.strongly_convex)
    hyper = grid(algorithm.default_hyper(problem, horizon), dtype)
    master, ids = checks.threefry_key(0), jnp.arange(seeds, dtype=jnp.uint32)
    cps = jnp.asarray([1, horizon], jnp.int32)
    shapes = jax.eval_shape(
        lambda: engine.start(problem, algorithm, hyper, master, ids, horizon, 2, True, False, None)
    )
    carry, x_star = jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)
    chunk = (problem, algorithm, hyper, master, ids, x_star, cps)
    step = jax.jit(lambda c, t0: launch(engine.Chunk(*chunk, horizon), c, t0, config or Config()))
    return step.trace(carry, jnp.int32(1)).lower(lowering_platforms=("cuda",))
