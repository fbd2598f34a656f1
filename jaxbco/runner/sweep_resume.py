"""Resuming a sweep (``sweep(..., resume=PATH)``): the configuration hash a resume file is
keyed by, and the state a killed run left, put back on the run's devices."""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp

from jaxbco._src import resume as _resume
from jaxbco.runner import devices as _devices
from jaxbco.runner.sweep_stages import Plan, State, _start_args


def config_hash(p: Plan) -> str | None:
    """The resume file's configuration hash (None without ``resume``)."""
    if p.resume is None:
        return None
    s = p.setup
    config = (s.problem, s.algorithm, p.hyper_c, p.master, p.padded, s.horizon)
    return _resume.fingerprint(
        config + (s.checkpoints, str(s.dtype), p.comparator, p.record_decisions, p.directions)
    )


def resumed(p: Plan, config_hash: str | None) -> State | None:
    """The state a resumed run left (same configuration and versions), or None."""
    if p.resume is None or not os.path.exists(p.resume):
        return None
    start_args = _start_args(p)
    like = jax.eval_shape(lambda: _devices.start(*start_args)[0])  # shapes only
    leaves, x_star, t_next, earlier = _resume.load(p.resume, like, config_hash, with_wall=True)
    on_mesh = lambda spec, part: jax.tree_util.tree_map(
        lambda a: _devices.put(jnp.asarray(a), p.mesh, spec), part
    )
    is_spec = lambda x: isinstance(x, jax.sharding.PartitionSpec)
    carry = jax.tree_util.tree_map(on_mesh, _devices.CARRY_SPECS, leaves, is_leaf=is_spec)
    x_star = _devices.put(jnp.asarray(x_star), p.mesh, _devices.SPEC_S)
    return State(carry, x_star, t_next, earlier, config_hash)
