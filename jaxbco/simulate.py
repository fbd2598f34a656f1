"""Running studies: ``sweep`` runs a grid of G hyperparameter settings x S seeds for T rounds
(chunks of rounds, devices, resume, progress); ``run`` is one setting and one seed; ``make_run``
(from ``jaxbco.runner.whole_run``, re-exported here) gives the whole run as one jitted function of
(key, hyperparameters, seed ids), to transform.

``sweep`` reads as its stages (``jaxbco.runner.sweep_stages``): plan (validation, the back-end
selected, an x* handed on checked, the seeds shaped), start (or resume), advance (the chunks on the
selected back-end's ``advance``), finish (x*'s certificate), result.  ``make_run`` reaches the
same ``engine.start`` -> ``advance`` -> ``engine.finish`` as one program.  Per-seed keys are
fold_in(master, seed_id), so a seed's result never depends on its batch.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from jaxbco import engine as engine  # noqa: F401  (the engine the stages drive)
from jaxbco import plan
from jaxbco._src import checks, xla
from jaxbco._src import progress as _progress
from jaxbco._src.shaping import cast as _cast  # noqa: F401  (casting as sweep casts)
from jaxbco._src.shaping import (
    log_checkpoints as log_checkpoints,  # part of this module's interface
)
from jaxbco.algorithms import AbstractAlgorithm
from jaxbco.comparator.optimum import Optimum
from jaxbco.engine import METRICS  # noqa: F401  (part of this module's interface)
from jaxbco.hyper import Hyper
from jaxbco.problem import Problem
from jaxbco.runner import sweep_resume as resume_
from jaxbco.runner import sweep_stages as stages
from jaxbco.runner.run_result import Result
from jaxbco.runner.whole_run import make_run as make_run  # part of this module's interface


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
    optimum: Optimum | None = None,
) -> Result:
    """Run every hyperparameter setting in ``hyper`` on every seed, as one compiled program.

    G settings × S seeds × T rounds run as one ``lax.scan`` over the rounds (seeds as the
    minor axis of every array where the components declare ``blocks``, else ``vmap``; on a GPU
    the fused round-loop kernel where it covers the run).  Per seed and setting it records, at
    the checkpoint rounds t, the regret Rₜ = ∑ₛ≤ₜ fₛ(xₛ) − fₛ(x*) against the best fixed
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
        optimum: x* already solved for this problem, key, seeds, T and dtype (an earlier run's
            ``Result.optimum``): checked to belong to this run, then neither solved nor
            certified again (``jaxbco.comparator.optimum``).

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
    options = dict(
        seeds=seeds,
        key=key,
        algorithm=algorithm,
        checkpoints=checkpoints,
        dtype=dtype,
        directions=directions,
        comparator=comparator,
        record_decisions=record_decisions,
        chunk=chunk,
        progress=progress,
        resume=resume,
        devices=devices,
        scan_unroll=scan_unroll,
        kernel=kernel,
        optimum=optimum,
    )
    p = stages.plan_sweep(problem, horizon, hyper, options)
    programs = stages.programs(xla.options(), xla.one_shot_options())
    with plan.CompileClock() as clock:  # trace and compile time of this session
        begin = time.perf_counter()
        config_hash = resume_.config_hash(p)  # the user's configuration: either pass's
        # the algorithm's light version first (``AbstractAlgorithm.light``: the same steps);
        # the rounds again with the algorithm itself only where a certificate needs it
        light = stages.lightened(p)
        state = resume_.resumed(light, config_hash)
        t_done = 0 if state is None else state.t_next - 1
        runs = f"{p.n_grid * p.seed_ids.size} runs"
        comparator_s = 0.0  # x*'s pre-pass and certificate, compile excluded
        for q in (light, p) if light is not p else (p,):
            bar = _progress.bar(p.setup.horizon, t_done, runs, p.progress)
            if state is None:
                state = stages.start(q, programs, bar, begin, config_hash, clock)
                comparator_s += state.comparator_s
            with bar:
                state, ran = stages.advance(q, programs, state, bar, begin)
            out, cert, cert_s = stages.finish(q, programs, state, clock)
            comparator_s += cert_s
            if not stages.needs_refinement(q, p, out):
                break
            state, t_done = None, 0  # afresh: the light pass's steps are not refined
        session = time.perf_counter() - begin
    state = state._replace(comparator_s=comparator_s)  # every pass's
    return stages.result(p, out, cert, ran, session, clock.seconds, state, t_done)


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
