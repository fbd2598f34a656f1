"""The ``vmap`` back-end: each run's own code under ``vmap`` over the grid and the seeds, one
``lax.scan`` over the rounds.  Any run can take it (a component of your own that declares
nothing runs here, unchanged)."""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp

from jaxbco import comparator as _comparator
from jaxbco import draws, engine
from jaxbco._src import blocks
from jaxbco.backends._base import AbstractBackend, Chunk
from jaxbco.keys import algorithm_key, seed_keys


class VmapScan(AbstractBackend):
    """Rounds under ``vmap``: θₜ, uₜ and φₜ₊₁ drawn per seed from its round streams
    (``jaxbco.keys``), shared data (``blocks.shared``) sampled once and entering unmapped.

    Example:
        >>> from jaxbco import backends, problems
        >>> from jaxbco.algorithms import RectifiedBCO
        >>> backend = backends.VmapScan()   # takes every run
        >>> backend.name, backend.blocker(problems.make("quadratic-ball", dim=2), RectifiedBCO())
        ('vmap', None)
    """

    name: ClassVar[str] = "vmap"
    flag: ClassVar[str | None] = None

    def advance(self, chunk: Chunk, carry, t0, directions):
        problem, algorithm, hyper, master, seed_ids, x_star, checkpoints = chunk[:7]
        length, scan_unroll = chunk.length, chunk.scan_unroll
        keys = seed_keys(master, seed_ids)
        dtype = x_star.dtype
        stream = carry.sums != ()
        loss_shared = blocks.shared(problem.loss_data)
        constraint_shared = blocks.shared(problem.constraint_data)
        per_run = engine.one_run(problem, algorithm, stream, 0)

        def over_runs(states, acc, failed, theta, phi, phi_next, u, ka, t):
            # shared data (one value for every seed) enter unmapped, never copied per seed
            ax = lambda shared: None if shared else 0
            data_axes = (
                ax(loss_shared),
                ax(constraint_shared),
                ax(constraint_shared),
                ax(u.ndim == 1),
            )
            over_seeds = jax.vmap(per_run, (None, 0, 0, 0) + data_axes + (0, 0, None))
            over_grid = jax.vmap(over_seeds, (0, 0, 0, 0, None, None, None, None, None, None, None))
            states, acc, now_failed, rec, x = over_grid(
                hyper, states, acc, failed, theta, phi, phi_next, u, ka, x_star, t
            )
            return states, acc, now_failed, jnp.moveaxis(rec, -1, 0), x

        def round_(c, t, u_replay):
            theta, phi, phi_next = draws.shared_data(problem, t)
            theta_d, u, phi_d = jax.vmap(
                lambda k: draws.round_draws(problem, k, t, dtype, directions=u_replay is None)
            )(keys)
            ka = jax.vmap(algorithm_key, (0, None))(keys, t)
            theta = theta_d if theta is None else theta
            if phi is None:
                phi, phi_next = c.phi, phi_d
            if u_replay is not None:  # (d,) shared by every seed, or (S, d)
                u = u_replay
            states, acc, now_failed, rec, xs_now = over_runs(
                c.states, c.acc, c.failed, theta, phi, phi_next, u, ka, t
            )
            stats = ()
            if stream:
                if loss_shared:  # one shared theta, vector axis leading: broadcast onto the sums
                    stats = _comparator.stream_stats(problem, theta)
                else:
                    stats = jax.vmap(lambda th: _comparator.stream_stats(problem, th))(theta)
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
            )

        def body(c, xs):
            t, u_replay = xs
            return round_(c, t, u_replay), None

        ts = jnp.asarray(t0, jnp.int32) + jnp.arange(length, dtype=jnp.int32)
        carry, _ = jax.lax.scan(body, carry, (ts, directions), unroll=scan_unroll)
        return carry
