"""A whole run as one function (``simulate``: start, all T rounds as one chunk on the back-end
selected for it, ``jaxbco.backends.select``, finish; ``whole`` is ``make_run``'s compiled
program).  Above ``engine`` and ``backends``."""

from __future__ import annotations

import jax.numpy as jnp

from jaxbco.algorithms import AbstractAlgorithm
from jaxbco.engine import METRICS, Chunk, Outcome, finish, start
from jaxbco.problem import Problem


def simulate(
    problem: Problem,
    algorithm: AbstractAlgorithm,
    hyper,
    master,
    seed_ids,
    checkpoints,
    horizon: int,
    directions,
    comparator: bool,
    record_decisions: bool,
    x_star_given,
    scan_unroll: int,
    backend,
) -> Outcome:
    """The whole run, traced as one function: start, all T rounds as one chunk, finish.
    ``directions``: None or the replayed u_t, (T, d) or (T, S, d); ``backend``: the
    ``backends.AbstractBackend`` that runs the rounds."""
    carry, x_star = start(
        problem,
        algorithm,
        hyper,
        master,
        seed_ids,
        horizon,
        checkpoints.shape[0],
        comparator,
        record_decisions,
        x_star_given,
    )
    chunk = Chunk(problem, algorithm, hyper, master, seed_ids, x_star, checkpoints, horizon)
    carry = backend.advance(chunk._replace(scan_unroll=scan_unroll), carry, 1, directions)
    bufs, x_star, x_final, prox = finish(problem, algorithm, carry, x_star, checkpoints, horizon)
    return Outcome(bufs, carry.failed, carry.failed_round, x_star, x_final, carry.xbuf, prox)


def whole(
    problem,
    algorithm,
    cps,
    x_star_given,
    key,
    hyper,
    ids,
    n: int,
    horizon: int,
    comparator: bool,
    scan_unroll: int,
    backend,
):
    """``make_run``'s compiled program: ``simulate`` as a dict of curves (G, S, K), the
    problem's arrays arguments, not constants; ``ids``: the padded seed ids, of which the
    first ``n`` are reported."""
    res = simulate(
        problem,
        algorithm,
        hyper,
        key,
        ids,
        cps,
        horizon,
        None,
        comparator,
        False,
        x_star_given,
        scan_unroll,
        backend,
    )
    out = {m: jnp.moveaxis(res.bufs[i], 0, -1)[:, :n] for i, m in enumerate(METRICS)}
    out.update(
        failed=res.failed[:, :n],
        x_star=res.x_star[:n],
        x_final=res.x_final[:, :n],
        prox_certificate=res.prox[:, :n],
    )
    return out
