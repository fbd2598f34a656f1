"""Throughput of rectified-bco on every named problem, one compiled call each.

    python -m benchmarks.problems --seeds 1024 --horizon 500 --json
    python -m benchmarks.problems --algorithms --problems quadratic-ball,yu-neely --json

``--algorithms``: every registered algorithm (``ALGORITHMS``, with ``compare``'s default
hyperparameters) on each of the problems instead of rectified-bco alone.
Besides the registry, ``CUSTOM`` holds problems a researcher builds from the public API
(``custom:box-ellipsoid``: a box, a linear loss on IIDNormal data and a dense fixed
``Ellipsoid`` constraint that cuts the box's corner the loss pulls to; ``custom:l1-ellipsoid``:
the same on an L1 ball; ``custom:box-custom``: box-ellipsoid's g as a user's own function);
they run by default.
Each problem runs in its own subprocess (clean peak RSS) with the default solver and the
comparator on (``make_run``), float32, and prints one JSON line: problem, d, the prox method
the solver takes (``solvers.solver_path``: the ``name`` of ``Dual.method``'s choice), the
comparator's method (``comparator.comparator_method``), compile_s, run_s (median of
--repeats runs after a warm-up, block_until_ready), seed_rounds_per_s, peak_rss_mb and the
machine.  A last line gives each problem's throughput as a fraction of quadratic-ball's.
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
from jaxbco.algorithms import DEFAULT


def box_ellipsoid(dim: int = 10):
    """A researcher's own problem from the public API: X = [-1, 1]^d, f_t = <theta_t, x> with
    theta_t ~ N(-1/sqrt(d), 1/d) (the loss pulls to the corner (1, ..., 1)), and a dense,
    fixed P (eigenvalues 0.1 .. 10, a seeded rotation) with x^T P x <= 2 cutting that corner."""
    import jax.numpy as jnp
    import numpy as np

    from jaxbco import constraints as C
    from jaxbco import losses as L
    from jaxbco import sequences as Seq
    from jaxbco import sets
    from jaxbco.problem import Problem

    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    P = (Q * np.geomspace(0.1, 10.0, dim)) @ Q.T
    return Problem(
        domain=sets.Box(-jnp.ones(dim), jnp.ones(dim)),
        loss=L.Linear(),
        loss_data=Seq.IIDNormal(jnp.full(dim, -1.0 / np.sqrt(dim)), 1.0 / np.sqrt(dim)),
        constraint=C.Ellipsoid(),
        constraint_data=Seq.Fixed((jnp.asarray(0.5 * (P + P.T)), jnp.zeros(dim), jnp.asarray(2.0))),
    )


def l1_ellipsoid(dim: int = 10):
    """``box_ellipsoid``'s loss and constraint on an L1 ball of radius 3 (whose vertices
    3 e_i the constraint cuts off): the L1 ball's lifted interior point (``_ipm_l1``)."""
    import dataclasses

    import jax.numpy as jnp

    from jaxbco import sets

    return dataclasses.replace(box_ellipsoid(dim), domain=sets.L1Ball(jnp.zeros(dim), 3.0))


def box_custom(dim: int = 10):
    """``box_ellipsoid`` with its constraint written as a ``CustomConstraint`` (the same g as a
    user's own JAX function, its interior point q given): ``SmoothIPM``, under ``vmap``."""
    import dataclasses

    from jaxbco import constraints as C

    fn = lambda x, phi: (x - phi[1]) @ phi[0] @ (x - phi[1]) - phi[2]
    return dataclasses.replace(
        box_ellipsoid(dim),
        constraint=C.CustomConstraint(fn, curvature_bound=20.0, interior=lambda phi: phi[1]),
    )


CUSTOM = {
    "custom:box-ellipsoid": box_ellipsoid,
    "custom:l1-ellipsoid": l1_ellipsoid,
    "custom:box-custom": box_custom,
}


def _child(args) -> dict:
    import jax

    if args.dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    from benchmarks._timing import compile_run
    from jaxbco import backends, fused, problems, simulate
    from jaxbco.comparator import comparator_method
    from jaxbco.compare import default_hyper, make_algorithm
    from jaxbco.solvers import solver_path

    problem = (
        CUSTOM[args.problem]()
        if args.problem in CUSTOM
        else problems.make(args.problem, horizon=args.horizon)
    )
    algorithm = make_algorithm(args.algorithm, problem)
    hyper = default_hyper(algorithm, problem, args.horizon)
    # On a GPU the fused kernel where it covers the run (make_run takes it for concrete calls;
    # compiled ahead of time here, so asked for explicitly), else the scan engine.
    on_kernel = (
        fused.choose(None, jax.default_backend(), problem, algorithm, dtype=args.dtype) is not None
    )
    fn = simulate.make_run(
        problem,
        args.horizon,
        algorithm=algorithm,
        kernel=on_kernel or None,
        checkpoints=simulate.log_checkpoints(args.horizon, 100),
        dtype=args.dtype,
    )
    key = jax.random.key(0)
    ids = jnp.arange(args.seeds)
    compiled, compile_s, out = compile_run(fn, key, hyper, ids)
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        out = jax.block_until_ready(compiled(key, hyper, ids))
        times.append(time.perf_counter() - t0)
    run_s = statistics.median(times)
    import numpy as np

    from benchmarks._breakdown import breakdown

    parts = {}
    if (
        args.breakdown and args.algorithm == DEFAULT
    ):  # where the time goes, by ablation (benchmarks/_breakdown.py)
        parts = breakdown(problem, args.horizon, algorithm, hyper, ids, args.dtype, args.repeats)

    # What ran, and why no faster back-end did (on a GPU: what keeps the run off the kernel).
    chosen = backends.select(
        problem,
        algorithm,
        platform=jax.default_backend(),
        kernel=on_kernel or None,
        dtype=args.dtype,
    )
    engine, why = chosen.engine, chosen.reason
    solver = getattr(algorithm, "solver", None)
    return dict(
        problem=args.problem,
        algorithm=args.algorithm,
        d=problem.domain.dim,
        engine=engine,
        engine_reason=why,
        solver_path=solver_path(solver, problem) if solver is not None else "",
        comparator=comparator_method(problem, args.horizon),
        seeds=args.seeds,
        horizon=args.horizon,
        dtype=args.dtype,
        compile_s=compile_s,
        run_s=run_s,
        run_s_all=times,
        seed_rounds_per_s=args.seeds * args.horizon / run_s,
        failed_seeds=int(np.sum(np.asarray(out["failed"]))),
        regret_over_T=float(np.nanmean(np.asarray(out["regret"])[..., -1]) / args.horizon),
        **({"breakdown": parts} if parts else {}),
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        backend=jax.default_backend(),
        device=getattr(jax.devices()[0], "device_kind", "cpu"),
        jax_version=jax.__version__,
        cpu=cpu_name(),
        cores=os.cpu_count(),
        python=platform.python_version(),
        machine=platform.node(),
    )


def _in_process(args, name: str, alg: str) -> dict:
    """``_child`` for one problem in this process; an error becomes the record's ``error``."""
    try:
        return _child(argparse.Namespace(**{**vars(args), "problem": name, "algorithm": alg}))
    except Exception as err:  # noqa: BLE001 (one problem's failure must not cost the others)
        return dict(problem=name, algorithm=alg, error=[f"{type(err).__name__}: {str(err)[:300]}"])


def main(argv=None) -> int:
    from jaxbco.problems import PROBLEMS

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=1024)
    p.add_argument("--horizon", type=int, default=500)
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument(
        "--problems",
        default=",".join([*PROBLEMS, *CUSTOM]),
        help="comma-separated names (default: every registered problem and CUSTOM)",
    )
    p.add_argument("--json", action="store_true", help="JSON lines only")
    p.add_argument(
        "--algorithms",
        action="store_true",
        help="every registered algorithm on each problem (default: the paper's)",
    )
    p.add_argument(
        "--one-process",
        action="store_true",
        help="every problem in this process (no per-problem start-up: a GPU's time is "
        "short; peak_rss_mb is then the process's so far)",
    )
    p.add_argument(
        "--breakdown",
        action="store_true",
        help="also time the run without each part (benchmarks/_breakdown.py): the shares of "
        "data, estimate, prox, prox certificate, comparator and the x* certificate",
    )
    p.add_argument("--problem", help=argparse.SUPPRESS)
    p.add_argument("--algorithm", default=DEFAULT, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.problem:
        print(json.dumps(_child(args)))
        return 0
    base = [
        "--seeds",
        str(args.seeds),
        "--horizon",
        str(args.horizon),
        "--dtype",
        args.dtype,
        "--repeats",
        str(args.repeats),
        *(["--breakdown"] if args.breakdown else []),
    ]
    from jaxbco.algorithms import ALGORITHMS

    records = []
    algorithms = list(ALGORITHMS) if args.algorithms else [DEFAULT]
    for name in args.problems.split(","):
        for alg in algorithms:
            if args.one_process:
                rec = _in_process(args, name, alg)
            else:
                out = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "benchmarks.problems",
                        *base,
                        "--problem",
                        name,
                        "--algorithm",
                        alg,
                    ],
                    capture_output=True,
                    text=True,
                )
                if out.returncode != 0:
                    rec = dict(
                        problem=name, algorithm=alg, error=out.stderr.strip().splitlines()[-1:]
                    )
                else:
                    rec = json.loads(out.stdout.strip().splitlines()[-1])
            records.append(rec)
            print(json.dumps(rec), flush=True)
    ok = [r for r in records if "error" not in r]
    if args.algorithms:  # each algorithm against rectified-bco on the same problem
        ref = {r["problem"]: r["seed_rounds_per_s"] for r in ok if r["algorithm"] == DEFAULT}
        print(
            json.dumps(
                {
                    "fraction_of_rectified_bco": {
                        f"{r['problem']}/{r['algorithm']}": r["seed_rounds_per_s"]
                        / ref[r["problem"]]
                        for r in ok
                        if r["problem"] in ref
                    },
                    "machine": ok[0]["cpu"] if ok else None,
                }
            )
        )
        return 0
    ref = next((r for r in ok if r.get("problem") == "quadratic-ball"), None)
    if ref:
        print(
            json.dumps(
                {
                    "fraction_of_quadratic_ball": {
                        r["problem"]: r["seed_rounds_per_s"] / ref["seed_rounds_per_s"] for r in ok
                    },
                    "machine": ref["cpu"],
                }
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
