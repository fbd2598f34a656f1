"""The engine: the carry, one round of one run and its bookkeeping, for G settings x S seeds.

    start:         comparator pre-pass (where x* cannot stream) and the carry before round 1;
    one_run:       round t of a run (or a seeds-minor block), the code every back-end runs;
    record_round:  the round's bookkeeping on the scan back-ends;
    finish:        x_{T+1}, and x* with its regret correction where x* streams.

The rounds themselves run on a back-end (``jaxbco.backends``: the seeds-minor scan, the
``vmap`` scan, the fused GPU kernel), each advancing a chunk of rounds t0 .. t0 + L - 1.

Round t (Alg. 1 lines 3-9 inside ``algorithm.play``/``step``): each seed's data theta_t,
direction u_t and next constraint data phi_{t+1} are drawn once from ``jaxbco.keys``'
streams and shared by every setting (common random numbers); f_t(x_t), g_t(x_t) and
f_t(x*) are accumulated; a run whose state turns non-finite is flagged and frozen; the
running sums are written at the checkpoint rounds only, so memory is O(G S K), never O(T).
Data a sequence declares ``shared`` are sampled once per round for every seed.
``jaxbco.simulate`` validates inputs and drives these (``sweep``:
chunks, devices, resume; ``make_run``: one jitted function of (key, hyper, seed ids)).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxbco import certificate as _certificate
from jaxbco import comparator as _comparator
from jaxbco._src import blocks
from jaxbco.algorithms import AbstractAlgorithm, RoundInput
from jaxbco.draws import CONSTRAINT, sample
from jaxbco.keys import seed_keys
from jaxbco.problem import Problem

METRICS = ("regret", "hard_violation", "soft_violation", "lam", "loss")


class Chunk(NamedTuple):
    """What every chunk of a run shares: ``AbstractBackend.advance``'s first argument (never
    donated; ``length`` and ``scan_unroll`` are static).

    Attributes:
        problem: the problem, cast to the run's dtype.
        algorithm: the algorithm.
        hyper: (G,) settings.
        master: the master key.
        seed_ids: (S,) seed ids.
        x_star: (S, d) the comparator.
        checkpoints: (K,) the rounds recorded.
        length: the rounds in the chunk.
        scan_unroll: rounds per iteration of the round scan.
    """

    problem: object
    algorithm: object
    hyper: object
    master: jax.Array
    seed_ids: jax.Array
    x_star: jax.Array
    checkpoints: jax.Array
    length: int = 0
    scan_unroll: int = 1


class Acc(NamedTuple):
    """Running sums of a run."""

    loss: jax.Array  # sum_s f_s(x_s)
    star: jax.Array  # sum_s f_s(x*)
    hard: jax.Array  # sum_s [g_s(x_s)]_+
    soft: jax.Array  # sum_s g_s(x_s)


class Carry(NamedTuple):
    """The scan carry: everything a chunk hands to the next one (checkpointed by ``resume``)."""

    states: object  # (G, S) algorithm states
    phi: object  # (S,) this round's constraint data phi_t; () when shared (``blocks.shared``)
    acc: Acc  # (G, S) running sums
    failed: jax.Array  # (G, S)
    failed_round: jax.Array  # (G, S)
    bufs: jax.Array  # (metrics, K, G, S) curves at the checkpoints
    xbuf: jax.Array  # (K or 0, G, S, d) decisions at the checkpoints
    idx: jax.Array  # () next checkpoint to fill
    sums: object  # streaming comparator: (S, d), (S,) running sums of ``stream_stats``; else ()
    sbuf: object  # the sums at the checkpoints, (K, S, d), (K, S); else ()


class Outcome(NamedTuple):
    """What a run hands back, on the device: curves (metrics, K, G, S), failure flags and
    rounds (G, S), x* (S, d), x_{T+1} (G, S, d), decisions at the checkpoints (K or 0, G, S, d),
    the worst prox certificate of each run (G, S; NaN for a method without a prox solve)."""

    bufs: jax.Array
    failed: jax.Array
    failed_round: jax.Array
    x_star: jax.Array
    x_final: jax.Array
    xbuf: jax.Array
    prox: jax.Array
    #: (G, S) |x_{T+1} - Pi_X(x_{T+1})| / (1 + D): how far each run's last decision lies
    #: outside X (``final_decisions`` with X given; None without)
    outside: jax.Array | None = None


def streaming(problem, comparator, x_star_given) -> bool:
    """Whether x* comes from running sums (``comparator.streams``) instead of a pre-pass."""
    return bool(comparator) and x_star_given is None and _comparator.streams(problem)


def selected(problem, horizon: int, comparator):
    """x*'s method: ``comparator`` itself where it is one (a sweep selects it once, in its
    plan, and passes it on), ``comparator.select``'s for True, None for False; a problem
    without one raises (``region.unsupported`` says why)."""
    if isinstance(comparator, _comparator.AbstractOfflineMethod):
        return comparator
    return _comparator.require(problem, horizon) if comparator else None


def seed_independent(problem) -> bool:
    """Whether every seed sees the same data (both sequences declare ``shared``), so that the
    offline x* is one point for all seeds: solved and certified once, then broadcast."""
    return blocks.shared(problem.loss_data) and blocks.shared(problem.constraint_data)


def start(
    problem: Problem,
    algorithm: AbstractAlgorithm,
    hyper,
    master,
    seed_ids,
    horizon: int,
    n_checkpoints: int,
    comparator,
    record_decisions: bool,
    x_star_given=None,
):
    """The carry before round 1 and x* (S, d): ``x_star_given`` (a seed-independent x* from
    ``method.fixed``, solved on the host) as is, else the offline optimum of each seed's data (a
    pre-pass over its T rounds; once for all seeds where the data are ``seed_independent``)
    unless x* streams; x_1 without a comparator.  ``comparator``: x*'s method
    (``comparator.AbstractOfflineMethod``, selected once by the caller), True (select it
    here) or False."""
    keys = seed_keys(master, seed_ids)  # (S,)
    n_grid = jax.tree_util.tree_leaves(hyper)[0].shape[0]
    S = keys.shape[0]
    x1 = problem.initial_point()
    dtype = x1.dtype
    stream = streaming(problem, comparator, x_star_given)
    method = None if x_star_given is not None else selected(problem, horizon, comparator)
    if comparator and x_star_given is not None:
        x_star = jnp.broadcast_to(jnp.asarray(x_star_given, dtype), (S,) + x1.shape)
    elif method is not None and not stream and seed_independent(problem):  # one solve, all seeds
        x_star = jnp.broadcast_to(method.solve(problem, keys[0], horizon), (S,) + x1.shape)
    elif method is not None and not stream:
        x_star = method.solve_batch(problem, keys, horizon)
    else:
        x_star = jnp.broadcast_to(x1, (S,) + x1.shape)

    def init_grid(h):
        return jax.vmap(lambda _: algorithm.init(problem, h, x1))(keys)

    one = jnp.asarray(1, jnp.int32)
    phis = (
        ()
        if blocks.shared(problem.constraint_data)
        else jax.vmap(  # shared: drawn per round
            lambda k: sample(problem.constraint_data, k, one, CONSTRAINT)
        )(keys)
    )
    zeros = jnp.zeros((n_grid, S), dtype)
    sums = sbuf = ()
    if stream:
        theta_like = jax.eval_shape(lambda: problem.loss_data.sample(keys[0], one))
        sums = (jnp.zeros((S,) + theta_like.shape, dtype), jnp.zeros((S,), dtype))
        sbuf = jax.tree_util.tree_map(lambda a: jnp.zeros((n_checkpoints,) + a.shape, dtype), sums)
    carry = Carry(
        states=jax.vmap(init_grid)(hyper),
        phi=phis,
        acc=Acc(zeros, zeros, zeros, zeros),
        failed=jnp.zeros((n_grid, S), bool),
        failed_round=jnp.zeros((n_grid, S), jnp.int32),
        bufs=jnp.full((len(METRICS), n_checkpoints, n_grid, S), jnp.nan, dtype),
        xbuf=jnp.zeros((n_checkpoints if record_decisions else 0, n_grid, S, x1.shape[0]), dtype),
        idx=jnp.zeros((), jnp.int32),
        sums=sums,
        sbuf=sbuf,
    )
    return carry, x_star


def one_run(problem, algorithm, stream: bool, nb: int, stack: bool = True):
    """Round t of one run (or of a seeds-minor block, ``nb`` trailing batch axes): play x_t,
    score it, step, freeze on a non-finite state; returns the new state, sums, failure flag,
    this round's record (the curves' values, ``METRICS`` order: stacked, or a tuple when not
    ``stack``) and x_t.  Also the fused kernel's round (``jaxbco.fused``)."""

    def per_run(h, state, acc, failed, theta, phi, phi_next, u, ka, xs, t):
        inp = RoundInput(t, theta, phi, phi_next, u, ka)
        x = algorithm.play(state, problem, h, inp)
        f = problem.loss.value(x, theta)
        g = problem.constraint.value(x, phi)
        f_star = jnp.zeros_like(f) if stream else problem.loss.value(xs, theta)
        lam = algorithm.multiplier(state)
        new = algorithm.step(state, problem, h, inp)
        finite = jnp.isfinite(f) & jnp.isfinite(g)
        for leaf in jax.tree_util.tree_leaves(new):
            finite = finite & blocks.all_finite(leaf, nb)
        now_failed = failed | ~finite
        new = jax.tree_util.tree_map(lambda a, b: jnp.where(now_failed, a, b), state, new)
        acc_new = Acc(acc.loss + f, acc.star + f_star, acc.hard + jnp.maximum(g, 0.0), acc.soft + g)
        acc_new = jax.tree_util.tree_map(lambda a, b: jnp.where(now_failed, a, b), acc, acc_new)
        rec = (acc_new.loss - acc_new.star, acc_new.hard, acc_new.soft, lam, f)
        rec = tuple(jnp.where(now_failed, jnp.nan, r) for r in rec)
        return new, acc_new, now_failed, jnp.stack(rec) if stack else rec, x

    return per_run


def record_round(
    c: Carry, t, checkpoints, states, acc, now_failed, rec, xs_now, stats, phi_next, active=True
) -> Carry:
    """Round t's bookkeeping, the same on every scan back-end: the round of first failure, the
    curves and decisions written at a checkpoint round, the streaming comparator's sums
    (``stats``: this round's, laid out like ``c.sums``; () without), the next round's
    constraint data (() when shared).  ``active``: False for a padded round that changes
    nothing (the seeds-minor blocks)."""
    n_ck = checkpoints.shape[0]
    failed_round = jnp.where(now_failed & ~c.failed, t, c.failed_round)
    j = jnp.minimum(c.idx, n_ck - 1)
    hit = (c.idx < n_ck) & (checkpoints[j] == t) & active
    bufs = c.bufs.at[:, j].set(jnp.where(hit, rec, c.bufs[:, j]))
    xbuf = c.xbuf
    if xbuf.shape[0] > 0:  # decisions recorded
        xbuf = xbuf.at[j].set(jnp.where(hit, xs_now, xbuf[j]))
    sums, sbuf = c.sums, c.sbuf
    if sums != ():
        sums = jax.tree_util.tree_map(jnp.add, sums, stats)
        sbuf = jax.tree_util.tree_map(lambda b, v: b.at[j].set(jnp.where(hit, v, b[j])), sbuf, sums)
    return Carry(
        states, phi_next, acc, now_failed, failed_round, bufs, xbuf, c.idx + hit, sums, sbuf
    )


def finish(
    problem: Problem, algorithm: AbstractAlgorithm, carry: Carry, x_star, checkpoints, horizon: int
):
    """(bufs, x_star, x_final, prox): x_{T+1} of every run, (G, S, d), and its worst prox
    certificate (G, S); with a streaming comparator x* from the sums over all T rounds, and
    sum_{s<=t} f_s(x*) taken off the regret curves."""
    x_final, prox = final_decisions(algorithm, carry.states, carry.failed)
    bufs, x_star = finish_comparator(
        problem, carry.bufs, carry.sums, carry.sbuf, x_star, checkpoints, horizon
    )
    return bufs, x_star, x_final, prox


def final_decisions(algorithm: AbstractAlgorithm, states, failed, domain=None):
    """(x_{T+1} (G, S, d), NaN for a failed run (``failed`` (G, S)), the worst prox certificate
    (G, S), NaN for a method without a prox solve): the algorithm's part of ``finish``; with
    ``domain`` X, also how far x_{T+1} lies outside X, |x - Pi_X(x)| / (1 + D), (G, S)."""
    x_final = jax.vmap(jax.vmap(algorithm.decision))(states)
    x_final = jnp.where(failed[..., None], jnp.nan, x_final)  # its last state is stale
    if domain is not None:
        gap = x_final - jax.vmap(jax.vmap(domain.project))(x_final)
        D = domain.diameter().astype(x_final.dtype)
        outside = jnp.sqrt(jnp.sum(gap * gap, axis=-1)) / (1.0 + D)
    prox = jax.vmap(jax.vmap(algorithm.prox_certificate))(states)
    if prox is None:
        prox = jnp.full(x_final.shape[:2], jnp.nan, x_final.dtype)
    return (x_final, prox) if domain is None else (x_final, prox, outside)


def finish_comparator(
    problem: Problem, bufs, sums, sbuf, x_star, checkpoints, horizon: int, method=None
):
    """(bufs, x_star): the comparator's part of ``finish``, which no algorithm enters (so one
    compiled program serves every algorithm on a problem): with a streaming comparator
    (``sums`` not empty) x* from the sums over all T rounds, and sum_{s<=t} f_s(x*) taken off
    the regret curves; else ``bufs`` and ``x_star`` as they are.  ``method``: x*'s method as
    selected (None: select it here)."""
    if sums == ():
        return bufs, x_star
    x_star = selected(problem, horizon, method or True).from_sums(problem, sums, horizon)
    tk = checkpoints.astype(x_star.dtype)[:, None]
    # On seeds-minor blocks, (d, K, S): every seed takes the same vector path, whatever S.
    x_block = jnp.moveaxis(x_star, -1, 0)[:, None, :]
    s_theta = jnp.moveaxis(sbuf[0], -1, 0)
    star = _comparator.stream_star(blocks.expand(problem), x_block, (s_theta, sbuf[1]), tk)
    return bufs.at[0].add(-star[:, None, :]), x_star


def certify_comparator(
    problem: Problem, master, seed_ids, x_star, sums, horizon: int, given: bool, fast=None
) -> _certificate.Certificate:
    """The certificate of each seed's x* (``jaxbco.certificate``), fields (S,): from one pass
    over the seed's rounds, F's cuts from the streaming sums where x* streamed (``sums`` not
    empty); a seed-independent x* (``given``) certified once, on the first seed's data.
    ``fast`` None: the cheap certificate (``certificate.certify_quick``); else that cheap
    certificate, completed where it fails (``certificate.certify_full``, a program of its
    own)."""
    keys = seed_keys(master, seed_ids)
    cuts = None
    if sums != () and not given:
        cuts = lambda i: _comparator.stream_cuts(problem, (sums[0][i], sums[1][i]), horizon)
    if given:
        keys, x_star = keys[:1], x_star[:1]
        fast = None if fast is None else jax.tree_util.tree_map(lambda a: a[:1], fast)
    if fast is None:
        cert = _certificate.certify_quick(problem, keys, horizon, x_star, cuts)
    else:
        cert = _certificate.certify_full(problem, keys, horizon, x_star, fast, cuts)
    if given:
        return jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a[0], seed_ids.shape), cert)
    return cert
