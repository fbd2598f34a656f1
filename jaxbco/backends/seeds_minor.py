"""Seeds as the minor axis: the engine's fast layout for problems whose code allows it.

Under ``vmap`` a run's vectors live in (grid, seeds, d) arrays, and XLA's CPU code loops with
the short coordinate axis d innermost: every reduction over d is a horizontal sum of d lanes
(d = 10 on the throughput workload).  Laid out (d, grid, seeds) instead, the same reduction is
d vector adds across seeds, which is faster.  ``vmap`` cannot give that layout (JAX moves
batch axes to the front wherever shapes differ), so for the components below the engine calls
the per-run code directly on seeds-minor blocks:

    vectors (d, R),   per-run scalars and hyperparameters (R,),   the problem's arrays (d, 1),

over the R = G x S runs (a seed's data repeated over the grid), which broadcasting lines up
(a separate unit grid axis, (d, 1, S), is slower on XLA's CPU backend), with
every reduction over d taken over the leading axis.  A run takes
this back-end when every component declares that its code is written that way
(``blocks = True``; chosen by ``jaxbco.backends.select``); everything else runs under
``vmap`` (``vmap_scan.py``).
Data a sequence declares ``shared`` are sampled once per round, laid out (..., 1) and
broadcast, never tiled per seed.  The carry keeps the usual (G, S, ...) layout between chunks (transposed
once per chunk, not per round), so resume, sharding and results do not depend on the layout;
a seed's numbers still depend only on its key (the round streams of ``jaxbco.keys``, counters
hashed by Threefry).
"""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp

from jaxbco import comparator as _comparator
from jaxbco import draws, engine
from jaxbco._src import blocks
from jaxbco._src.prng import KeyBlock
from jaxbco.backends._base import AbstractBackend, Chunk
from jaxbco.keys import algorithm_key, seed_keys

BLOCK = 8  # rounds drawn at once (the fastest on the throughput workload)


def draw_rounds(problem, k0, k1, ts, dtype, directions: bool = True):
    """(theta_t, u_t, phi_{t+1}) of the rounds ``ts`` (B,) for every seed, each (B, ..., S):
    ``draws.round_draws`` on the block's ``KeyBlock`` (the per-seed streams' bits), one hash
    over the whole (B, ..., S) grid (large enough for XLA to split across cores), computed
    once.  Shared data (``blocks.shared``), and u_t when ``directions`` is False (replayed),
    are not drawn here: () in their place.  ``problem``: laid out for blocks
    (``blocks.expand``)."""
    block = KeyBlock(k0, k1)
    return jax.lax.optimization_barrier(
        jax.vmap(lambda t: draws.round_draws(problem, block, t, dtype, directions=directions))(ts)
    )


def over_runs(per_run, hyper, x_star, n_grid: int, n_seeds: int, record_decisions: bool):
    """``per_run`` on blocks over the R = G S runs (run g * S + s): vectors (d, R), per-run
    scalars and hyperparameters (R,); a seed's data repeated over the grid (common random
    numbers).  The function the engine's round calls with the (S,)-batched draws."""

    def runs(a):  # a seed's values (..., S) -> (..., R); shared data (..., 1) broadcast as is
        if jnp.ndim(a) >= 1 and a.shape[-1] == n_seeds:
            return jnp.tile(a, (1,) * (a.ndim - 1) + (n_grid,))
        return a

    tiled = lambda tree: jax.tree_util.tree_map(runs, tree)
    hyper_b = jax.tree_util.tree_map(lambda v: jnp.repeat(v, n_seeds), hyper)
    xs_block = runs(jnp.moveaxis(x_star, 0, -1))  # used only without a streaming x*

    def call(states, acc, failed, theta, phi, phi_next, u, ka, t):
        states, acc, now_failed, rec, x = per_run(
            hyper_b,
            states,
            acc,
            failed,
            tiled(theta),
            tiled(phi),
            tiled(phi_next),
            runs(u),
            tiled(ka),
            xs_block,
            t,
        )
        if record_decisions:
            x = jnp.moveaxis(x, 0, -1).reshape(n_grid, n_seeds, -1)
        return states, acc, now_failed, rec, x

    return call


def scan_blocks(
    round_, problem, keys, carry, ts, length: int, dtype, unroll: int = 1, directions=None
):
    """The rounds ``ts`` (a chunk of ``length``) seeds-minor: the carry transposed once each way,
    the draws made for blocks of ``BLOCK`` rounds aligned to round 1 (``draw_rounds``), a
    block's rounds outside the chunk run but change nothing.  So every round of every
    chunking runs the same compiled block body: bitwise the same results.  ``directions``:
    None, or the chunk's replayed uₜ, (length, d) shared or (length, S, d) per seed."""
    words = jax.random.key_data(keys)
    k0, k1 = words[:, 0], words[:, 1]
    n_grid, n_seeds = carry.failed.shape
    t_end = ts[0] + length  # first round after the chunk
    first = ((ts[0] - 1) // BLOCK) * BLOCK + 1

    def block_body(c, k):
        t_block = first + k * BLOCK + jnp.arange(BLOCK, dtype=jnp.int32)
        drawn = draw_rounds(
            problem,
            k0,
            k1,
            t_block,
            dtype,  # problem laid out for blocks
            directions is None,
        )

        def one(c, xs):
            t = xs[0]
            active = (t >= ts[0]) & (t < t_end)
            u = (
                None
                if directions is None
                else jax.lax.dynamic_index_in_dim(
                    directions, jnp.clip(t - ts[0], 0, length - 1), keepdims=False
                )
            )
            new = round_(c, t, u, xs[1:], active)
            keep = lambda a, b: jnp.where(active, a, b)
            return new._replace(
                states=jax.tree_util.tree_map(keep, new.states, c.states),
                phi=jax.tree_util.tree_map(keep, new.phi, c.phi),
                acc=jax.tree_util.tree_map(keep, new.acc, c.acc),
                failed=keep(new.failed, c.failed),
                failed_round=keep(new.failed_round, c.failed_round),
                sums=jax.tree_util.tree_map(keep, new.sums, c.sums),
            ), None

        c, _ = jax.lax.scan(one, c, (t_block,) + drawn, unroll=unroll)
        return c, None

    n_blocks = -(-(length + BLOCK - 1) // BLOCK)  # blocks enough for any alignment of t0
    carry = carry_to_runs(carry)
    carry, _ = jax.lax.scan(block_body, carry, jnp.arange(n_blocks, dtype=jnp.int32))
    return carry_from_runs(carry, n_grid, n_seeds)


def carry_to_runs(carry):
    """The engine's carry, (G, S, ...) leaves, as seeds-minor blocks over the R = G S runs."""
    G, S = carry.failed.shape
    flat = lambda a: a.reshape((G * S,) + a.shape[2:])
    return carry._replace(
        states=blocks.to_minor(jax.tree_util.tree_map(flat, carry.states), 1),
        acc=jax.tree_util.tree_map(flat, carry.acc),
        failed=flat(carry.failed),
        failed_round=flat(carry.failed_round),
        bufs=carry.bufs.reshape(carry.bufs.shape[:2] + (G * S,)),
        phi=blocks.to_minor(carry.phi, 1),
        sums=blocks.to_minor(carry.sums, 1),
        sbuf=jax.tree_util.tree_map(lambda a: jnp.moveaxis(a, 1, -1), carry.sbuf),
    )


def carry_from_runs(carry, G: int, S: int):
    """Inverse of ``carry_to_runs``."""
    unflat = lambda a: a.reshape((G, S) + a.shape[1:])
    return carry._replace(
        states=jax.tree_util.tree_map(unflat, blocks.from_minor(carry.states, 1)),
        acc=jax.tree_util.tree_map(unflat, carry.acc),
        failed=unflat(carry.failed),
        failed_round=unflat(carry.failed_round),
        bufs=carry.bufs.reshape(carry.bufs.shape[:2] + (G, S)),
        phi=blocks.from_minor(carry.phi, 1),
        sums=blocks.from_minor(carry.sums, 1),
        sbuf=jax.tree_util.tree_map(lambda a: jnp.moveaxis(a, -1, 1), carry.sbuf),
    )


class SeedsMinorScan(AbstractBackend):
    """Rounds on seeds-minor blocks (this module's docstring): every component and prox method
    declares ``blocks``.

    Example:
        >>> from jaxbco import backends, problems
        >>> from jaxbco.algorithms import RectifiedBCO
        >>> backend = backends.SeedsMinorScan()
        >>> backend.name, backend.blocker(problems.make("quadratic-ball", dim=2), RectifiedBCO())
        ('seeds-minor', None)
    """

    name: ClassVar[str] = "seeds-minor"
    flag: ClassVar[str | None] = "blocks"

    def advance(self, chunk: Chunk, carry, t0, directions):
        problem, algorithm, hyper, master, seed_ids, x_star, checkpoints = chunk[:7]
        length, scan_unroll = chunk.length, chunk.scan_unroll
        keys = seed_keys(master, seed_ids)
        dtype = x_star.dtype
        record_decisions = carry.xbuf.shape[0] > 0
        stream = carry.sums != ()
        n_grid, n_seeds = carry.failed.shape
        constraint_shared = blocks.shared(problem.constraint_data)
        laid = blocks.expand(problem)  # the problem's arrays (..., 1): shared by every run
        words = jax.random.key_data(keys)
        k0, k1 = words[:, 0], words[:, 1]
        runs = over_runs(
            engine.one_run(laid, algorithm, stream, blocks.BATCH),
            hyper,
            x_star,
            n_grid,
            n_seeds,
            record_decisions,
        )

        def round_(c, t, u_replay=None, drawn=None, active=True):
            theta, phi, phi_next = draws.shared_data(laid, t)
            theta_d, u, phi_d = drawn  # drawn for a block of rounds (``draw_rounds``)
            if u_replay is not None:  # (d,) shared: (d, 1), broadcast; (S, d): (d, S)
                u = u_replay[:, None] if u_replay.ndim == 1 else jnp.moveaxis(u_replay, 0, -1)
            theta = theta_d if theta is None else theta
            if phi is None:  # drawn constraint data, carried in the carry's (..., S) layout
                phi = c.phi
                phi_next = jax.tree_util.tree_map(
                    lambda a, b: jnp.broadcast_to(a, b.shape), phi_d, c.phi
                )
            ka = algorithm_key(KeyBlock(k0, k1), t)
            states, acc, now_failed, rec, xs_now = runs(
                c.states, c.acc, c.failed, theta, phi, phi_next, u, ka, t
            )
            # vector axis leading: a block, broadcast onto the sums
            stats = _comparator.stream_stats(problem, theta) if stream else ()
            return engine.record_round(
                c,
                t,
                checkpoints,
                states,
                acc,
                now_failed,
                rec,
                xs_now,
                stats,
                phi_next if not constraint_shared else (),
                active,
            )

        ts = jnp.asarray(t0, jnp.int32) + jnp.arange(length, dtype=jnp.int32)
        return scan_blocks(round_, laid, keys, carry, ts, length, dtype, scan_unroll, directions)
