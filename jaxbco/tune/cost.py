"""Measured cost of a tuning step in run-equivalents (``measure_cost``): the wall time of one
forward and one reverse gradient step against that of one value-only call, next to the counts
``jaxbco.tune.step`` states.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp

from jaxbco._src import checks
from jaxbco.tune.objective import _Context, training_ids
from jaxbco.tune.step import FORWARD, REVERSE, _compiled_step, default_optimizer


def measure_cost(
    problem,
    horizon: int,
    *,
    algorithm=None,
    init=None,
    free=("c", "eps", "alpha_scale"),
    seeds: int = 64,
    key=0,
    dtype="float32",
    repeats: int = 2,
) -> dict:
    """Measured cost of a gradient in run-equivalents: wall time (compile excluded, best of
    ``repeats``) of one forward and one reverse (checkpointed) tuning step on ``seeds`` seeds,
    divided by that of one exact value-only call on the same seeds (comparator included in
    both).  Returns the three times and the two ratios next to the counted k + 1 and 4."""
    ctx = _Context(
        problem,
        horizon,
        algorithm=algorithm,
        init=init,
        free=free,
        transforms=None,
        kappa=1.0,
        key=key,
        dtype=dtype,
    )
    ids = training_ids(0, checks.check_positive_int("seeds", seeds), False)

    def best(f):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            jax.block_until_ready(f())
            times.append(time.perf_counter() - t0)
        return min(times)

    h = ctx.stack(
        [ctx.finalize(ctx.space.decode(jnp.asarray(ctx.space.start(ctx.init), ctx.dtype)))]
    )
    plain = ctx._run.lower(h, jnp.asarray(ids, jnp.uint32)).compile()
    out = {
        "value_s": best(lambda: plain(h, jnp.asarray(ids, jnp.uint32))),
        "seeds": len(ids),
        "k": ctx.space.k,
    }
    for mode in (FORWARD, REVERSE):
        compiled, z, opt_state, mu, counted = _compiled_step(
            ctx, mode, default_optimizer(1), None, True, ids
        )
        out[f"{mode}_s"] = best(lambda: compiled(z, opt_state, mu, jnp.asarray(ids, jnp.uint32)))
        out[f"{mode}_ratio"] = out[f"{mode}_s"] / out["value_s"]
        out[f"{mode}_counted"] = counted
    return out
