"""The checks of a run's inputs (``sweep``, ``run``, ``make_run``) before anything is
compiled: the kinds of the arguments, the resume path, the devices, the hyperparameters (the
algorithm's own class, one grid length, values the run's dtype can carry), the problem's
precision, and for a sweep the memory it will hold (``jaxbco.runner.memory``), refused with the numbers.
"""

from __future__ import annotations

import dataclasses
import os

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks
from jaxbco._src.shaping import SEED_PAD, log_checkpoints
from jaxbco.algorithms import AbstractAlgorithm, RectifiedBCO
from jaxbco.problem import Problem, check_row_scale, validate
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


def _check_hyper(hyper, algorithm, problem, horizon, dtype):
    """The algorithm's hyperparameters (its defaults for None), of its own type, with
    consistent grid lengths; returns (hyper, G)."""
    if hyper is None:
        hyper = algorithm.default_hyper(problem, horizon)
    check_hyper_values(hyper, algorithm, problem, dtype)
    return hyper, checks.check_grid(hyper, "hyper")


def check_hyper_values(hyper, algorithm, problem, dtype=None) -> None:
    """``sweep``'s and ``make_run``'s one check of hyperparameters: of the algorithm's own type;
    concrete values are re-validated (the class's field ranges, which a ``tree_map`` or
    ``eqx.tree_at`` bypasses, and the algorithm's ``check_hyper``); tracers pass."""
    cls = getattr(algorithm, "hyper_class", None)  # known without computing the defaults
    if cls is not None and not isinstance(hyper, cls):
        raise checks.KindError(
            f"hyper must be a {cls.__name__} for "
            f"{type(algorithm).__name__} (e.g. jaxbco.grid(...) or "
            f"theorem_defaults(...)); got {checks.describe(hyper)}"
        )
    checks.check_grid(hyper, "hyper")
    if checks.is_concrete(hyper) and dataclasses.is_dataclass(hyper):
        dataclasses.replace(hyper)  # runs the class's own checks (``__check_init__``) again
    algorithm.check_hyper(hyper, problem)
    _check_x1_in_shrunk_set(hyper, problem)
    _check_delta_normal(hyper, dtype)
    _check_step_reach(hyper, problem, dtype)


def _check_step_reach(hyper, problem, dtype) -> None:
    """The first prox step moves y = x_1 - g^_1 / alpha_1 up to (d / delta) / alpha_1 per unit
    of f's slope (the two-point estimate is at most d / delta times f's change over 2 delta);
    past the square root of the dtype's largest number, ||x - y||^2 overflows and every run
    stays at x_1 whatever alpha_scale is: refused, naming alpha_scale and the bound."""
    scale, delta = getattr(hyper, "alpha_scale", None), getattr(hyper, "delta", None)
    if dtype is None or scale is None or delta is None or not checks.is_concrete((scale, delta)):
        return
    limit = 1e-3 * float(np.sqrt(np.finfo(np.dtype(dtype)).max))
    reach = problem.domain.hull_dim / (
        np.asarray(delta, np.float64) * np.asarray(scale, np.float64)
    )
    if np.any(reach > limit):
        low = float(np.max(problem.domain.hull_dim / (np.asarray(delta, np.float64) * limit)))
        raise ValueError(
            f"alpha_scale must be at least {low:.3g} in {np.dtype(dtype).name} with delta = "
            f"{np.min(np.asarray(delta)):.3g}: the first step x_1 - g^_1 / alpha_1 would reach "
            f"(d / delta) / alpha_1 = {np.max(reach):.3g} units of f's slope, past "
            f"1e-3 sqrt(max) = {limit:.3g}, where squared distances overflow; got alpha_scale = "
            f"{np.min(np.asarray(scale)):.3g}"
        )


def _check_delta_normal(hyper, dtype) -> None:
    """A query radius delta below the smallest normal number of the run's dtype flushes to 0
    on the CPU, and every gradient estimate (d / 2 delta) (f(x + delta u) - f(x - delta u))
    becomes 0 / 0: refused before the run, not found as NaN on every seed after it."""
    delta = getattr(hyper, "delta", None)
    if dtype is None or delta is None or not checks.is_concrete(delta):
        return
    tiny = float(np.finfo(np.dtype(dtype)).tiny)
    small = np.asarray(delta, np.float64)
    if np.any(small < tiny):
        raise ValueError(
            f"delta must be at least {tiny:g} in {np.dtype(dtype).name} (smaller "
            f"values flush to zero and every gradient estimate divides by 0); got "
            f"{', '.join(f'{v:.3g}' for v in small[small < tiny])}"
        )


def _check_x1_in_shrunk_set(hyper, problem) -> None:
    """A given x1 must lie in (1 - xi) X for every setting's xi (round 1 queries x1 +- delta u,
    which stays in X only there); checked on concrete values of algorithms that shrink X."""
    xi = getattr(hyper, "xi", None)
    if problem.x1 is None or xi is None or not checks.is_concrete((xi, problem.x1)):
        return
    x1 = np.asarray(problem.x1, np.float64)
    c, _ = problem.domain.inscribed_ball()
    c = np.asarray(c, np.float64)
    for value in np.unique(np.asarray(xi, np.float64).ravel()):
        # x1 in (1 - xi) X  <=>  c + (x1 - c) / (1 - xi) in X
        z = c + (x1 - c) / (1.0 - value)
        dist = float(
            np.linalg.norm(np.asarray(problem.domain.project(jnp.asarray(z)), np.float64) - z)
        )
        if dist > 1e-6 * (1.0 + float(np.linalg.norm(z))):
            raise ValueError(
                f"x1 must lie in the shrunk set (1 - xi) X for xi = {value:g} (round "
                f"1 queries x1 +- delta u, which stay in X only there); it lies "
                f"{dist * (1.0 - value):.3g} outside it: move x1 towards the centre "
                f"or use a smaller xi"
            )


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
    checkpoints = checks.check_checkpoints(
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
    """``sweep``'s inputs, checked in order (cheap checks first, the memory estimate last):
    (n_seeds, master key, scan_unroll, (horizon, algorithm, checkpoints, dtype), hyper, G,
    devices)."""

    check_run_kinds(problem, algorithm, comparator, record_decisions, progress, resume)
    n_seeds = checks.check_seed_count(seeds)
    master = checks.check_key(key)
    scan_unroll = checks.check_positive_int("scan_unroll", scan_unroll)
    checked = validated(problem, horizon, algorithm, checkpoints, dtype)
    horizon, algorithm, checkpoints, dtype = checked
    hyper, n_grid = _check_hyper(hyper, algorithm, problem, horizon, dtype)
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
    return n_seeds, master, scan_unroll, checked, hyper, n_grid, devices
