"""Throughput of jaxbco against NumPy peers on the issue's workload.

    python -m benchmarks.throughput --seeds 4096 --horizon 2000 --dim 10 --inner-steps 20 \
        --solver subgradient --json

Each implementation runs in its own subprocess (clean peak RSS) and prints one JSON line:
impl, solver, backend, device, seeds, horizon, dim, inner_steps, dtype, compile_s, run_s
(median of --repeats runs after a warm-up, block_until_ready), seed_rounds_per_s,
peak_rss_mb, versions and the CPU/GPU name.  Then the ratios jaxbco / peer.

Equal cores: one jaxbco process already uses every core (XLA's thread pool), a NumPy script
one.  So each NumPy peer also runs as ``--peer-processes`` processes (default: the cores
jaxbco uses, ``os.cpu_count()``), each with its share of the seeds, started together at a
barrier before every repeat; their aggregate rate (all seeds over the wall time from the first
start to the last finish) is the record with ``processes`` > 1, and the ratios at equal cores
are taken against it.
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

from jaxbco._src.machine import cpu_name


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _bench_jaxbco(args) -> dict:
    import jax
    import jax.numpy as jnp

    if args.dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    from benchmarks._timing import compile_run
    from jaxbco import problems, simulate, solvers
    from jaxbco.algorithms import RectifiedBCO
    from jaxbco.hyper import theorem_defaults

    problem = problems.make("quadratic-ball", args.dim)
    solver = (
        solvers.Subgradient(steps=args.inner_steps, unroll=args.inner_unroll)
        if args.solver == "subgradient"
        else solvers.Dual()
    )
    fn = simulate.make_run(
        problem,
        args.horizon,
        algorithm=RectifiedBCO(solver=solver),
        checkpoints=simulate.log_checkpoints(args.horizon, args.checkpoints),
        dtype=args.dtype,
        scan_unroll=args.scan_unroll,
    )
    hyper = theorem_defaults(problem.domain, args.horizon)
    key = jax.random.key(0)
    ids = jnp.arange(args.seeds)
    times = []
    if args.devices > 1:  # seeds sharded over CPU devices by ``sweep`` (curves copied to the host)
        kw = dict(
            seeds=args.seeds,
            algorithm=RectifiedBCO(solver=solver),
            dtype=args.dtype,
            checkpoints=simulate.log_checkpoints(args.horizon, args.checkpoints),
            devices=jax.devices(),
            scan_unroll=args.scan_unroll,
        )
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
            h = theorem_defaults(
                problem.domain, args.horizon, c=0.5 + 0.01 * r
            )  # new values, no recompile
            t0 = time.perf_counter()
            jax.block_until_ready(compiled(key, h, ids))
            times.append(time.perf_counter() - t0)
    dev = jax.devices()[0]
    stats = (dev.memory_stats() or {}) if jax.default_backend() != "cpu" else {}
    return dict(
        impl="jaxbco",
        backend=jax.default_backend(),
        devices=len(jax.devices()),
        device=getattr(dev, "device_kind", str(dev)),
        compile_s=compile_s,
        run_s=statistics.median(times),
        run_s_all=times,
        jax_version=jax.__version__,
        jaxlib_version=jax.lib.__version__ if hasattr(jax.lib, "__version__") else None,
        xla_options=fn.compiler_options,
        device_peak_mb=stats["peak_bytes_in_use"] / 2**20 if "peak_bytes_in_use" in stats else None,
        scan_unroll=args.scan_unroll,
        inner_unroll=args.inner_unroll,
        env={k: v for k, v in os.environ.items() if k == "XLA_FLAGS"},
    )


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
        fn = lambda: peers.per_seed_loop(
            subset, args.horizon, args.dim, args.inner_steps, args.solver, dtype
        )
        scale = args.seeds / subset
    times = []
    for _ in range(1 if impl == "per-seed-loop" else args.repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * scale)
    return dict(
        impl=impl,
        backend="numpy",
        device="cpu",
        compile_s=0.0,
        run_s=statistics.median(times),
        numpy_version=np.__version__,
        scaled_from_seeds=None
        if impl != "per-seed-loop"
        else max(1, min(args.seeds, args.loop_seeds)),
    )


def _peer_worker(impl, args, seeds, barrier, queue):
    """One of the equal-cores processes: the peer on ``seeds`` seeds, (start, end) per repeat."""
    import numpy as np

    from benchmarks import peers

    dtype = np.float32 if args.dtype == "float32" else np.float64
    peer = peers.numpy_vectorised if impl == "numpy-vectorised" else peers.numpy_seeds_minor
    fn = lambda: peer(seeds, args.horizon, args.dim, args.inner_steps, args.solver, dtype)
    spans = []
    for _ in range(args.repeats):
        barrier.wait()
        t0 = time.perf_counter()  # CLOCK_MONOTONIC: comparable across processes
        fn()
        spans.append((t0, time.perf_counter()))
    queue.put((spans, _peak_rss_mb()))


def _bench_numpy_processes(args, impl, n: int) -> dict:
    """The NumPy peer as ``n`` concurrent processes splitting the seeds (equal cores)."""
    import multiprocessing

    import numpy as np

    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(n), ctx.Queue()
    shares = [args.seeds // n + (i < args.seeds % n) for i in range(n)]
    procs = [ctx.Process(target=_peer_worker, args=(impl, args, k, barrier, queue)) for k in shares]
    for pr in procs:
        pr.start()
    results = [queue.get() for _ in procs]
    for pr in procs:
        pr.join()
    walls = [
        max(r[0][i][1] for r in results) - min(r[0][i][0] for r in results)
        for i in range(args.repeats)
    ]
    return dict(
        impl=impl,
        processes=n,
        seeds_per_process=shares,
        backend="numpy",
        device="cpu",
        compile_s=0.0,
        run_s=statistics.median(walls),
        run_s_all=walls,
        numpy_version=np.__version__,
        peak_rss_mb=max(r[1] for r in results),
    )  # per process


def _child(args) -> None:
    if args.impl == "jaxbco":
        rec = _bench_jaxbco(args)
    else:
        rec = _bench_numpy(args, args.impl)
    rec.update(
        solver=args.solver,
        seeds=args.seeds,
        horizon=args.horizon,
        dim=args.dim,
        inner_steps=args.inner_steps if args.solver == "subgradient" else None,
        dtype=args.dtype,
        seed_rounds_per_s=args.seeds * args.horizon / rec["run_s"],
        peak_rss_mb=_peak_rss_mb(),
        cpu=cpu_name(),
        cores=os.cpu_count(),
        python=platform.python_version(),
        machine=platform.node(),
    )
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
    p.add_argument(
        "--scan-unroll",
        type=int,
        default=1,
        help="rounds per scan iteration (make_run's scan_unroll)",
    )
    p.add_argument(
        "--inner-unroll", type=int, default=1, help="Subgradient(unroll=...): 0 = all K steps"
    )
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument(
        "--loop-seeds", type=int, default=4, help="seeds actually run by the per-seed loop"
    )
    p.add_argument("--impls", default="jaxbco,numpy-seeds-minor,numpy-vectorised,per-seed-loop")
    p.add_argument(
        "--devices",
        type=int,
        default=1,
        help="jaxbco on this many CPU devices (XLA_FLAGS host device count; seeds "
        "sharded by sweep): the NumPy peers use one core, the machine has more",
    )
    p.add_argument(
        "--peer-processes",
        type=int,
        default=os.cpu_count(),
        help="the NumPy peers also as this many concurrent processes splitting the "
        "seeds (equal cores: jaxbco uses every core); 1 = single process only",
    )
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
            env["XLA_FLAGS"] = (
                env.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={args.devices}"
            ).strip()
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.throughput", *base, "--impl", impl],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        rec = json.loads(out.stdout.strip().splitlines()[-1])
        rec.setdefault("processes", 1)
        records.append(rec)
        print(json.dumps(rec), flush=True)
        if impl.startswith("numpy") and args.peer_processes > 1:
            par = _bench_numpy_processes(args, impl, args.peer_processes)
            par.update(
                {
                    k: rec[k]
                    for k in (
                        "solver",
                        "seeds",
                        "horizon",
                        "dim",
                        "inner_steps",
                        "dtype",
                        "cpu",
                        "cores",
                        "python",
                        "machine",
                    )
                }
            )
            par["seed_rounds_per_s"] = args.seeds * args.horizon / par["run_s"]
            records.append(par)
            print(json.dumps(par), flush=True)
    jx = next((r for r in records if r["impl"] == "jaxbco"), None)
    if jx:
        name = lambda r: r["impl"] + (f"x{r['processes']}" if r["processes"] > 1 else "")
        ratios = {
            f"jaxbco_over_{name(r)}": r["run_s"] / jx["run_s"] for r in records if r is not jx
        }
        summary = {
            "ratios_speedup": ratios,
            "machine": jx["cpu"],
            "backend": jx["backend"],
            "cores": jx["cores"],
        }
        for label, n in (("single_process", 1), ("equal_cores", args.peer_processes)):
            peers_ = [r for r in records if r["impl"].startswith("numpy") and r["processes"] == n]
            best = min(peers_, key=lambda r: r["run_s"]) if peers_ else None
            if best:
                summary[f"best_numpy_peer_{label}"] = name(best)
                summary[f"jaxbco_over_best_numpy_{label}"] = best["run_s"] / jx["run_s"]
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
