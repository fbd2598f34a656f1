"""Throughput of jaxbco against NumPy peers on the issue's workload.

    python -m benchmarks.throughput --seeds 4096 --horizon 2000 --dim 10 --inner-steps 20 \
        --solver subgradient --json

Each implementation runs in its own subprocess (clean peak RSS) and prints one JSON line:
impl, solver, backend, device, seeds, horizon, dim, inner_steps, dtype, compile_s, run_s
(median of --repeats runs after a warm-up, block_until_ready), seed_rounds_per_s,
peak_rss_mb, versions and the CPU/GPU name.  Then the ratios jaxbco / peer.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

from jaxbco._machine import cpu_name


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _bench_jaxbco(args) -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np

    if args.dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    from benchmarks._timing import compile_run
    from jaxbco import problems, simulate, solvers
    from jaxbco.algorithms import RectifiedBCO
    from jaxbco.hyper import theorem_defaults

    problem = problems.make("quadratic-ball", args.dim)
    solver = (solvers.Subgradient(steps=args.inner_steps, unroll=args.inner_unroll)
              if args.solver == "subgradient" else solvers.Dual())
    fn = simulate.make_run(problem, args.horizon, algorithm=RectifiedBCO(solver=solver),
                           checkpoints=simulate.log_checkpoints(args.horizon, args.checkpoints),
                           dtype=args.dtype, scan_unroll=args.scan_unroll)
    hyper = theorem_defaults(problem.domain, args.horizon)
    key = jax.random.key(0)
    ids = jnp.arange(args.seeds)
    times = []
    if args.devices > 1:  # seeds sharded over CPU devices by ``sweep`` (curves copied to the host)
        kw = dict(seeds=args.seeds, algorithm=RectifiedBCO(solver=solver), dtype=args.dtype,
                  checkpoints=simulate.log_checkpoints(args.horizon, args.checkpoints),
                  devices=jax.devices(), scan_unroll=args.scan_unroll)
        t0 = time.perf_counter()
        simulate.sweep(problem, args.horizon, hyper, **kw)
        compile_s = time.perf_counter() - t0  # compile + one run
        for r in range(args.repeats):
            h = theorem_defaults(problem.domain, args.horizon, c=0.5 + 0.01 * r)
            t0 = time.perf_counter()
            simulate.sweep(problem, args.horizon, h, **kw)
            times.append(time.perf_counter() - t0)
    else:
        compiled, compile_s, _ = compile_run(fn, key, hyper, ids)  # compiled and warmed up
        for r in range(args.repeats):
            h = theorem_defaults(problem.domain, args.horizon, c=0.5 + 0.01 * r)  # new values, no recompile
            t0 = time.perf_counter()
            jax.block_until_ready(compiled(key, h, ids))
            times.append(time.perf_counter() - t0)
    dev = jax.devices()[0]
    stats = (dev.memory_stats() or {}) if jax.default_backend() != "cpu" else {}
    return dict(impl="jaxbco", backend=jax.default_backend(), devices=len(jax.devices()),
                device=getattr(dev, "device_kind", str(dev)), compile_s=compile_s,
                run_s=statistics.median(times), run_s_all=times, jax_version=jax.__version__,
                jaxlib_version=jax.lib.__version__ if hasattr(jax.lib, "__version__") else None,
                xla_options=fn.compiler_options,
                device_peak_mb=stats["peak_bytes_in_use"] / 2**20 if "peak_bytes_in_use" in stats else None,
                scan_unroll=args.scan_unroll, inner_unroll=args.inner_unroll,
                env={k: v for k, v in os.environ.items() if k == "XLA_FLAGS"})


def _bench_numpy(args, impl) -> dict:
    import numpy as np

    from benchmarks import peers

    dtype = np.float32 if args.dtype == "float32" else np.float64
    if impl in ("numpy-vectorised", "numpy-seeds-minor"):
        peer = peers.numpy_vectorised if impl == "numpy-vectorised" else peers.numpy_seeds_minor
        fn = lambda: peer(args.seeds, args.horizon, args.dim, args.inner_steps, args.solver, dtype)
        scale = 1.0
    else:
        subset = max(1, min(args.seeds, args.loop_seeds))
        fn = lambda: peers.per_seed_loop(subset, args.horizon, args.dim, args.inner_steps,
                                         args.solver, dtype)
        scale = args.seeds / subset
    times = []
    for _ in range(1 if impl == "per-seed-loop" else args.repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * scale)
    return dict(impl=impl, backend="numpy", device="cpu", compile_s=0.0,
                run_s=statistics.median(times), numpy_version=np.__version__,
                scaled_from_seeds=None if impl != "per-seed-loop" else max(1, min(args.seeds, args.loop_seeds)))


def _child(args) -> None:
    if args.impl == "jaxbco":
        rec = _bench_jaxbco(args)
    else:
        rec = _bench_numpy(args, args.impl)
    rec.update(solver=args.solver, seeds=args.seeds, horizon=args.horizon, dim=args.dim,
               inner_steps=args.inner_steps if args.solver == "subgradient" else None,
               dtype=args.dtype, seed_rounds_per_s=args.seeds * args.horizon / rec["run_s"],
               peak_rss_mb=_peak_rss_mb(), cpu=cpu_name(), cores=os.cpu_count(),
               python=platform.python_version(), machine=platform.node())
    print(json.dumps(rec))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=4096)
    p.add_argument("--horizon", type=int, default=2000)
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--inner-steps", type=int, default=20)
    p.add_argument("--solver", choices=["subgradient", "default"], default="subgradient")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--checkpoints", type=int, default=100)
    p.add_argument("--scan-unroll", type=int, default=1, help="rounds per scan iteration (make_run's scan_unroll)")
    p.add_argument("--inner-unroll", type=int, default=1, help="Subgradient(unroll=...): 0 = all K steps")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--loop-seeds", type=int, default=4, help="seeds actually run by the per-seed loop")
    p.add_argument("--impls", default="jaxbco,numpy-seeds-minor,numpy-vectorised,per-seed-loop")
    p.add_argument("--devices", type=int, default=1,
                   help="jaxbco on this many CPU devices (XLA_FLAGS host device count; seeds "
                        "sharded by sweep): the NumPy peers use one core, the machine has more")
    p.add_argument("--json", action="store_true", help="JSON lines only")
    p.add_argument("--impl", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.impl:
        _child(args)
        return 0
    records = []
    base = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--json"]
    for impl in args.impls.split(","):
        env = dict(os.environ)
        if impl == "jaxbco" and args.devices > 1:
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                                f" --xla_force_host_platform_device_count={args.devices}").strip()
        out = subprocess.run([sys.executable, "-m", "benchmarks.throughput", *base, "--impl", impl],
                             capture_output=True, text=True, check=True, env=env)
        rec = json.loads(out.stdout.strip().splitlines()[-1])
        records.append(rec)
        print(json.dumps(rec), flush=True)
    jx = next((r for r in records if r["impl"] == "jaxbco"), None)
    if jx:
        ratios = {f"jaxbco_over_{r['impl']}": r["run_s"] / jx["run_s"] for r in records if r is not jx}
        peers_ = [r for r in records if r["impl"].startswith("numpy")]
        best = min(peers_, key=lambda r: r["run_s"]) if peers_ else None
        print(json.dumps({"ratios_speedup": ratios, "best_numpy_peer": best and best["impl"],
                          "jaxbco_over_best_numpy": best and best["run_s"] / jx["run_s"],
                          "machine": jx["cpu"], "backend": jx["backend"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
