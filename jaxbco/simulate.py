"""Running studies: validate the inputs, then drive the engine (``jaxbco._src.engine``).

``sweep`` runs a grid of G hyperparameter settings x S seeds for T rounds (chunks of rounds,
devices, resume, progress); ``run`` is one setting and one seed; ``make_run`` (from
``jaxbco._src.whole_run``, re-exported here) gives the whole run as one jitted function of (key,
hyperparameters, seed ids), to transform.  Both reach the scan through the same three steps,
``engine.start`` -> the back-end's ``advance`` -> ``engine.finish`` (``sweep`` one ``advance`` per
chunk, sharded over devices; ``make_run`` one over all T), after the same validation
(``jaxbco._src.validation``), casting, grid broadcasting and seed padding (``jaxbco._src.shaping``).
Per-seed keys are fold_in(master, seed_id), so a seed's result never depends on its batch.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import backends, fused, plan
from jaxbco import certificate as _certificate
from jaxbco._src import checks, convexity, engine, validation, xla
from jaxbco._src import devices as _devices
from jaxbco._src import progress as _progress
from jaxbco._src import resume as _resume
from jaxbco._src.engine import METRICS  # noqa: F401  (part of this module's interface)
from jaxbco._src.run_result import Result
from jaxbco._src.shaping import SEED_PAD, chunk_length, grid, pad_seeds
from jaxbco._src.shaping import cast as _cast
from jaxbco._src.shaping import (
    log_checkpoints as log_checkpoints,  # part of this module's interface
)
from jaxbco._src.whole_run import make_run as make_run  # part of this module's interface
from jaxbco._src.whole_run import prepare
from jaxbco.algorithms import AbstractAlgorithm
from jaxbco.hyper import Hyper
from jaxbco.problem import Problem, check_feasible
from jaxbco.solvers import gap as _gap


@functools.cache
def _jitted(options: tuple):
    """(start, advance, finish) sharded over the seeds (``jaxbco._src.devices``) and compiled with
    XLA options (``jaxbco._src.xla``).  The carry is donated: a chunk overwrites the previous
    chunk's buffers in place.  ``finish`` is two programs: the comparator's part, compiled
    once per problem and shared by every algorithm run on it, and the final decisions."""
    kw = {"compiler_options": dict(options)} if options else {}
    comparator_part = eqx.filter_jit(_devices.finish_comparator, **kw)
    certify = eqx.filter_jit(_devices.certify_comparator, **kw)
    decisions = eqx.filter_jit(_devices.final_decisions, **kw)

    def finish(mesh, problem, algorithm, carry, x_star, checkpoints, horizon):
        bufs, x_star = comparator_part(
            mesh, problem, carry.bufs, carry.sums, carry.sbuf, x_star, checkpoints, horizon
        )
        return (bufs, x_star) + tuple(decisions(mesh, algorithm, carry.states))

    return (
        eqx.filter_jit(_devices.start, **kw),
        eqx.filter_jit(_devices.advance, donate="all-except-first", **kw),
        finish,
        certify,
    )


def sweep(
    problem: Problem,
    horizon: int,
    hyper: Hyper | None = None,
    *,
    seeds=1,
    key=0,
    algorithm: AbstractAlgorithm | None = None,
    checkpoints=None,
    dtype="float32",
    directions=None,
    comparator: bool = True,
    record_decisions: bool = False,
    chunk: int | None = None,
    progress: bool | None = None,
    resume: str | None = None,
    devices=None,
    scan_unroll: int = 1,
    kernel: bool | None = None,
) -> Result:
    """Run every hyperparameter setting in ``hyper`` on every seed, as one compiled program.

    G settings × S seeds × T rounds run as one ``lax.scan`` over the rounds (seeds as the
    minor axis of every array where the components declare ``blocks``, else ``vmap``; on a GPU
    the fused round-loop kernel where it covers the run).  Per seed and setting it records, at
    the checkpoint rounds t, the regret R_t = ∑ₛ≤ₜ fₛ(xₛ) − fₛ(x*) against the best fixed
    feasible point in hindsight x* (computed in the same call), the hard violation
    ∑ₛ≤ₜ [gₛ(xₛ)]₊, the soft violation ∑ₛ≤ₜ gₛ(xₛ), the penalty λₜ and the loss fₜ(xₜ)
    (Hikima, Alg. 1 and the metrics of Thms. 1-4).  Per-seed keys are
    fold_in(master, seed_id), so a seed's result never depends on the other seeds in the batch.
    A new hyperparameter value or problem data of the same shapes never recompiles.

    Every input is checked before anything compiles: ``problem.validate``, the grid lengths,
    the seed ids, the key, a memory estimate against the machine, and the rounds' feasibility
    (``problem.check_feasible``; where it cannot be decided, a ``FeasibilityWarning`` and
    ``Result.feasibility_undecided``).

    Args:
        problem: the set X, the loss family and the constraint family with their data sequences.
        horizon: the number of rounds T (a positive integer).
        hyper: the algorithm's hyperparameters, each field with a leading grid axis of G
            settings or none (``jaxbco.grid``, ``jaxbco.theorem_defaults``); None: the
            algorithm's ``default_hyper`` for this problem and T.
        seeds: a count S (seed ids 0..S−1) or an array of distinct seed ids in [0, 2³²).
        key: the master key, an int or a typed ``jax.random.key``.
        algorithm: the algorithm to run (default ``RectifiedBCO()``, Algorithm 1).
        checkpoints: the rounds to record, increasing in [1, T] (default: about 100 log-spaced
            rounds, ``log_checkpoints``).
        dtype: "float32" or "float64" (float64 needs ``jax_enable_x64``).
        directions: replayed exploration directions uₜ, shape (T, d) or (S, T, d), instead of
            drawing them.
        comparator: False skips x* (regret is then measured against x₁).
        record_decisions: keep the played xₜ at the checkpoints (``Result.decisions``).
        chunk: rounds per compiled call (default: all T, or about T/100 when ``progress`` or
            ``resume`` asks for chunks), the carry donated from chunk to chunk; any chunking
            gives bitwise the same result on one engine.
        progress: show a tqdm bar (rounds/s, ETA); None: only on a terminal for runs of over
            10⁸ seed-rounds.
        resume: a state file written atomically after every chunk and continued from if it
            exists (same configuration and versions); ``Result.wall_s`` then totals every
            session.
        devices: the devices to shard the seeds over (default: all local devices); bitwise the
            same as one device on the scan engine.
        scan_unroll: rounds per iteration of the round scan (a compile-time choice; the same
            numbers up to round-off).
        kernel: the fused round-loop kernel (``jaxbco.fused``): None runs it on a GPU where it
            covers the run, False never, True wherever it does (interpreted off a GPU); if it
            fails, a ``fused.KernelWarning`` and the scan engine.

    Returns:
        A ``Result``: curves of shape (G, S, K) at the K checkpoints, x*, the failed seeds, and
        the path the run took (back-end, prox method, comparator method) with its speed.

    Raises:
        ValueError: an input out of range (naming the parameter, its range and the value), a
            run too large for the machine's memory, a ``resume`` file of another configuration.
        TypeError: an input of the wrong kind.

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems
        >>> problem = problems.make("quadratic-ball", 3)
        >>> hyper = jaxbco.theorem_defaults(problem.domain, 100, c=[0.5, 0.75])  # G = 2
        >>> res = jaxbco.sweep(problem, 100, hyper, seeds=4, checkpoints=[10, 100])
        >>> res.regret.shape  # (G settings, S seeds, K checkpoints)
        (2, 4, 2)
        >>> bool(res.failed.any()), res.engine
        (False, 'seeds-minor')
    """
    n_seeds, master, scan_unroll, validated, hyper, n_grid, devices = validation.check_sweep(
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
    )
    horizon, algorithm, checkpoints, dtype = validated
    chosen = backends.select(
        problem,
        algorithm,
        kernel=kernel,
        directions=directions,
        record_decisions=record_decisions,
        dtype=dtype,
        platform=(jax.local_devices() if devices is None else devices)[0].platform,
    )
    ran = chosen.backend  # the back-end the chunks run on (the scan after a kernel failure)
    seed_ids = checks.check_seed_ids(seeds)
    if directions is not None:
        directions = checks.check_directions(directions, problem, horizon, seed_ids.size, dtype)
    undecided = check_feasible(problem, horizon, getattr(hyper, "xi", 0.0), comparator)
    setup = prepare(problem, horizon, algorithm, checkpoints, dtype, comparator, validated)
    hyper = grid(hyper)
    hyper_c = _cast(hyper, dtype)
    start, advance, finish, certify = _jitted(xla.options())
    mesh = _devices.seed_mesh(devices)
    n_seeds = seed_ids.size
    padded = np.asarray(pad_seeds(seed_ids, SEED_PAD * _devices.n_devices(mesh)))
    if directions is not None and directions.ndim == 3:
        directions = jnp.concatenate(
            [
                directions,
                jnp.broadcast_to(directions[-1:], (padded.size - n_seeds,) + directions.shape[1:]),
            ]
        )
        directions = jnp.swapaxes(directions, 0, 1)  # (T, S, d)
    if progress is None:
        progress = sys.stderr.isatty() and n_grid * padded.size * horizon > 1e8
    length = chunk_length(chunk, horizon, bool(progress) or resume is not None)
    ids = _devices.put(jnp.asarray(padded, jnp.uint32), mesh, _devices.SPEC_S)
    cps = jnp.asarray(checkpoints)
    start_args = (
        mesh,
        setup.problem,
        setup.algorithm,
        hyper_c,
        master,
        ids,
        horizon,
        cps.shape[0],
        comparator,
        record_decisions,
        setup.x_star_given,
    )
    config_hash = None
    with plan.CompileClock() as clock:  # trace and compile time of this session
        begin = time.perf_counter()
        state = None
        if resume is not None:
            config_hash = _resume.fingerprint(
                (
                    setup.problem,
                    setup.algorithm,
                    hyper_c,
                    master,
                    padded,
                    horizon,
                    checkpoints,
                    str(dtype),
                    comparator,
                    record_decisions,
                    directions,
                )
            )
            if os.path.exists(resume):
                like = jax.eval_shape(lambda: _devices.start(*start_args)[0])  # shapes only
                state = _resume.load(resume, like, config_hash, with_wall=True)
        earlier = 0.0 if state is None else state[3]  # wall time of the earlier sessions
        t_done = 0 if state is None else state[2] - 1
        bar = _progress.bar(horizon, t_done, f"{n_grid * n_seeds} runs", bool(progress))
        if state is None:
            with _progress.comparator_progress(
                bar if progress and comparator else None, n_seeds, horizon
            ):
                carry, x_star = start(*start_args)
                if progress:
                    x_star.block_until_ready()
            t_next = 1
            if resume is not None:  # keep the comparator pass (minutes at 1e4 seeds x 1e5 rounds)
                _resume.save(
                    resume, carry, x_star, t_next, config_hash, time.perf_counter() - begin
                )
        else:
            leaves, x_star, t_next = state[:3]
            carry = jax.tree_util.tree_map(
                lambda spec, part: jax.tree_util.tree_map(
                    lambda a: _devices.put(jnp.asarray(a), mesh, spec), part
                ),
                _devices.CARRY_SPECS,
                leaves,
                is_leaf=lambda x: isinstance(x, jax.sharding.PartitionSpec),
            )
            x_star = _devices.put(jnp.asarray(x_star), mesh, _devices.SPEC_S)
        chunk = _devices.ChunkInputs(
            mesh,
            setup.problem,
            setup.algorithm,
            hyper_c,
            master,
            ids,
            x_star,
            cps,
            scan_unroll=scan_unroll,
            backend=ran,
        )
        with bar:
            while t_next <= horizon:
                # A shorter last chunk (T mod chunk rounds) compiles once more: only shapes are static.
                done = min(length, horizon - t_next + 1)
                u = None if directions is None else directions[t_next - 1 : t_next - 1 + done]
                carry, ran = fused.run_chunk(
                    advance,
                    chunk._replace(length=done, backend=ran),
                    chosen.scan,
                    carry,
                    jnp.asarray(t_next, jnp.int32),
                    u,
                )
                t_next += done
                if resume is not None:
                    _resume.save(
                        resume,
                        carry,
                        x_star,
                        t_next,
                        config_hash,
                        earlier + time.perf_counter() - begin,
                    )
                elif progress:
                    carry.idx.block_until_ready()
                bar.update(done)
        bufs, x_star, x_final, prox = finish(
            mesh, setup.problem, setup.algorithm, carry, x_star, cps, horizon
        )
        # The certificate on one device, unsharded: its least squares (LAPACK) in a shard_map
        # over 4 CPU devices on 2 cores hung (tests/test_long_runs.py, 3 of 3 tries)
        one = lambda tree: jax.tree_util.tree_map(
            lambda a: jax.device_put(a, jax.local_devices()[0]), tree
        )
        once = setup.x_star_given is not None or (  # one x* for every seed: certified once
            carry.sums == () and engine.seed_independent(setup.problem)
        )
        cert = (
            certify(None, setup.problem, master, *one((ids, x_star, carry.sums)), horizon, once)
            if comparator
            else None
        )
        out = jax.block_until_ready(
            engine.Outcome(
                bufs, carry.failed, carry.failed_round, x_star, x_final, carry.xbuf, prox
            )
        )
        cert = jax.device_get(cert)
        session = time.perf_counter() - begin
    wall = earlier + session  # all sessions of a resumed run
    bufs, failed, failed_round, x_star, x_final, xbuf, prox = jax.device_get(out)
    bufs, xbuf = bufs[..., :n_seeds], xbuf[:, :, :n_seeds]
    failed, failed_round = failed[:, :n_seeds], failed_round[:, :n_seeds]
    x_star, x_final = x_star[:n_seeds], x_final[:, :n_seeds]
    decisions = np.moveaxis(np.asarray(xbuf), 0, 2) if record_decisions else None
    if ran != chosen.backend:  # the kernel failed to compile: the scan ran
        chosen = backends.Selection(ran, "the fused kernel failed to compile (KernelWarning)", ran)
    paths = _path_fields(problem, algorithm, horizon, comparator, chosen)
    certified = _certificate.report(
        cert, n_seeds, seed_ids, dtype, problem, paths["comparator_method"]
    )
    certified.update(_gap.report(prox, n_seeds, seed_ids, dtype, paths["prox_method"], failed))
    if not convexity.check_visited(
        problem, np.concatenate([x_star, x_final.reshape(-1, x_final.shape[-1])])
    ):
        certified["x_star_ok"][:] = certified["prox_ok"][:] = False  # cuts need convexity
    curves = {m: np.asarray(bufs[i]).transpose(1, 2, 0) for i, m in enumerate(METRICS)}
    return Result(
        rounds=checkpoints,
        failed=np.asarray(failed),
        failed_round=np.asarray(failed_round),
        x_star=np.asarray(x_star),
        x_final=np.asarray(x_final),
        decisions=decisions,
        seed_ids=seed_ids,
        hyper=hyper,
        horizon=horizon,
        dtype=str(dtype),
        wall_s=wall,
        feasibility_undecided=undecided,
        compile_s=clock.seconds,
        **certified,
        seed_rounds_per_s=plan.speed(n_grid * n_seeds * (horizon - t_done), session, clock.seconds),
        **paths,
        **curves,
    )


def _path_fields(problem, algorithm, horizon, comparator, chosen) -> dict:
    """``Result.engine``, ``engine_reason``, ``prox_method`` and ``comparator_method``
    (``jaxbco.plan``), the back-end as ``chosen`` (``backends.select``)."""
    path = plan.describe(problem, algorithm, horizon, comparator=comparator, selection=chosen)
    return dict(
        engine=path.engine,
        engine_reason=path.engine_reason,
        prox_method=path.prox,
        comparator_method=path.comparator,
    )


def run(
    problem: Problem, horizon: int, hyper: Hyper | None = None, *, seed: int = 0, key=0, **kwargs
) -> Result:
    """Run one hyperparameter setting on one seed: ``sweep`` with curves of shape (K,).

    Args:
        problem: the set X, the loss family and the constraint family with their data sequences.
        horizon: the number of rounds T.
        hyper: one setting of the algorithm's hyperparameters (no grid axis, or a grid of one);
            None: the algorithm's ``default_hyper``.
        seed: the seed id, an integer in [0, 2³²).
        key: the master key, an int or a typed ``jax.random.key``.
        **kwargs: any other keyword option of ``sweep`` (algorithm, checkpoints, dtype,
            comparator, record_decisions, ...), except ``seeds``.

    Returns:
        A ``Result`` whose curves have shape (K,), ``failed`` is a scalar, ``x_star`` (d,) and
        ``x_final`` (d,).

    Raises:
        ValueError: ``seed`` out of range, or ``hyper`` a grid of more than one setting (use
            ``sweep``).
        TypeError: ``seeds=`` given (``run`` takes one seed).

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems
        >>> problem = problems.make("quadratic-ball", 3)
        >>> hyper = jaxbco.theorem_defaults(problem.domain, 100)
        >>> res = jaxbco.run(problem, 100, hyper, seed=3, checkpoints=[10, 100])
        >>> res.regret.shape, res.x_star.shape
        ((2,), (3,))
    """
    if "seeds" in kwargs:
        raise checks.KindError("run takes one seed (seed=...); use jaxbco.sweep for seeds=")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an integer id in [0, 2^32); got {checks.describe(seed)}")
    if hyper is not None and checks.is_concrete(hyper):
        n_grid = checks.check_grid(hyper, "hyper")
        if n_grid > 1:
            raise ValueError(
                f"hyper must be one setting for run (curves of shape (K,)); got a grid "
                f"of {n_grid} settings: use jaxbco.sweep(problem, T, hyper, ...), whose "
                f"curves have shape (G, S, K)"
            )
    res = sweep(problem, horizon, hyper, seeds=np.asarray([seed]), key=key, **kwargs)
    squeeze = {m: getattr(res, m)[0, 0] for m in METRICS}
    decisions = None if res.decisions is None else res.decisions[0, 0]
    return dataclasses.replace(
        res,
        decisions=decisions,
        failed=res.failed[0, 0],
        failed_round=res.failed_round[0, 0],
        x_star=res.x_star[0],
        x_final=res.x_final[0, 0],
        x_star_certificate=res.x_star_certificate[0],
        x_star_ok=res.x_star_ok[0],
        prox_certificate=res.prox_certificate[0, 0],
        prox_ok=res.prox_ok[0, 0],
        **squeeze,
    )
