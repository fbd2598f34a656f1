"""``sweep``'s stages, each one named step of a run:

    plan:     validate the inputs, select the back-end and x*'s method, shape the seeds;
    start:    the carry before round 1 and x* (or ``resumed``: the state a resumed run left);
    advance:  the chunks of rounds on the selected back-end, the carry donated between them
              (the algorithm's ``light`` version first: ``lightened``, ``needs_refinement``);
    finish:   x_{T+1}, x* where it streams, and x*'s certificate;
    result:   the ``Result``, with the path the run took and its certificates.

Each seed's key is fold_in(master, seed_id), so a seed's result never depends on its batch.
"""

from __future__ import annotations

import functools
import sys
import time
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import backends, engine, fused, plan
from jaxbco import certificate as _certificate
from jaxbco._src import progress as _progress
from jaxbco._src import resume as _resume
from jaxbco._src.shaping import SEED_PAD, chunk_length, grid, pad_seeds
from jaxbco._src.shaping import cast as _cast
from jaxbco.comparator import optimum as _optimum
from jaxbco.engine import METRICS, Chunk
from jaxbco.offline import convexity
from jaxbco.problem import check_feasible
from jaxbco.runner import devices as _devices
from jaxbco.runner import validation
from jaxbco.runner.run_result import Result, masked_decisions, warn_outside
from jaxbco.runner.whole_run import prepare
from jaxbco.solvers import gap as _gap


def _advance(chunk, backend, carry, t0, directions):
    """``backend.advance`` (a ``devices.Sharded``) as a program of its own: the chunk first, so
    that it is never donated; the carry after it donated."""
    return backend.advance(chunk, carry, t0, directions)


@functools.cache
def programs(options: tuple, one_shot: tuple | None = None):
    """(start, advance, finish, certify) sharded over the seeds (``jaxbco.runner.devices``),
    compiled with XLA options (``one_shot`` for x*'s certificate).  The
    carry is donated.  ``finish``: the comparator's part (one program per problem, shared by
    every algorithm) and the final decisions."""
    kw = {"compiler_options": dict(options)} if options else {}
    once = {"compiler_options": dict(one_shot)} if one_shot else kw
    comparator_part = eqx.filter_jit(_devices.finish_comparator, **kw)  # x*: bitwise as ever
    certify = eqx.filter_jit(_devices.certify_comparator, **once)
    decisions = eqx.filter_jit(_devices.final_decisions, **kw)

    def finish(mesh, problem, algorithm, carry, x_star, checkpoints, horizon, method):
        bufs, x_star = comparator_part(
            mesh, problem, carry.bufs, carry.sums, carry.sbuf, x_star, checkpoints, horizon, method
        )
        return (bufs, x_star) + tuple(
            decisions(mesh, algorithm, carry.states, carry.failed, problem.domain)
        )

    return (
        eqx.filter_jit(_devices.start, **kw),
        eqx.filter_jit(_advance, donate="all-except-first", **kw),
        finish,
        certify,
    )


class Plan(NamedTuple):
    """What every stage of a sweep reads: the checked, cast inputs and the choices made."""

    setup: object  # ``whole_run.Setup``: the problem and algorithm cast to the dtype
    chosen: object  # ``backends.Selection``
    hyper: object  # (G,) settings as given, and cast
    hyper_c: object
    n_grid: int
    master: jax.Array
    seed_ids: np.ndarray  # (S,) as given
    padded: np.ndarray  # padded to a multiple of SEED_PAD per device
    mesh: object
    ids: jax.Array  # the padded ids on the mesh
    directions: object
    undecided: bool
    comparator: bool
    method: object  # x*'s method (``comparator.select``, once), None without a comparator
    record_decisions: bool
    length: int  # rounds per chunk
    progress: bool
    resume: str | None
    scan_unroll: int
    optimum: object  # a given ``comparator.Optimum``, or None
    given: object  # x* handed to ``start`` (host-solved, or the optimum's), or None
    streamed: bool  # x* streams from the run's sums
    words: tuple  # the master key's words


def plan_sweep(problem, horizon, hyper, options: dict) -> Plan:
    """Validate everything before anything compiles, select the back-end, shape the seeds."""
    o = options
    args = (problem, horizon, hyper, o["seeds"], o["key"], o["algorithm"], o["checkpoints"])
    names = ("dtype", "directions", "comparator", "record_decisions", "chunk", "progress")
    rest = tuple(o[k] for k in names + ("resume", "devices", "scan_unroll"))
    checked = validation.check_sweep(*args, *rest)
    master, scan_unroll, validated, hyper, n_grid, devices, seed_ids, directions = checked
    horizon, algorithm, checkpoints, dtype = validated
    platform = (jax.local_devices() if devices is None else devices)[0].platform
    selection = dict(directions=o["directions"], record_decisions=o["record_decisions"])
    chosen = backends.select(
        problem, algorithm, kernel=o["kernel"], dtype=dtype, platform=platform, **selection
    )
    comparator = o["comparator"]
    undecided = check_feasible(problem, horizon, getattr(hyper, "xi", 0.0), comparator)
    setup = prepare(problem, horizon, algorithm, checkpoints, dtype, comparator, validated)
    method = setup.method
    words = _optimum.key_words(master)
    optimum = o["optimum"]
    if optimum is not None:
        validation.check_optimum(
            optimum, comparator, setup.problem, words, seed_ids, horizon, dtype
        )
    mesh = _devices.seed_mesh(devices)
    padded = np.asarray(pad_seeds(seed_ids, SEED_PAD * _devices.n_devices(mesh)))
    streamed = engine.streaming(setup.problem, comparator, setup.x_star_given)
    given = setup.x_star_given
    if optimum is not None and not streamed and given is None:  # x* given: none solved
        given = _optimum.padded(optimum, padded.size, dtype)
    progress = o["progress"]
    if progress is None:
        progress = sys.stderr.isatty() and n_grid * padded.size * horizon > 1e8
    resume = o["resume"]
    length = chunk_length(o["chunk"], horizon, bool(progress) or resume is not None)
    hyper = grid(hyper)
    ids = _devices.put(jnp.asarray(padded, jnp.uint32), mesh, _devices.SPEC_S)
    directions = _seeds_major(directions, padded.size, seed_ids.size)
    return Plan(
        setup, chosen, hyper, _cast(hyper, dtype), n_grid, master, seed_ids, padded, mesh,
        ids, directions, undecided, comparator, method, o["record_decisions"], length,
        bool(progress),
        resume, scan_unroll, optimum, given, streamed, words,
    )  # fmt: skip


def _seeds_major(directions, n_padded: int, n_seeds: int):
    """Per-seed replayed directions (S, T, d) padded to the padded seeds, as (T, S_pad, d)."""
    if directions is None or directions.ndim != 3:
        return directions
    pad = jnp.broadcast_to(directions[-1:], (n_padded - n_seeds,) + directions.shape[1:])
    return jnp.swapaxes(jnp.concatenate([directions, pad]), 0, 1)


class State(NamedTuple):
    """A sweep between stages: the carry, x*, the next round and the earlier sessions' wall
    time (a resumed run), the resume file's configuration hash, and the seconds x*'s pre-pass
    took (compile excluded; 0 where resumed or streamed)."""

    carry: object
    x_star: object
    t_next: int
    earlier: float
    config_hash: str | None
    comparator_s: float = 0.0


def _start_args(p: Plan) -> tuple:
    s = p.setup
    cps = len(s.checkpoints)
    return (p.mesh, s.problem, s.algorithm, p.hyper_c, p.master, p.ids, s.horizon, cps) + (
        p.method or False,
        p.record_decisions,
        p.given,
    )


def lightened(p: Plan) -> Plan:
    """``p`` with the algorithm's light version (``AbstractAlgorithm.light``), or ``p``."""
    light = p.setup.algorithm.light()
    return p if light is p.setup.algorithm else p._replace(setup=p.setup._replace(algorithm=light))


def needs_refinement(q: Plan, p: Plan, out) -> bool:
    """Whether the light pass ``q`` left a failing prox certificate: ``p`` must run."""
    return q is not p and _gap.needs_refinement(out.prox, p.setup.dtype)


def start(p: Plan, programs_, bar, begin_s: float, config_hash: str | None, clock) -> State:
    """The carry before round 1 and x* (the comparator's pre-pass, kept in the resume file),
    waited for where there is a comparator, so that its seconds (``clock``'s compile time
    left out: a ``plan.CompileClock``) are told apart from the rounds'."""
    watch = bar if p.progress and p.comparator else None
    t0, c0 = time.perf_counter(), clock.seconds
    with _progress.comparator_progress(watch, p.seed_ids.size, p.setup.horizon):
        carry, x_star = programs_[0](*_start_args(p))
        if p.progress or p.comparator:
            x_star.block_until_ready()
    spent = max(time.perf_counter() - t0 - (clock.seconds - c0), 0.0) if p.comparator else 0.0
    if p.resume is not None:  # keep the comparator pass (minutes at 1e4 seeds x 1e5 rounds)
        _resume.save(p.resume, carry, x_star, 1, config_hash, time.perf_counter() - begin_s)
    return State(carry, x_star, 1, 0.0, config_hash, spent)


def advance(p: Plan, programs_, state: State, bar, begin_s: float):
    """Every chunk of rounds from ``state.t_next`` on; (state after round T, the back-end that
    ran: the scan after a kernel failure)."""
    s, (carry, x_star, t_next, earlier, config_hash, _) = p.setup, state
    ran = p.chosen.backend
    chunk = Chunk(
        s.problem, s.algorithm, p.hyper_c, p.master, p.ids, x_star, jnp.asarray(s.checkpoints),
        scan_unroll=p.scan_unroll,
    )  # fmt: skip
    while t_next <= s.horizon:
        # A shorter last chunk (T mod chunk rounds) compiles once more: only shapes are static.
        done = min(p.length, s.horizon - t_next + 1)
        u = None if p.directions is None else p.directions[t_next - 1 : t_next - 1 + done]
        step = chunk._replace(length=done)
        t0 = jnp.asarray(t_next, jnp.int32)
        call = lambda b: programs_[1](step, _devices.Sharded(b, p.mesh), carry, t0, u)  # noqa: B023
        carry, ran = fused.run_chunk(call, ran, p.chosen.scan, carry)
        t_next += done
        if p.resume is not None:
            wall = earlier + time.perf_counter() - begin_s
            _resume.save(p.resume, carry, x_star, t_next, config_hash, wall)
        elif p.progress:
            carry.idx.block_until_ready()
        bar.update(done)
    return state._replace(carry=carry, t_next=t_next), ran


def finish(p: Plan, programs_, state: State, clock):
    """(the run's ``engine.Outcome`` on the host, x*'s certificate or None, the seconds the
    certificate took, compile excluded): x_{T+1}, x* where it streams, and x*'s certificate
    unless x* is the given optimum's."""
    s, carry = p.setup, state.carry
    _, _, finish_, certify = programs_
    cps = jnp.asarray(s.checkpoints)
    done = finish_(p.mesh, s.problem, s.algorithm, carry, state.x_star, cps, s.horizon, p.method)
    x_star = done[1]
    # The certificate on one device, unsharded: its least squares (LAPACK) in a shard_map
    # over 4 CPU devices on 2 cores hung (tests/test_long_runs.py, 3 of 3 tries)
    dev = jax.local_devices()[0]
    one = lambda tree: jax.tree_util.tree_map(lambda a: jax.device_put(a, dev), tree)
    once = s.x_star_given is not None or (  # one x* for every seed: certified once
        carry.sums == () and engine.seed_independent(s.problem)
    )
    reuse = _optimum.reusable(p.optimum, x_star, p.streamed)
    cert, spent = None, 0.0
    if p.comparator and not reuse:
        jax.block_until_ready(done)  # the rounds' and x*'s last pass: not the certificate's
        t0, c0 = time.perf_counter(), clock.seconds
        inputs = one((p.ids, x_star, carry.sums))
        cert = certify(None, s.problem, p.master, *inputs, s.horizon, once)
        if _certificate.needs_full(s.problem, cert, s.dtype):  # the cuts' program: only now
            cert = certify(None, s.problem, p.master, *inputs, s.horizon, once, cert)
        jax.block_until_ready(cert)
        spent = max(time.perf_counter() - t0 - (clock.seconds - c0), 0.0)
    bufs, _, x_final, prox, outside = done
    out = engine.Outcome(
        bufs, carry.failed, carry.failed_round, x_star, x_final, carry.xbuf, prox, outside
    )
    out = jax.device_get(jax.block_until_ready(out))
    if reuse:
        cert = _certificate.Certificate(*np.asarray(p.optimum.certificate).T)
    return out, jax.device_get(cert), spent


def result(p: Plan, out, cert, ran, session: float, compile_s: float, state: State, t_done: int):
    """The ``Result``: the real seeds' curves, x*, x_{T+1}, the path the run took, x*'s and
    the prox steps' certificates (failed where the problem's convexity check fails), the
    speed of the rounds (compile and ``state.comparator_s``, x*'s pre-pass and certificate,
    left out), and the ``Optimum`` to hand to other runs."""
    s, n = p.setup, p.seed_ids.size
    bufs, failed, failed_round, x_star, x_final, xbuf, prox, outside = out
    bufs, xbuf, x_star = bufs[..., :n], xbuf[:, :, :n], x_star[:n]
    failed, failed_round, x_final = failed[:, :n], failed_round[:, :n], x_final[:, :n]
    warn_outside(np.asarray(outside)[:, :n], failed, p.seed_ids, s.dtype, s.algorithm)
    chosen = p.chosen
    if ran != chosen.backend:  # the kernel failed to compile: the scan ran
        chosen = backends.Selection(ran, "the fused kernel failed to compile (KernelWarning)", ran)
    paths = plan.path_fields(s.problem, s.algorithm, s.horizon, p.method or False, chosen, s.dtype)
    how = paths["comparator_method"]
    certified = _certificate.report(cert, n, p.seed_ids, s.dtype, s.problem, how)
    hint = _gap.kink_hint(s.problem.constraint)
    certified.update(_gap.report(prox, n, p.seed_ids, s.dtype, paths["prox_method"], failed, hint))
    visited = np.concatenate([x_star, x_final.reshape(-1, x_final.shape[-1])])
    if not convexity.check_visited(s.problem, visited):
        certified["x_star_ok"][:] = certified["prox_ok"][:] = False  # cuts need convexity
    return Result(
        rounds=s.checkpoints,
        failed=np.asarray(failed),
        failed_round=np.asarray(failed_round),
        x_star=np.asarray(x_star),
        x_final=np.asarray(x_final),
        decisions=masked_decisions(xbuf, failed, failed_round, s.checkpoints)
        if p.record_decisions
        else None,
        seed_ids=p.seed_ids,
        hyper=p.hyper,
        horizon=s.horizon,
        dtype=str(s.dtype),
        wall_s=state.earlier + session,  # all sessions of a resumed run
        feasibility_undecided=p.undecided,
        compile_s=compile_s,
        comparator_s=state.comparator_s,
        **certified,
        seed_rounds_per_s=plan.speed(
            p.n_grid * n * (s.horizon - t_done), session - state.comparator_s, compile_s
        ),
        optimum=_optimum_of(p, x_star, certified, how),
        **paths,
        **{m: np.asarray(bufs[i]).transpose(1, 2, 0) for i, m in enumerate(METRICS)},
    )


def _optimum_of(p: Plan, x_star, certified, method):
    """The run's x* with its certificate, to hand on (None without a comparator)."""
    if not p.comparator:
        return None
    return _optimum.Optimum(
        x_star=np.asarray(x_star),
        certificate=certified["x_star_certificate"],
        ok=certified["x_star_ok"],
        method=method,
        problem=p.setup.problem,
        key=p.words,
        seed_ids=p.seed_ids,
        horizon=p.setup.horizon,
        dtype=str(p.setup.dtype),
    )
