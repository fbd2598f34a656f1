"""Seeds over devices: a 1-D ``Mesh`` over the local devices and ``shard_map`` of the engine.

Every seed is computed by the same per-seed program whichever device holds it (no collective
crosses the seed axis), and each device's share is a multiple of ``simulate.SEED_PAD`` lanes,
so a sharded run is bitwise identical to a one-device run.  Several hosts: ``host_share`` gives
this process its contiguous block of the seed ids after ``jax.distributed.initialize()``.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from jaxbco import engine as _engine
from jaxbco.backends import AbstractBackend
from jaxbco.certificate import Certificate
from jaxbco.engine import Chunk

SEEDS = "seeds"  # the mesh axis name


def seed_mesh(devices=None) -> Mesh | None:
    """A 1-D mesh over ``devices`` (default: all local devices); None for a single device."""
    devices = jax.local_devices() if devices is None else list(devices)
    if len(devices) == 0:
        raise ValueError("devices must be a non-empty list of jax devices")
    if len(devices) == 1:
        return None
    return Mesh(np.asarray(devices), (SEEDS,))


def n_devices(mesh: Mesh | None) -> int:
    return 1 if mesh is None else mesh.size


def put(x, mesh: Mesh | None, spec: P):
    """Place ``x`` on the mesh with ``spec`` (no-op without a mesh)."""
    if mesh is None:
        return x
    return jax.device_put(x, NamedSharding(mesh, spec))


def sharded(fn, mesh: Mesh | None, in_specs, out_specs):
    """``shard_map`` of ``fn`` over the seed axis.  Non-array arguments (static fields, Python
    scalars) are closed over; ``in_specs`` gives the leading arguments' specs (the rest must be
    static or replicated)."""
    if mesh is None:
        return fn

    def wrapped(*args):
        dyn, static = eqx.partition(args, eqx.is_array)
        specs = tuple(in_specs) + (P(),) * (len(args) - len(in_specs))  # trailing static args

        def inner(*dyn_args):
            return fn(*eqx.combine(dyn_args, static))

        return jax.shard_map(
            inner, mesh=mesh, in_specs=specs, out_specs=out_specs, check_vma=False
        )(*dyn)

    return wrapped


def host_share(seed_ids) -> np.ndarray:
    """This process's contiguous block of ``seed_ids`` (all of them on a single host).

    With ``jax.distributed.initialize()`` each of the ``jax.process_count()`` hosts runs its
    block on its own local devices; a seed's result never depends on where it ran."""
    ids = np.asarray(seed_ids)
    count, index = jax.process_count(), jax.process_index()
    if count == 1:
        return ids
    return np.array_split(ids, count)[index]


# The engine's programs sharded over the seed axis (``jaxbco.engine``): where the seed axis
# sits in each part of the carry (shard_map specs, prefixes of the carry), then start,
# advance and finish as ``shard_map``s (plain functions on one device).
SPEC_S = P(SEEDS)
_SPEC_GS = P(None, SEEDS)
CARRY_SPECS = _engine.Carry(
    states=_SPEC_GS,
    phi=SPEC_S,
    acc=_SPEC_GS,
    failed=_SPEC_GS,
    failed_round=_SPEC_GS,
    bufs=P(None, None, None, SEEDS),
    xbuf=P(None, None, SEEDS),
    idx=P(),
    sums=SPEC_S,
    sbuf=_SPEC_GS,
)


def start(mesh, *args):
    """``engine.start(*args)`` with the seeds sharded over ``mesh``: (carry, x_star); a given
    x* per seed (its last argument, (S, d): an earlier run's, ``comparator.Optimum``) sharded
    with the seeds."""
    x_star_given = args[9] if len(args) > 9 else None
    per_seed = x_star_given is not None and np.ndim(x_star_given) == 2
    specs = (P(), P(), P(), P(), SPEC_S) + ((P(),) * 4 + (SPEC_S,) if per_seed else ())
    return sharded(_engine.start, mesh, specs, (CARRY_SPECS, SPEC_S))(*args)


CHUNK_SPECS = Chunk(P(), P(), P(), P(), SPEC_S, SPEC_S, P(), P(), P())


class Sharded(AbstractBackend):
    """A back-end with the seeds sharded over a mesh: ``inner``'s ``advance`` under
    ``shard_map`` (the same arguments, each seed's on the device that holds it); on one device
    (``mesh`` None), ``inner``'s ``advance`` itself.

    Attributes:
        inner: the back-end that runs each device's seeds.
        mesh: the devices' mesh (``seed_mesh``), or None.
    """

    inner: AbstractBackend
    mesh: Mesh | None = eqx.field(static=True, default=None)
    flag: ClassVar[str | None] = None

    @property
    def name(self) -> str:
        return self.inner.name

    def blocker(self, *args, **kwargs) -> str | None:
        return self.inner.blocker(*args, **kwargs)

    def advance(self, chunk: Chunk, carry, t0, directions):
        dir_spec = P(None, SEEDS) if directions is not None and directions.ndim == 3 else P()
        specs = (CHUNK_SPECS, CARRY_SPECS, P(), dir_spec)
        return sharded(self.inner.advance, self.mesh, specs, CARRY_SPECS)(
            chunk, carry, t0, directions
        )


def final_decisions(mesh, algorithm, states, failed, domain):
    """``engine.final_decisions`` with the seeds sharded: x_final (G, S, d), prox (G, S), how
    far x_final lies outside X (G, S)."""
    specs = (P(), CARRY_SPECS.states, _SPEC_GS, P())
    fn = sharded(_engine.final_decisions, mesh, specs, (_SPEC_GS,) * 3)
    return fn(algorithm, states, failed, domain)


def certify_comparator(mesh, problem, master, seed_ids, x_star, sums, horizon, given, fast=None):
    """``engine.certify_comparator`` with the seeds sharded: the certificate, fields (S,)
    (``fast`` None: the cheap one; else the cheap one completed)."""
    cert_specs = Certificate(SPEC_S, SPEC_S, SPEC_S)
    fn = sharded(
        lambda p, m, ids, xs, s, f: _engine.certify_comparator(p, m, ids, xs, s, horizon, given, f),
        mesh,
        (P(), P(), SPEC_S, SPEC_S, CARRY_SPECS.sums, cert_specs if fast is not None else P()),
        cert_specs,
    )
    return fn(problem, master, seed_ids, x_star, sums, fast)


def finish_comparator(mesh, problem, bufs, sums, sbuf, x_star, checkpoints, horizon, method=None):
    """``engine.finish_comparator`` with the seeds sharded: (bufs, x_star); no algorithm in
    its arguments, so one compiled program serves every algorithm run on the problem."""
    fn = sharded(
        lambda p, b, s, sb, xs, ck: _engine.finish_comparator(p, b, s, sb, xs, ck, horizon, method),
        mesh,
        (P(), CARRY_SPECS.bufs, CARRY_SPECS.sums, CARRY_SPECS.sbuf, SPEC_S, P()),
        (CARRY_SPECS.bufs, SPEC_S),
    )
    return fn(problem, bufs, sums, sbuf, x_star, checkpoints)
