"""The fused round loop: a chunk of rounds as one Pallas kernel on a GPU (``kernel.py``).

On a GPU the scan engine is launch-bound (a round is ~20 small kernels); this runs all of a
chunk's rounds in one kernel whose program instances each own B seeds of one setting, with
their state in registers.  ``sweep`` and ``make_run`` choose it by themselves (``kernel=None``)
on a GPU for the problems it covers (``applies``); ``kernel=False`` keeps the scan engine,
``kernel=True`` asks for it anywhere (on a CPU through Pallas' interpreter: slow, for tests).
It computes what the scan engine computes (the same round code, ``engine.one_run``, and the
same random streams), so results agree to float32 round-off; where the kernel fails to lower
or compile, the run falls back to the scan engine with a ``KernelWarning``.

Covered: every run whose components declare ``kernel = True`` (``jaxbco._src.blocks``: their
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

import functools
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import engine
from jaxbco._src import blocks, checks
from jaxbco._src.shaping import cast, grid
from jaxbco.algorithms import RectifiedBCO
from jaxbco.engine import Acc, Carry
from jaxbco.fused import padding
from jaxbco.fused.kernel import Config, Spec, body, input_kinds
from jaxbco.fused.padding import padded_problem, pow2
from jaxbco.keys import seed_keys

__all__ = [
    "Config",
    "KernelWarning",
    "advance",
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
    declares ``kernel`` (``jaxbco._src.blocks.blocker``), the set has a padded
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


def run_chunk(advance, chunk, fallback, carry, t, u):
    """One chunk, ``advance(chunk, carry, t, u)`` on ``chunk.backend`` (``devices.ChunkInputs``);
    where that is the fused kernel and it fails to lower or compile (the carry is then still
    intact), a warning and the scan back-end ``fallback`` from then on.  Returns (carry, the
    back-end that ran)."""
    if chunk.backend == fallback:
        return advance(chunk, carry, t, u), fallback
    try:
        return advance(chunk, carry, t, u), chunk.backend
    except Exception as err:  # noqa: BLE001 (any failure of the kernel's lowering or compile)
        if any(
            leaf.is_deleted()
            for leaf in jax.tree_util.tree_leaves(carry)
            if isinstance(leaf, jax.Array)
        ):
            raise  # it ran and failed: nothing to fall back on
        warn_fallback(err)
        return advance(chunk._replace(backend=fallback), carry, t, u), fallback


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


def _pad_seeds(a, S_pad: int, axis: int):
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, S_pad - a.shape[axis])
    return jnp.pad(a, widths, mode="edge")


def _vec_minor(a, P: int, S_pad: int):
    """(..., S, d) -> (..., P, S_pad): coordinates padded with zeros, seeds minor."""
    a = jnp.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, P - a.shape[-1])])
    return _pad_seeds(jnp.swapaxes(a, -1, -2), S_pad, a.ndim - 1)


def _state_minor(a, d: int, P: int, S_pad: int):
    """A state leaf (G, S, k) seeds-minor: a coordinate vector (k = d) padded to P rows, other
    vectors (an algorithm's k multipliers, say) as they are where k is a power of two."""
    if a.shape[-1] == d:
        return _vec_minor(a, P, S_pad)
    if a.ndim != 3 or pow2(a.shape[-1]) != a.shape[-1]:
        raise ValueError(
            f"the fused kernel takes state vectors of length d = {d} or a power of "
            f"two; got a state leaf of shape {a.shape[2:]} per run"
        )
    return _pad_seeds(jnp.swapaxes(a, -1, -2), S_pad, 2)


def _vec_major(a, d: int, S: int):
    return jnp.swapaxes(a[..., :d, :S], -1, -2)


def advance(
    problem,
    algorithm,
    hyper,
    master,
    seed_ids,
    x_star,
    carry,
    t0,
    length: int,
    checkpoints,
    config: Config,
):
    """Rounds t0 .. t0 + length - 1 as one kernel launch (``backends.FusedKernel``)."""
    n_grid, S = carry.failed.shape
    d = problem.dim
    P = max(2, pow2(d))
    B = config.block  # not shrunk for small batches: the same program for every batch
    S_pad = -(-S // B) * B
    stream = carry.sums != ()
    per_seed = lambda a: _pad_seeds(a, S_pad, a.ndim - 1)
    per_run = lambda a: _pad_seeds(a, S_pad, 1) if a.ndim == 2 else _state_minor(a, d, P, S_pad)
    seed_data = lambda a: per_seed(a) if a.ndim == 1 else _vec_minor(a, P, S_pad)  # (S,) or (S, d)
    phi_leaves, phi_def = jax.tree_util.tree_flatten(carry.phi)
    phi_def = phi_def if phi_leaves else None  # shared constraint data: sampled in the kernel

    parr, pstatic = eqx.partition(padded_problem(problem, P), eqx.is_array)
    pleaves, pdef = jax.tree_util.tree_flatten(parr)
    hleaves, hdef = jax.tree_util.tree_flatten(hyper)
    sleaves, sdef = jax.tree_util.tree_flatten(carry.states)
    words = jax.random.key_data(seed_keys(master, seed_ids))
    spec = Spec(
        (pdef, pstatic),
        hdef,
        sdef,
        d,
        P,
        B,
        length,
        int(checkpoints.shape[0]),
        stream,
        phi_def,
        config.prefetch,
        min(config.unroll, length),
    )
    cps = jnp.asarray(checkpoints, jnp.int32)
    inputs = (
        [a.reshape(1) if a.ndim == 0 else a for a in pleaves]
        + list(hleaves)
        + [jnp.asarray(t0, jnp.int32).reshape(1), cps, per_seed(words[:, 0]), per_seed(words[:, 1])]
        + ([] if stream else [_vec_minor(x_star, P, S_pad)])
        + [per_run(a) for a in sleaves + list(carry.acc)]
        + [per_run(carry.failed.astype(jnp.int32)), per_run(carry.failed_round)]
        + [seed_data(a) for a in phi_leaves]
        + ([_vec_minor(carry.sums[0], P, S_pad), per_seed(carry.sums[1])] if stream else [])
        + [_pad_seeds(carry.bufs, S_pad, 3)]
        + ([_vec_minor(carry.sbuf[0], P, S_pad), per_seed(carry.sbuf[1])] if stream else [])
    )
    kinds = input_kinds(spec)
    assert len(kinds) == len(inputs)
    outputs = [i for i, k in enumerate(kinds) if k in "rsa" and i >= kinds.index("r")]
    out_shape = [jax.ShapeDtypeStruct(inputs[i].shape, inputs[i].dtype) for i in outputs]
    call = pl_call(
        spec,
        algorithm,
        config,
        out_shape,
        {i: n for n, i in enumerate(outputs)},
        (n_grid, S_pad // B),
    )
    outs = call(*inputs)
    it = iter(outs)
    take = lambda n: [next(it) for _ in range(n)]
    run_back = lambda a: a[:, :S] if a.ndim == 2 else _vec_major(a, d, S)
    states = jax.tree_util.tree_unflatten(
        sdef,
        [
            run_back(a) if a.ndim == 2 or old.shape[-1] == d else jnp.swapaxes(a[..., :S], -1, -2)
            for a, old in zip(take(len(sleaves)), sleaves)
        ],
    )
    acc = Acc(*[run_back(a) for a in take(4)])
    failed, failed_round = [run_back(a) for a in take(2)]
    seed_back = lambda a: a[:S] if a.ndim == 1 else _vec_major(a, d, S)
    phi = (
        jax.tree_util.tree_unflatten(phi_def, [seed_back(a) for a in take(len(phi_leaves))])
        if phi_leaves
        else carry.phi
    )
    sums = (_vec_major(next(it), d, S), next(it)[:S]) if stream else ()
    bufs = next(it)[..., :S]
    sbuf = (_vec_major(next(it), d, S), next(it)[..., :S]) if stream else ()
    hits = jnp.sum((cps >= t0) & (cps < t0 + length)).astype(carry.idx.dtype)
    return Carry(
        states, phi, acc, failed != 0, failed_round, bufs, carry.xbuf, carry.idx + hits, sums, sbuf
    )


def pl_call(spec, algorithm, config: Config, out_shape, aliases, grid):
    """The ``pallas_call`` (Triton on NVIDIA GPUs; interpreted where ``config.interpret``)."""
    from jax.experimental import pallas as pl

    params = {}
    if not config.interpret:
        from jax.experimental.pallas import triton as plgpu

        params["compiler_params"] = plgpu.CompilerParams(num_warps=config.warps, num_stages=1)
    return pl.pallas_call(
        functools.partial(body, spec, algorithm),
        out_shape=out_shape,
        grid=grid,
        input_output_aliases=aliases,
        interpret=config.interpret,
        name="jaxbco_rounds",
        **params,
    )


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
    master, ids = jax.random.key(0), jnp.arange(seeds, dtype=jnp.uint32)
    cps = jnp.asarray([1, horizon], jnp.int32)
    shapes = jax.eval_shape(
        lambda: engine.start(problem, algorithm, hyper, master, ids, horizon, 2, True, False, None)
    )
    carry, x_star = jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)
    step = jax.jit(
        lambda c, t0: advance(
            problem, algorithm, hyper, master, ids, x_star, c, t0, horizon, cps, config or Config()
        )
    )
    return step.trace(carry, jnp.int32(1)).lower(lowering_platforms=("cuda",))
