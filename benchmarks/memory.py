"""Peak memory of one long study: memory is O(seeds x checkpoints), independent of T.

    python -m benchmarks.memory --seeds 10000 --horizon 100000 --checkpoints 100 --json

Runs the default study (quadratic-ball, d = 10, Dual solver, log-spaced checkpoints) once and
prints one JSON line: seeds, horizon, checkpoints, wall_s, peak_rss_mb, machine.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10_000)
    p.add_argument("--horizon", type=int, default=100_000)
    p.add_argument("--checkpoints", type=int, default=100)
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    import jax

    from jaxbco import problems, simulate

    problem = problems.make("quadratic-ball", args.dim)
    start = time.perf_counter()
    res = simulate.sweep(
        problem,
        args.horizon,
        seeds=args.seeds,
        checkpoints=simulate.log_checkpoints(args.horizon, args.checkpoints),
    )
    wall = time.perf_counter() - start
    rec = dict(
        seeds=args.seeds,
        horizon=args.horizon,
        checkpoints=int(res.rounds.size),
        dim=args.dim,
        wall_s=wall,
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        failed=int(res.failed.sum()),
        backend=jax.default_backend(),
        cpu=platform.processor() or platform.machine(),
        jax_version=jax.__version__,
    )
    print(json.dumps(rec))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
