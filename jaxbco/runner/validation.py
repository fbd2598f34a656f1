"""The checks of a run's inputs (``sweep``, ``run``, ``make_run``) before anything is
compiled: the kinds of the arguments, the resume path, the devices, the hyperparameters (the
algorithm's own class, one grid length, values the run's dtype can carry), the problem's
precision, and for a sweep the memory it will hold (``jaxbco.runner.memory``), refused with the numbers.
"""

from __future__ import annotations

import os

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks
from jaxbco._src.shaping import SEED_PAD, log_checkpoints
from jaxbco.algorithms import AbstractAlgorithm, RectifiedBCO
from jaxbco.comparator import optimum as _optimum
from jaxbco.problem import Problem, check_row_scale, validate
from jaxbco.runner.algorithm_shapes import check_algorithm_shapes
from jaxbco.runner.hyper_values import check_hyper, check_hyper_values
from jaxbco.runner.memory import check_memory, memory_estimate, memory_limit, run_sizes


def check_run_kinds(problem, algorithm, comparator, record_decisions, progress, resume):
    hint = (
        " (use jaxbco.problems.make(name) for a registered problem)"
        if isinstance(problem, str)
        else ""
    )
    checks.check_kind("problem", problem, Problem, "a jaxbco.Problem", hint)
    if algorithm is not None:
        checks.check_kind(
            "algorithm",
            algorithm,
            AbstractAlgorithm,
            "a jaxbco.algorithms algorithm (RectifiedBCO(), FlaxmanBGD(), ...)",
        )
    checks.check_bool("comparator", comparator)
    checks.check_bool("record_decisions", record_decisions)
    if progress is not None:
        checks.check_bool("progress", progress)
    if resume is not None:
        checks.check_kind("resume", resume, (str, os.PathLike), "a file path (str) or None")
        _check_resume_path(os.fspath(resume))


def _check_resume_path(path: str) -> None:
    """The state file's path: not empty, not a folder, in a folder that exists."""
    if not path:
        raise ValueError(
            "resume must be the path of a state file (written after every chunk, "
            "continued from when it exists); got ''"
        )
    if os.path.isdir(path):
        raise ValueError(
            f"resume file {path!r} is a folder, not a state file; remove or rename "
            f"it, or choose another path"
        )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(
            f"resume file {path!r}: its folder {folder!r} does not exist; create it "
            f"or choose another path"
        )


def _check_devices(devices):
    """None (all local devices) or a non-empty list of distinct jax devices."""
    if devices is None:
        return None
    if isinstance(devices, (str, bytes)) or not hasattr(devices, "__iter__"):
        raise checks.KindError(
            f"devices must be a list of jax devices (e.g. jax.local_devices()) "
            f"or None; got {checks.describe(devices)}"
        )
    devices = list(devices)
    if not devices:
        raise ValueError(
            "devices must be a non-empty list of jax devices (or None for all local "
            "devices); got []"
        )
    for dev in devices:
        if not isinstance(dev, jax.Device):
            raise checks.KindError(
                f"devices must be a list of jax devices (e.g. "
                f"jax.local_devices()); got an item {checks.describe(dev)}"
            )
    if len(set(devices)) < len(devices):
        raise ValueError(f"devices must be distinct; got {devices}")
    return devices


def check_precision_of(problem) -> None:
    """A problem built with 64-bit JAX on holds float64 arrays; run with it off, JAX cannot
    draw its data (a dtype error deep in the sampler): refused first, naming the switch."""
    if jax.config.jax_enable_x64:
        return
    wide = [
        leaf
        for leaf in jax.tree_util.tree_leaves(problem)
        if eqx.is_array(leaf)
        and jnp.issubdtype(leaf.dtype, jnp.floating)
        and jnp.dtype(leaf.dtype).itemsize == 8
    ]
    if wide:
        raise ValueError(
            "problem holds float64 arrays (it was built with 64-bit JAX on) but 64-bit JAX is "
            "off now: build it with x64 off to run in float32, or run it with x64 on "
            "(jax.config.update('jax_enable_x64', True) or `with jax.enable_x64(True):`)"
        )


def validated(problem, horizon, algorithm, checkpoints, dtype):
    """(horizon, algorithm, checkpoints, dtype), each checked (``problem.validate``)."""
    dtype = checks.check_dtype(dtype)
    horizon = checks.check_horizon(horizon)
    check_precision_of(problem)
    validate(problem, horizon)
    check_row_scale(problem, horizon, dtype)
    algorithm = RectifiedBCO() if algorithm is None else algorithm
    checkpoints = check_checkpoints(
        log_checkpoints(horizon) if checkpoints is None else checkpoints, horizon
    )
    return horizon, algorithm, checkpoints, dtype


def check_sweep(
    problem,
    horizon,
    hyper,
    seeds,
    key,
    algorithm,
    checkpoints,
    dtype,
    directions,
    comparator,
    record_decisions,
    chunk,
    progress,
    resume,
    devices,
    scan_unroll,
):
    """``sweep``'s inputs, checked in order (cheap checks first, the memory estimate, then the
    seed ids and the replayed directions): (master key, scan_unroll, (horizon, algorithm,
    checkpoints, dtype), hyper, G, devices, seed ids, directions)."""

    check_run_kinds(problem, algorithm, comparator, record_decisions, progress, resume)
    n_seeds = check_seed_count(seeds)
    master = checks.check_key(key)
    scan_unroll = checks.check_positive_int("scan_unroll", scan_unroll)
    checked = validated(problem, horizon, algorithm, checkpoints, dtype)
    horizon, algorithm, checkpoints, dtype = checked
    hyper, n_grid = check_hyper(hyper, algorithm, problem, horizon, dtype)
    check_algorithm_shapes(problem, algorithm, hyper)
    if chunk is not None:
        checks.check_positive_int("chunk", chunk)
    devices = _check_devices(devices)
    lanes = SEED_PAD * max(1, len(jax.local_devices() if devices is None else devices))
    estimate = memory_estimate(
        problem,
        n_grid,
        -(-n_seeds // lanes) * lanes,
        len(checkpoints),
        run_sizes(problem, algorithm, hyper),
        itemsize=np.dtype(dtype).itemsize,
        record_decisions=record_decisions,
        directions=0 if directions is None else int(np.size(directions)),
        comparator=comparator,
    )
    check_memory(
        estimate,
        memory_limit(devices),
        f"G = {n_grid} settings x S = {n_seeds} seeds x K = {len(checkpoints)} "
        f"checkpoints, d = {problem.dim}" + (", decisions recorded" if record_decisions else ""),
    )
    seed_ids = check_seed_ids(seeds)
    if directions is not None:
        directions = check_directions(directions, problem, horizon, seed_ids.size, dtype)
    return master, scan_unroll, checked, hyper, n_grid, devices, seed_ids, directions


def check_optimum(optimum, comparator, problem, words, seed_ids, horizon, dtype) -> None:
    """``sweep``'s ``optimum``: an ``Optimum`` of this run's (cast) problem, key, seeds, T and
    dtype, with the comparator on."""
    if not isinstance(optimum, _optimum.Optimum):
        raise checks.KindError(
            f"optimum must be a jaxbco.comparator.Optimum (an earlier run's Result.optimum) "
            f"or None; got {checks.describe(optimum)}"
        )
    if not comparator:
        raise ValueError("optimum is given but comparator=False: pass one or the other")
    optimum.check(problem=problem, key=words, seed_ids=seed_ids, horizon=horizon, dtype=str(dtype))


def check_make_run(
    problem, horizon, algorithm, checkpoints, dtype, comparator, seed_pad, scan_unroll
):
    """``make_run``'s inputs, checked once when it is built: ((horizon, algorithm, checkpoints,
    dtype), scan_unroll)."""
    check_run_kinds(problem, algorithm, comparator, False, None, None)
    checks.check_bool("seed_pad", seed_pad)
    scan_unroll = checks.check_positive_int("scan_unroll", scan_unroll)
    return validated(problem, horizon, algorithm, checkpoints, dtype), scan_unroll


def check_call(key, hyper, seed_ids, problem, algorithm, setup, comparator, sizes, lanes, limit):
    """A call of ``make_run``'s function, checked as ``sweep`` checks its inputs (values only
    where they are concrete): (master key, G).  ``problem``, ``algorithm``: as given (checked);
    ``setup``: ``whole_run.Setup``; ``sizes``: ``memory.run_sizes``; ``lanes``: the seed
    padding; ``limit``: ``memory.memory_limit()``."""
    key = checks.check_key(key)
    check_hyper_values(hyper, algorithm, problem, setup.dtype)
    n_grid = checks.check_grid(hyper, "hyper")
    if checks.is_concrete(seed_ids):
        check_seed_ids(np.asarray(seed_ids))
    n_seeds = int(np.shape(seed_ids)[0]) if np.ndim(seed_ids) == 1 else 0
    n_cps = len(setup.checkpoints)
    estimate = memory_estimate(
        problem,
        n_grid,
        -(-n_seeds // lanes) * lanes,
        n_cps,
        sizes,
        itemsize=np.dtype(setup.dtype).itemsize,
        comparator=comparator,
    )
    check_memory(
        estimate,
        limit,
        f"G = {n_grid} settings x S = {n_seeds} seeds x K = {n_cps} checkpoints, d = {problem.dim}",
    )
    return key, n_grid


# The run's own inputs: checkpoints, replayed directions, seeds.


def check_checkpoints(checkpoints, horizon) -> np.ndarray:
    try:
        cps = np.asarray(checkpoints)
    except (TypeError, ValueError):
        raise checks.KindError(
            f"checkpoints must be a non-empty 1-D array of integer rounds; got "
            f"{checks.describe(checkpoints)}"
        ) from None
    if cps.ndim != 1 or cps.size == 0 or not np.issubdtype(cps.dtype, np.integer):
        raise ValueError(
            f"checkpoints must be a non-empty 1-D array of integer rounds; got "
            f"shape {cps.shape}, dtype {cps.dtype}"
        )
    if np.any(np.diff(cps) <= 0) or cps[0] < 1 or cps[-1] > horizon:
        bad = (
            "not strictly increasing"
            if np.any(np.diff(cps) <= 0)
            else f"first {int(cps[0])}, last {int(cps[-1])}"
        )
        raise ValueError(
            f"checkpoints must be strictly increasing rounds in [1, {horizon}] "
            f"(the horizon T); got {bad}"
        )
    return cps.astype(np.int32)


def check_directions(directions, problem, horizon, n_seeds, dtype):
    try:
        u = np.asarray(directions, dtype=np.float64)
    except (TypeError, ValueError):
        raise checks.KindError(
            f"directions must be an array of unit vectors; got {checks.describe(directions)}"
        ) from None
    d = problem.dim
    ok_shapes = [(horizon, d), (n_seeds, horizon, d)]
    if u.shape not in ok_shapes:
        raise ValueError(
            f"directions must have shape (T, d) = {ok_shapes[0]} or (seeds, T, d) = "
            f"{ok_shapes[1]}; got {u.shape}"
        )
    if not np.all(np.isfinite(u)):
        raise ValueError("directions must be finite (no NaN or inf)")
    tol = 1e-5 if dtype == jnp.float32 else 1e-10
    norms = np.linalg.norm(u, axis=-1)
    if np.max(np.abs(norms - 1.0)) > tol:
        raise ValueError(
            f"directions must be unit vectors: | ||u_t|| - 1 | must lie in [0, {tol:g}]; "
            f"max deviation {np.max(np.abs(norms - 1.0)):.3g}"
        )
    if problem.domain.hull_dim < d:
        off = np.max(np.abs(u.sum(-1)))
        if off > tol * np.sqrt(d):
            raise ValueError(
                f"directions must lie in the simplex's hull directions (sum u = 0); "
                f"max |sum u| = {off:.3g}"
            )
    return jnp.asarray(u, dtype)


_SEEDS = (
    "seeds must be an integer >= 1 and <= 2^32 (a count) or a non-empty 1-D array of "
    "distinct integer ids in [0, 2^32)"
)


def check_seed_count(seeds) -> int:
    """The number of seeds S, without building the ids (``seeds``: a count or ids)."""
    if isinstance(seeds, bool):
        raise checks.KindError(f"{_SEEDS}; got {checks.describe(seeds)}")
    if isinstance(seeds, (int, np.integer)):
        if not 1 <= seeds <= checks.MAX_SEEDS:
            raise ValueError(f"{_SEEDS}; got {int(seeds)}")
        return int(seeds)
    if isinstance(seeds, (float, np.floating, str)) or seeds is None:
        raise checks.KindError(f"{_SEEDS}; got {checks.describe(seeds)}")
    return int(np.size(seeds))


def check_seed_ids(seeds, name: str = "seeds") -> np.ndarray:
    """Seed ids (S,): ``range(seeds)`` for a count, else the given ids, each in
    [0, 2^32) and none twice (a repeated id would be the same run counted twice)."""
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        return np.arange(check_seed_count(seeds))
    check_seed_count(seeds)
    try:
        seed_ids = np.asarray(seeds)
    except (TypeError, ValueError):
        raise checks.KindError(f"{_SEEDS}; got {checks.describe(seeds)}") from None
    if seed_ids.ndim != 1 or seed_ids.size < 1 or not np.issubdtype(seed_ids.dtype, np.integer):
        raise ValueError(
            f"{_SEEDS}; got an array of shape {seed_ids.shape}, dtype {seed_ids.dtype}"
        )
    if np.any(seed_ids < 0) or np.any(seed_ids >= checks.MAX_SEEDS):
        bad = seed_ids[(seed_ids < 0) | (seed_ids >= checks.MAX_SEEDS)]
        raise ValueError(f"seed ids ({name}) must lie in [0, 2^32); got {bad[:5].tolist()}")
    uniq, counts = np.unique(seed_ids, return_counts=True)
    if uniq.size < seed_ids.size:
        dup = uniq[counts > 1]
        raise ValueError(
            f"seed ids ({name}) must be distinct (a repeated id is the same run "
            f"counted twice); got {dup[:5].tolist()} more than once"
        )
    return seed_ids
