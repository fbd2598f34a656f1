"""Running studies: validate the inputs, then drive the engine (``jaxbco.engine``).

``sweep`` runs a grid of G hyperparameter settings x S seeds for T rounds (chunks of rounds,
devices, resume, progress); ``run`` is one setting and one seed; ``make_run`` gives the whole
run as one jitted function of (key, hyperparameters, seed ids), to transform.  Both reach
the scan through the same three steps, ``engine.start`` -> ``engine.advance`` ->
``engine.finish`` (``sweep`` one ``advance`` per chunk, sharded over devices; ``make_run``
one over all T), after the same validation, casting, grid broadcasting and seed padding.
Per-seed keys are fold_in(master, seed_id), so a seed's result never depends on its batch.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import _checks, _progress, _run_inputs, _xla, engine, fused, plan, programs
from jaxbco import certificate as _certificate
from jaxbco import devices as _devices
from jaxbco import resume as _resume
from jaxbco.algorithms import AbstractAlgorithm
from jaxbco.comparator import check_supported, fixed_optimum
from jaxbco.engine import METRICS, TRACES  # noqa: F401  (part of this module's interface)
from jaxbco.hyper import Hyper
from jaxbco.problem import Problem, check_feasible
from jaxbco.run_result import Result
from jaxbco.solvers import gap as _gap

SEED_PAD = _run_inputs.SEED_PAD  # seeds are padded to a multiple of this (see there)
log_checkpoints = _run_inputs.log_checkpoints
_cast = _run_inputs.cast

class _Setup(NamedTuple):
    """Validated, cast inputs shared by ``sweep`` and ``make_run``."""

    problem: Problem  # cast to dtype
    algorithm: AbstractAlgorithm  # cast to dtype
    horizon: int
    checkpoints: np.ndarray
    dtype: np.dtype
    x_star_given: object  # a seed-independent x* (``comparator.fixed_optimum``) or None


def _setup(problem, horizon, algorithm, checkpoints, dtype, comparator, validated=None) -> _Setup:
    horizon, algorithm, checkpoints, dtype = validated or _run_inputs.validated(
        problem, horizon, algorithm, checkpoints, dtype)
    problem_c, algorithm_c = _cast((problem, algorithm), dtype)
    given = fixed_optimum(problem, horizon) if comparator else None
    if comparator:
        check_supported(problem, horizon)
    return _Setup(problem_c, algorithm_c, horizon, checkpoints, dtype, given)


@functools.cache
def _jitted(options: tuple):
    """(start, advance, finish) sharded over the seeds (``jaxbco.devices``) and compiled with
    XLA options (``jaxbco._xla``).  The carry is donated: a chunk overwrites the previous
    chunk's buffers in place.  ``finish`` is two programs: the comparator's part, compiled
    once per problem and shared by every algorithm run on it, and the final decisions."""
    kw = {"compiler_options": dict(options)} if options else {}
    comparator_part = eqx.filter_jit(_devices.finish_comparator, **kw)
    certify = eqx.filter_jit(_devices.certify_comparator, **kw)
    decisions = eqx.filter_jit(_devices.final_decisions, **kw)

    def finish(mesh, problem, algorithm, carry, x_star, checkpoints, horizon):
        bufs, x_star = comparator_part(mesh, problem, carry.bufs, carry.sums, carry.sbuf, x_star,
                                       checkpoints, horizon)
        return (bufs, x_star) + tuple(decisions(mesh, algorithm, carry.states))

    return (eqx.filter_jit(_devices.start, **kw),
            eqx.filter_jit(_devices.advance, donate="all-except-first", **kw), finish, certify)


def sweep(problem: Problem, horizon: int, hyper: Hyper | None = None, *, seeds=1, key=0,
          algorithm: AbstractAlgorithm | None = None, checkpoints=None, dtype="float32",
          directions=None, comparator: bool = True, record_decisions: bool = False,
          chunk: int | None = None, progress: bool | None = None, resume: str | None = None,
          devices=None, scan_unroll: int = 1, kernel: bool | None = None) -> Result:
    """Run every hyperparameter setting in ``hyper`` (leading grid axis, or none) on every seed.

    seeds: a count S (ids 0..S-1) or an array of seed ids; key: an int or a typed
    ``jax.random.key`` (the master key); checkpoints: rounds to record (default: about 100
    log-spaced); directions: replayed u_t, shape (T, d) or (S, T, d); comparator=False skips
    x* (regret is then measured against x_1); record_decisions keeps x_t at the checkpoints.

    Long runs: ``chunk`` rounds per compiled call (default: all T, or about T/100 when
    ``progress`` or ``resume`` asks for chunks), the carry donated from chunk to chunk;
    ``progress`` shows a tqdm bar (rounds/s, ETA; default: only on a terminal for runs of
    over 1e8 seed-rounds; during the comparator pass it shows the elapsed time); ``resume``: a
    state file written atomically after every chunk and continued from if it exists (same
    configuration and versions, else ValueError); ``wall_s`` then totals every session.  Any
    chunking gives bitwise the same result (on one engine: the fused kernel and the scan engine
    agree to round-off).  ``devices``: devices to shard the seeds over (default: all local
    devices); bitwise the same as one device (scan engine; the fused kernel interpreted on CPU
    devices agrees to round-off).  A new hyperparameter value
    or problem data of the same shapes never recompiles.  ``scan_unroll``: rounds per
    iteration of the round scan (a compile-time choice; the same numbers up to round-off).
    ``kernel`` (``jaxbco.fused``): None runs the fused round-loop kernel on a GPU where it
    covers the run, False never, True wherever it does (interpreted off a GPU); the scan
    engine's numbers to round-off; a ``fused.KernelWarning`` and the scan engine if it fails.

    Every input is checked before anything compiles (ValueError, or TypeError for a wrong
    kind, naming the parameter, its range and the value): ``problem.validate``, the grid
    lengths, seed ids (distinct, in [0, 2^32)), the key, a memory estimate against the
    machine (``memory_estimate``), and the rounds' feasibility (``problem.check_feasible``:
    where it cannot be decided, a ``FeasibilityWarning`` and ``Result.feasibility_undecided``).
    """
    n_seeds, master, scan_unroll, validated, hyper, n_grid, devices = _run_inputs.check_sweep(
        problem, horizon, hyper, seeds, key, algorithm, checkpoints, dtype, directions, comparator,
        record_decisions, chunk, progress, resume, devices, scan_unroll)
    horizon, algorithm, checkpoints, dtype = validated
    config = fused.choose(kernel, (jax.local_devices() if devices is None else devices)[0].platform,
                          problem, algorithm, directions, record_decisions, dtype)
    seed_ids = _checks.check_seed_ids(seeds)
    if directions is not None:
        directions = _checks.check_directions(directions, problem, horizon, seed_ids.size, dtype)
    undecided = check_feasible(problem, horizon, getattr(hyper, "xi", 0.0), comparator)
    setup = _setup(problem, horizon, algorithm, checkpoints, dtype, comparator, validated)
    hyper = _run_inputs.grid(hyper)
    hyper_c = _cast(hyper, dtype)
    start, advance, finish, certify = _jitted(_xla.options())
    mesh = _devices.seed_mesh(devices)
    n_seeds = seed_ids.size
    padded = np.asarray(_run_inputs.pad_seeds(seed_ids, SEED_PAD * _devices.n_devices(mesh)))
    if directions is not None and directions.ndim == 3:
        directions = jnp.concatenate(
            [directions, jnp.broadcast_to(directions[-1:], (padded.size - n_seeds,) + directions.shape[1:])])
        directions = jnp.swapaxes(directions, 0, 1)  # (T, S, d)
    if progress is None:
        progress = sys.stderr.isatty() and n_grid * padded.size * horizon > 1e8
    length = _run_inputs.chunk_length(chunk, horizon, bool(progress) or resume is not None)
    ids = _devices.put(jnp.asarray(padded, jnp.uint32), mesh, _devices.SPEC_S)
    cps = jnp.asarray(checkpoints)
    start_args = (mesh, setup.problem, setup.algorithm, hyper_c, master, ids, horizon, cps.shape[0],
                  comparator, record_decisions, setup.x_star_given)
    config_hash = None
    with plan.CompileClock() as clock:  # trace and compile time of this session
        begin = time.perf_counter()
        state = None
        if resume is not None:
            config_hash = _resume.fingerprint((setup.problem, setup.algorithm, hyper_c, master, padded,
                                               horizon, checkpoints, str(dtype), comparator,
                                               record_decisions, directions))
            if os.path.exists(resume):
                # shapes only: no compile (and no trace counted)
                like = jax.eval_shape(lambda: _devices.start(*start_args)[0])
                engine.TRACES["simulate"] -= 1
                state = _resume.load(resume, like, config_hash, with_wall=True)
        earlier = 0.0 if state is None else state[3]  # wall time of the earlier sessions
        t_done = 0 if state is None else state[2] - 1
        bar = _progress.bar(horizon, t_done, f"{n_grid * n_seeds} runs", bool(progress))
        if state is None:
            with _progress.comparator_progress(bar if progress and comparator else None, n_seeds, horizon):
                carry, x_star = start(*start_args)
                if progress:
                    x_star.block_until_ready()
            t_next = 1
            if resume is not None:  # keep the comparator pass (minutes at 1e4 seeds x 1e5 rounds)
                _resume.save(resume, carry, x_star, t_next, config_hash,
                             time.perf_counter() - begin)
        else:
            leaves, x_star, t_next = state[:3]
            carry = jax.tree_util.tree_map(
                lambda spec, part: jax.tree_util.tree_map(lambda a: _devices.put(jnp.asarray(a), mesh, spec), part),
                _devices.CARRY_SPECS, leaves, is_leaf=lambda x: isinstance(x, jax.sharding.PartitionSpec))
            x_star = _devices.put(jnp.asarray(x_star), mesh, _devices.SPEC_S)
        fixed = (mesh, setup.problem, setup.algorithm, hyper_c, master, ids, x_star, cps)
        with bar:
            while t_next <= horizon:
                # A shorter last chunk (T mod chunk rounds) compiles once more: only shapes are static.
                done = min(length, horizon - t_next + 1)
                u = None if directions is None else directions[t_next - 1:t_next - 1 + done]
                carry, config = fused.run_chunk(advance, fixed + (done, scan_unroll), config, carry,
                                                jnp.asarray(t_next, jnp.int32), u)
                t_next += done
                if resume is not None:
                    _resume.save(resume, carry, x_star, t_next, config_hash,
                                 earlier + time.perf_counter() - begin)
                elif progress:
                    carry.idx.block_until_ready()
                bar.update(done)
        bufs, x_star, x_final, prox = finish(mesh, setup.problem, setup.algorithm, carry, x_star, cps,
                                             horizon)
        # The certificate on one device, unsharded: its least squares (LAPACK) in a shard_map
        # over 4 CPU devices on 2 cores hung (tests/test_long_runs.py, 3 of 3 tries)
        one = lambda tree: jax.tree_util.tree_map(
            lambda a: jax.device_put(a, jax.local_devices()[0]), tree)
        cert = (certify(None, setup.problem, master, *one((ids, x_star, carry.sums)), horizon,
                        setup.x_star_given is not None) if comparator else None)
        out = jax.block_until_ready(engine.Outcome(bufs, carry.failed, carry.failed_round, x_star,
                                                   x_final, carry.xbuf, prox))
        cert = jax.device_get(cert)
        session = time.perf_counter() - begin
    wall = earlier + session  # all sessions of a resumed run
    bufs, failed, failed_round, x_star, x_final, xbuf, prox = jax.device_get(out)
    bufs, xbuf = bufs[..., :n_seeds], xbuf[:, :, :n_seeds]
    failed, failed_round = failed[:, :n_seeds], failed_round[:, :n_seeds]
    x_star, x_final = x_star[:n_seeds], x_final[:, :n_seeds]
    decisions = np.moveaxis(np.asarray(xbuf), 0, 2) if record_decisions else None
    paths = _path_fields(problem, algorithm, horizon, comparator, config)
    certified = _certificate.report(cert, n_seeds, seed_ids, dtype, problem, paths["comparator_method"])
    certified.update(_gap.report(prox, n_seeds, seed_ids, dtype, paths["prox_method"], failed))
    curves = {m: np.asarray(bufs[i]).transpose(1, 2, 0) for i, m in enumerate(METRICS)}
    return Result(rounds=checkpoints, failed=np.asarray(failed),
                  failed_round=np.asarray(failed_round), x_star=np.asarray(x_star),
                  x_final=np.asarray(x_final), decisions=decisions, seed_ids=seed_ids, hyper=hyper,
                  horizon=horizon, dtype=str(dtype), wall_s=wall, feasibility_undecided=undecided,
                  compile_s=clock.seconds, **certified,
                  seed_rounds_per_s=plan.speed(n_grid * n_seeds * (horizon - t_done), session,
                                               clock.seconds),
                  **paths, **curves)


def _path_fields(problem, algorithm, horizon, comparator, config) -> dict:
    """``Result.engine``, ``engine_reason``, ``prox_method`` and ``comparator_method``
    (``jaxbco.plan``)."""
    path = plan.describe(problem, algorithm, horizon, comparator=comparator, kernel_config=config)
    return dict(engine=path.engine, engine_reason=path.engine_reason, prox_method=path.prox,
                comparator_method=path.comparator)


def run(problem: Problem, horizon: int, hyper: Hyper | None = None, *, seed: int = 0, key=0,
        **kwargs) -> Result:
    """One setting, one seed: curves of shape (K,).  Same keyword options as ``sweep``."""
    if "seeds" in kwargs:
        raise _checks.KindError("run takes one seed (seed=...); use jaxbco.sweep for seeds=")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an integer id in [0, 2^32); got {_checks.describe(seed)}")
    if hyper is not None and _checks.is_concrete(hyper):
        n_grid = _checks.check_grid(hyper, "hyper")
        if n_grid > 1:
            raise ValueError(f"hyper must be one setting for run (curves of shape (K,)); got a grid "
                             f"of {n_grid} settings: use jaxbco.sweep(problem, T, hyper, ...), whose "
                             f"curves have shape (G, S, K)")
    res = sweep(problem, horizon, hyper, seeds=np.asarray([seed]), key=key, **kwargs)
    squeeze = {m: getattr(res, m)[0, 0] for m in METRICS}
    decisions = None if res.decisions is None else res.decisions[0, 0]
    return dataclasses.replace(res, decisions=decisions, failed=res.failed[0, 0], failed_round=res.failed_round[0, 0],
                               x_star=res.x_star[0], x_final=res.x_final[0, 0],
                               x_star_certificate=res.x_star_certificate[0],
                               x_star_ok=res.x_star_ok[0], prox_certificate=res.prox_certificate[0, 0],
                               prox_ok=res.prox_ok[0, 0], **squeeze)


def make_run(problem: Problem, horizon: int, *, algorithm: AbstractAlgorithm | None = None,
             checkpoints=None, dtype="float32", comparator: bool = True, seed_pad: bool = True,
             scan_unroll: int = 1, kernel: bool | None = None):
    """The whole run as one jitted function ``fn(key, hyper, seed_ids) -> dict of curves``.

    key: a typed ``jax.random.key`` (or an int); hyper: the algorithm's hyperparameters (a
    ``Hyper`` without a grid axis is given one); seed_ids: integer ids (S,).  Curves
    (regret, hard_violation, soft_violation, lam, loss) have shape (G, S, K); also ``failed``
    (G, S), ``x_star`` (S, d), ``x_final`` (G, S, d).  A pure function, to transform::

        fn = jaxbco.make_run(problem, 1000, checkpoints=[1000])
        ids, hyper = jnp.arange(64), lambda c: jaxbco.theorem_defaults(problem.domain, 1000, c=c)
        mean_regret = lambda c: fn(key, hyper(c), ids)["regret"][..., -1].mean()
        jax.grad(mean_regret)(0.5)                    # d E[R_T] / dc through the whole run
        jax.vmap(mean_regret)(jnp.linspace(0.3, 0.9, 8))

    Inputs are validated once here (problem, horizon, checkpoints); hyperparameters are not
    (they may be tracers).  ``seed_pad`` keeps batch independence (see ``SEED_PAD``).  Called
    on concrete inputs it is compiled with jaxbco's XLA options (``fn.compiler_options``, see
    ``jaxbco._xla``); inside the caller's own ``jit``/``grad``/``vmap`` JAX allows options on
    the outermost ``jax.jit`` only, so wrap it as ``jax.jit(g, compiler_options=fn.compiler_options)``.

    ``kernel`` (``jaxbco.fused``): None: the fused kernel on a GPU for concrete calls only (under
    the caller's ``jit``/``grad``/``vmap`` the scan engine, so ``jax.grad`` works); True: also
    under ``jit`` (no derivatives); False: never.
    """
    _run_inputs._check_run_kinds(problem, algorithm, comparator, False, None, None)
    _checks.check_bool("seed_pad", seed_pad)
    scan_unroll = _checks.check_positive_int("scan_unroll", scan_unroll)
    validated = _run_inputs.validated(problem, horizon, algorithm, checkpoints, dtype)
    horizon, algorithm, checkpoints, dtype = validated
    setup_algorithm = algorithm
    kernel = fused.check(kernel)
    config = fused.choose(kernel, jax.default_backend(), problem, algorithm, None, False, dtype)
    undecided = check_feasible(problem, horizon, 0.0, comparator)
    setup = _setup(problem, horizon, algorithm, checkpoints, dtype, comparator, validated)
    cps = jnp.asarray(setup.checkpoints)
    options = _xla.options()
    try:
        sizes = _run_inputs._run_sizes(problem, algorithm, algorithm.default_hyper(problem, horizon))
    except ValueError:  # no default hyperparameters at this horizon: a few vectors
        sizes = (4 * problem.dim, problem.dim, problem.dim + 1)
    limit = _run_inputs.memory_limit()

    def fn(key, hyper, seed_ids):
        key = _checks.check_key(key)
        _run_inputs.check_hyper_values(hyper, setup_algorithm, problem, setup.dtype)  # as sweep
        n_grid = _checks.check_grid(hyper, "hyper")
        if _checks.is_concrete(seed_ids):
            _checks.check_seed_ids(np.asarray(seed_ids))
        n_seeds = int(np.shape(seed_ids)[0]) if np.ndim(seed_ids) == 1 else 0
        lanes = SEED_PAD if seed_pad else 1
        _run_inputs.check_memory(_run_inputs.memory_estimate(problem, n_grid, -(-n_seeds // lanes) * lanes, cps.shape[0],
                                     sizes, itemsize=np.dtype(setup.dtype).itemsize,
                                     comparator=comparator), limit,
                     f"G = {n_grid} settings x S = {n_seeds} seeds x K = {cps.shape[0]} "
                     f"checkpoints, d = {problem.dim}")
        hyper = _run_inputs.grid(hyper, setup.dtype)  # arrays (or the caller's tracers): never static
        seed_ids = jnp.asarray(seed_ids, jnp.uint32)
        ids = _run_inputs.pad_seeds(seed_ids, SEED_PAD if seed_pad else 1)
        # XLA options go on the outermost jit only: called inside the caller's transformation
        # (traced inputs), the program is compiled with the caller's options.
        traced = any(isinstance(leaf, jax.core.Tracer)
                     for leaf in jax.tree_util.tree_leaves((key, hyper, seed_ids)))
        use = config if (kernel is not None or not traced) else None
        args = (setup.problem, setup.algorithm, cps, setup.x_star_given, key, hyper, ids,
                seed_ids.shape[0], setup.horizon, comparator, scan_unroll)

        def call(use):
            try:
                return _whole_jitted(() if traced else options)(*args, use)
            except ValueError as err:  # concrete inputs inside the caller's jit: no options here
                if "compiler_options" not in str(err) or not options:
                    raise
                return _whole_jitted(())(*args, use)

        return fused.call_with_fallback(call, use, traced)

    fn.compiler_options = dict(options)
    fn.feasibility_undecided = undecided
    return fn


@functools.cache
def _whole_jitted(options: tuple):
    kw = {"compiler_options": dict(options)} if options else {}
    return eqx.filter_jit(programs.whole, **kw)
