"""``jaxbco run``: a Monte-Carlo study of Algorithm 1 on one registered problem, with its
summary, results file and figure."""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from jaxbco.cli.sweep import add_long_run_arguments


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``jaxbco run`` on the CLI's subparsers."""
    from jaxbco.problems import PROBLEMS
    from jaxbco.solvers import SOLVERS

    r = sub.add_parser("run", help="Monte-Carlo study of Algorithm 1 on one problem")
    r.add_argument("--problem", default="quadratic-ball", choices=sorted(PROBLEMS))
    r.add_argument("--seeds", type=int, default=1000)
    r.add_argument("--horizon", "-T", type=int, default=10_000)
    r.add_argument("--dim", "-d", type=int, default=None, help="dimension (default: the problem's own)")
    r.add_argument("--c", type=float, default=0.5, help="schedule exponent, in [1/2, 1)")
    r.add_argument("--eps", type=float, default=0.1, help="gamma_t = t^(c + eps), eps > 0")
    r.add_argument("--delta", type=float, default=None, help="perturbation (default 1/T)")
    r.add_argument("--xi", type=float, default=None, help="shrinkage (default delta / r)")
    r.add_argument("--sigma", type=float, default=2.0, help="strong convexity (Thm. 3-4 schedule)")
    r.add_argument("--alpha-scale", type=float, default=1.0)
    r.add_argument("--gamma-scale", type=float, default=1.0)
    r.add_argument("--eta-scale", type=float, default=1.0)
    r.add_argument("--solver", default="dual", choices=sorted(SOLVERS))
    r.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    r.add_argument("--key", type=int, default=0, help="master PRNG seed")
    r.add_argument("--checkpoints", type=int, default=100, help="log-spaced checkpoints")
    r.add_argument("--out", default="jaxbco-results", help="output folder")
    add_long_run_arguments(r)
    r.set_defaults(func=cmd_run)
    return r


def cmd_run(args) -> int:
    from jaxbco import study

    index, count = study.init_hosts(args)  # before anything touches a JAX backend
    if args.dtype == "float64":
        os.environ.setdefault("JAX_ENABLE_X64", "1")
    import jax

    if args.dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    import numpy as np

    from jaxbco import devices, plotting, problems, results, simulate, solvers
    from jaxbco import hyper as H
    from jaxbco._io import writable_dir
    from jaxbco.algorithms import RectifiedBCO
    from jaxbco.summary import summarize

    out = writable_dir(args.out)
    results_file, state = study.output_names(out, index, count)
    state = study.resume_path(state, args.resume)
    problem = problems.make(args.problem, args.dim, horizon=args.horizon)
    hyper = H.theorem_defaults(problem.domain, args.horizon, c=args.c, eps=args.eps,
                               delta=args.delta, xi=args.xi, sigma=args.sigma,
                               alpha_scale=args.alpha_scale, gamma_scale=args.gamma_scale,
                               eta_scale=args.eta_scale)
    algorithm = RectifiedBCO(solver=solvers.SOLVERS[args.solver](),
                             strongly_convex=problem.strongly_convex)
    if args.checkpoints < 2:
        raise ValueError("--checkpoints must be an integer >= 2")
    checkpoints = simulate.log_checkpoints(args.horizon, args.checkpoints)
    start = time.perf_counter()
    if args.seeds < 1:
        raise ValueError(f"--seeds must be an integer >= 1; got {args.seeds}")
    res = simulate.sweep(problem, args.horizon, hyper, seeds=devices.host_share(np.arange(args.seeds)),
                         key=args.key, algorithm=algorithm, checkpoints=checkpoints,
                         dtype=args.dtype, chunk=args.chunk, progress=not args.quiet, resume=state)
    wall = time.perf_counter() - start
    summary = summarize(res)
    summary.update(problem=args.problem, dim=problem.dim, c=args.c, eps=args.eps,
                   delta=float(np.asarray(hyper.delta)), xi=float(np.asarray(hyper.xi)),
                   solver=args.solver, dtype=args.dtype, wall_s=wall,
                   schedule="Thm. 3" if problem.strongly_convex else "Thm. 1",
                   backend=jax.default_backend(), device=str(jax.devices()[0]),
                   machine=platform.processor() or platform.machine(), jax_version=jax.__version__)
    config = {k: v for k, v in vars(args).items() if k != "func"}
    results.save(results.to_dataset(res, config=config), results_file)
    os.remove(state)  # the results file now holds everything the state did
    tag = study.host_tag(index, count)
    with open(os.path.join(out, f"summary{tag}.json"), "w") as fh:
        json.dump(summary, fh, indent=2)
    fig = plotting.plot_curves(res, os.path.join(out, f"curves{tag}.png"), c=args.c,
                               title=f"{args.problem}: {args.seeds} seeds, T={args.horizon}, d={problem.dim}")
    T = args.horizon
    fmt = lambda s: f"{s['mean']:.4g}  [95% CI {s['ci95'][0]:.4g}, {s['ci95'][1]:.4g}]  " \
                    f"(2.5-97.5% of seeds: {s['q025']:.4g} .. {s['q975']:.4g})"
    print(f"jaxbco run: {args.problem}, d={problem.dim}, T={T}, seeds={args.seeds}, "
          f"c={args.c}, eps={args.eps}, solver={args.solver}, {args.dtype}, "
          f"{jax.default_backend()}")
    print(f"  R_T/T          {fmt(summary['regret_over_T'])}")
    print(f"  V_T hard       {fmt(summary['hard_violation'])}")
    print(f"  V_T soft       {fmt(summary['soft_violation'])}")
    print(f"  failed seeds   {summary['failed_seeds']}")
    print(f"  wall time      {wall:.2f} s (compile included)")
    print(f"  wrote {results_file}, {os.path.join(out, f'summary{tag}.json')}, {fig}")
    return 0
