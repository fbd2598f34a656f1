"""Seeds over devices: a 1-D ``Mesh`` over the local devices and ``shard_map`` of the engine.

Every seed is computed by the same per-seed program whichever device holds it (no collective
crosses the seed axis), and each device's share is a multiple of ``SEED_PAD`` lanes, so a
sharded run is bitwise identical to a one-device run.  Several hosts: ``host_share`` gives
this process its contiguous block of the seed ids after ``jax.distributed.initialize()``.
"""

from __future__ import annotations

import equinox as eqx
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

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

        return jax.shard_map(inner, mesh=mesh, in_specs=specs, out_specs=out_specs,
                             check_vma=False)(*dyn)

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
