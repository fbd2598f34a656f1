"""One chunk of rounds as one kernel launch: the back-end's arrays laid out seeds-minor and
padded (coordinates to P = a power of two, seeds to a multiple of the block B), the
``pallas_call`` of ``kernel.body``, and the carry laid back (``backends.FusedKernel``)."""

from __future__ import annotations

import functools

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco.engine import Acc, Carry
from jaxbco.fused.kernel import Config, Spec, body, input_kinds
from jaxbco.fused.padding import padded_problem, pow2
from jaxbco.keys import seed_keys


def _pad_seeds(a, S_pad: int, axis: int):
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, S_pad - a.shape[axis])
    return jnp.pad(a, widths, mode="edge")


def _vec_minor(a, P: int, S_pad: int):
    """(..., S, d) -> (..., P, S_pad): coordinates padded with zeros, seeds minor."""
    a = jnp.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, P - a.shape[-1])])
    return _pad_seeds(jnp.swapaxes(a, -1, -2), S_pad, a.ndim - 1)


def _state_minor(a, d: int, P: int, S_pad: int):
    """A state leaf (G, S, k) seeds-minor: a coordinate vector (k = d) padded to P rows, other
    vectors (an algorithm's k multipliers, say) as they are where k is a power of two."""
    if a.shape[-1] == d:
        return _vec_minor(a, P, S_pad)
    if a.ndim != 3 or pow2(a.shape[-1]) != a.shape[-1]:
        raise ValueError(
            f"the fused kernel takes state vectors of length d = {d} or a power of "
            f"two; got a state leaf of shape {a.shape[2:]} per run"
        )
    return _pad_seeds(jnp.swapaxes(a, -1, -2), S_pad, 2)


def _vec_major(a, d: int, S: int):
    return jnp.swapaxes(a[..., :d, :S], -1, -2)


def launch(chunk, carry, t0, config: Config):
    """Rounds t0 .. t0 + chunk.length - 1 as one kernel launch (``backends.FusedKernel``'s
    ``advance``; ``chunk``: a ``backends.Chunk``)."""
    problem, algorithm, hyper, master, seed_ids, x_star, checkpoints = chunk[:7]
    length = chunk.length
    n_grid, S = carry.failed.shape
    d = problem.dim
    P = max(2, pow2(d))
    B = config.block  # not shrunk for small batches: the same program for every batch
    S_pad = -(-S // B) * B
    stream = carry.sums != ()
    per_seed = lambda a: _pad_seeds(a, S_pad, a.ndim - 1)
    per_run = lambda a: _pad_seeds(a, S_pad, 1) if a.ndim == 2 else _state_minor(a, d, P, S_pad)
    seed_data = lambda a: per_seed(a) if a.ndim == 1 else _vec_minor(a, P, S_pad)  # (S,) or (S, d)
    phi_leaves, phi_def = jax.tree_util.tree_flatten(carry.phi)
    phi_def = phi_def if phi_leaves else None  # shared constraint data: sampled in the kernel

    parr, pstatic = eqx.partition(padded_problem(problem, P), eqx.is_array)
    pleaves, pdef = jax.tree_util.tree_flatten(parr)
    hleaves, hdef = jax.tree_util.tree_flatten(hyper)
    sleaves, sdef = jax.tree_util.tree_flatten(carry.states)
    words = jax.random.key_data(seed_keys(master, seed_ids))
    spec = Spec(
        (pdef, pstatic),
        hdef,
        sdef,
        d,
        P,
        B,
        length,
        int(checkpoints.shape[0]),
        stream,
        phi_def,
        config.prefetch,
        min(config.unroll, length),
    )
    cps = jnp.asarray(checkpoints, jnp.int32)
    inputs = (
        [a.reshape(1) if a.ndim == 0 else a for a in pleaves]
        + list(hleaves)
        + [jnp.asarray(t0, jnp.int32).reshape(1), cps, per_seed(words[:, 0]), per_seed(words[:, 1])]
        + ([] if stream else [_vec_minor(x_star, P, S_pad)])
        + [per_run(a) for a in sleaves + list(carry.acc)]
        + [per_run(carry.failed.astype(jnp.int32)), per_run(carry.failed_round)]
        + [seed_data(a) for a in phi_leaves]
        + ([_vec_minor(carry.sums[0], P, S_pad), per_seed(carry.sums[1])] if stream else [])
        + [_pad_seeds(carry.bufs, S_pad, 3)]
        + ([_vec_minor(carry.sbuf[0], P, S_pad), per_seed(carry.sbuf[1])] if stream else [])
    )
    kinds = input_kinds(spec)
    assert len(kinds) == len(inputs)
    outputs = [i for i, k in enumerate(kinds) if k in "rsa" and i >= kinds.index("r")]
    out_shape = [jax.ShapeDtypeStruct(inputs[i].shape, inputs[i].dtype) for i in outputs]
    call = pl_call(
        spec,
        algorithm,
        config,
        out_shape,
        {i: n for n, i in enumerate(outputs)},
        (n_grid, S_pad // B),
    )
    outs = call(*inputs)
    it = iter(outs)
    take = lambda n: [next(it) for _ in range(n)]
    run_back = lambda a: a[:, :S] if a.ndim == 2 else _vec_major(a, d, S)
    states = jax.tree_util.tree_unflatten(
        sdef,
        [
            run_back(a) if a.ndim == 2 or old.shape[-1] == d else jnp.swapaxes(a[..., :S], -1, -2)
            for a, old in zip(take(len(sleaves)), sleaves)
        ],
    )
    acc = Acc(*[run_back(a) for a in take(4)])
    failed, failed_round = [run_back(a) for a in take(2)]
    seed_back = lambda a: a[:S] if a.ndim == 1 else _vec_major(a, d, S)
    phi = (
        jax.tree_util.tree_unflatten(phi_def, [seed_back(a) for a in take(len(phi_leaves))])
        if phi_leaves
        else carry.phi
    )
    sums = (_vec_major(next(it), d, S), next(it)[:S]) if stream else ()
    bufs = next(it)[..., :S]
    sbuf = (_vec_major(next(it), d, S), next(it)[..., :S]) if stream else ()
    hits = jnp.sum((cps >= t0) & (cps < t0 + length)).astype(carry.idx.dtype)
    return Carry(
        states, phi, acc, failed != 0, failed_round, bufs, carry.xbuf, carry.idx + hits, sums, sbuf
    )


def pl_call(spec, algorithm, config: Config, out_shape, aliases, grid):
    """The ``pallas_call`` (Triton on NVIDIA GPUs; interpreted where ``config.interpret``)."""
    from jax.experimental import pallas as pl

    params = {}
    if not config.interpret:
        from jax.experimental.pallas import triton as plgpu

        params["compiler_params"] = plgpu.CompilerParams(num_warps=config.warps, num_stages=1)
    return pl.pallas_call(
        functools.partial(body, spec, algorithm),
        out_shape=out_shape,
        grid=grid,
        input_output_aliases=aliases,
        interpret=config.interpret,
        name="jaxbco_rounds",
        **params,
    )
