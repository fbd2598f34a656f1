"""Floors of the engine's round on the throughput workload: random numbers alone, arithmetic alone.

    python -m benchmarks.floors --seeds 4096 --horizon 2000 --solver default --json

Three scans of T rounds over S seeds, seeds-minor blocks (d, S) as in the engine
(``jaxbco.backends.seeds_minor``), float32, one compiled call each, median of --repeats after a warm-up:

  rng:    the round's draws only: theta_t (IIDNormal) and u_t (L2Ball direction), hashed
          from the seeds' key words for blocks of ``seedsseeds_minor.BLOCK`` rounds exactly as the
          engine does, summed so they are kept;
  arith:  the round's arithmetic only: Algorithm 1's step (jaxbco's own ``RectifiedBCO.step``
          with the chosen solver) plus f_t, g_t and three running sums, with theta_t and u_t
          read from one block's table instead of drawn;
  both:   the two together (no failure checks, no checkpoint writes: the engine's floor).

Prints one JSON line per part with ns per seed-round, and the CPU it ran on.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=4096)
    p.add_argument("--horizon", type=int, default=2000)
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--solver", choices=["default", "subgradient"], default="default")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    import jax
    import jax.numpy as jnp

    from jaxbco import problems, solvers
    from jaxbco._src import blocks, xla
    from jaxbco._src.machine import cpu_name
    from jaxbco.algorithms import RectifiedBCO, RoundInput
    from jaxbco.backends import seeds_minor
    from jaxbco.hyper import theorem_defaults

    problem = problems.make("quadratic-ball", args.dim)
    solver = solvers.Subgradient(20) if args.solver == "subgradient" else solvers.Dual()
    algorithm = RectifiedBCO(solver=solver)
    S, T, d = args.seeds, args.horizon, args.dim
    prob = blocks.expand(problem)
    phi = blocks.expand(problem.constraint_data.value)
    hyper = jax.tree_util.tree_map(
        lambda v: jnp.full((S,), v, jnp.float32), theorem_defaults(problem.domain, T)
    )
    words = jax.random.key_data(
        jax.vmap(lambda i: jax.random.fold_in(jax.random.key(0), i))(
            jnp.arange(S, dtype=jnp.uint32)
        )
    )
    k0, k1 = words[:, 0], words[:, 1]

    B = seeds_minor.BLOCK

    def draws(ts):  # the engine's draws for a block of rounds, (B, d, S) each
        return seeds_minor.draw_rounds(prob, k0, k1, ts, jnp.float32)[:2]

    table = jax.jit(draws)(jnp.arange(1, B + 1, dtype=jnp.int32))

    def arith(state, acc, theta, u, t):
        inp = RoundInput(t, theta, phi, phi, u, None)
        x = state.x
        f = prob.loss.value(x, theta)
        g = prob.constraint.value(x, phi)
        new = algorithm.step(state, prob, hyper, inp)
        return new, acc + jnp.stack([f, jnp.maximum(g, 0.0), g])

    def run(part):
        state0 = algorithm.init(prob, hyper, jnp.zeros((d, S), jnp.float32))
        state0 = state0._replace(lam=jnp.zeros((S,), jnp.float32))

        def block(carry, k):  # B rounds; draws for the block at once, as in the engine
            ts = 1 + k * B + jnp.arange(B, dtype=jnp.int32)
            drawn = table if part == "arith" else draws(ts)

            def body(carry, xs):
                state, acc = carry
                t, theta, u = xs
                if part == "rng":
                    return (state, acc + jnp.stack([theta.sum(0), u.sum(0), theta[0]])), None
                return arith(state, acc, theta, u, t), None

            return jax.lax.scan(body, carry, (ts,) + tuple(drawn))[0], None

        (state, acc), _ = jax.lax.scan(
            block, (state0, jnp.zeros((3, S), jnp.float32)), jnp.arange(T // B, dtype=jnp.int32)
        )
        return state.x, acc

    for part in ("rng", "arith", "both"):
        compiled = (
            jax.jit(lambda: run(part), compiler_options=dict(xla.options())).lower().compile()
        )
        jax.block_until_ready(compiled())
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            jax.block_until_ready(compiled())
            times.append(time.perf_counter() - t0)
        run_s = statistics.median(times)
        print(
            json.dumps(
                dict(
                    part=part,
                    solver=args.solver,
                    seeds=S,
                    horizon=T,
                    dim=d,
                    ns_per_seed_round=run_s / (S * T) * 1e9,
                    run_s_all=times,
                    cpu=cpu_name(),
                    backend=jax.default_backend(),
                )
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
