"""``jaxbco run``: a Monte-Carlo study of Algorithm 1 on one registered problem, with its
summary, results file and figure.

Every registered problem runs; on the portfolio problems (replayed market data) the default
horizon is the data's length and the default number of seeds 1000 (nyse-portfolio: 1000 x 5401
rounds in about a minute on a 2-core machine), and regret is measured against the best
risk-constrained constant-rebalanced portfolio in hindsight (computed once, offline, in
float64)."""

from __future__ import annotations

import argparse
import os
import platform

from jaxbco import hyper as H
from jaxbco import plan, problems, results, simulate, solvers, study
from jaxbco._src.output_folders import writable_dir, write_json
from jaxbco.algorithms import RectifiedBCO
from jaxbco.cli.options import (
    MAX_DIM,
    MAX_HORIZON,
    MAX_KEY,
    MAX_SEEDS,
    PROBLEM_HELP,
    check_memory,
    integer,
    number,
)
from jaxbco.cli.sweep import add_long_run_arguments
from jaxbco.runner import devices
from jaxbco.solvers import SOLVERS
from jaxbco.summary import summarize

DEFAULT_SEEDS, DEFAULT_HORIZON = 1000, 10_000
PORTFOLIO_SEEDS = 1000


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``jaxbco run`` on the CLI's subparsers."""
    r = sub.add_parser(
        "run", help="Monte-Carlo study of Algorithm 1 on one problem", description=__doc__
    )
    r.add_argument("--problem", default="quadratic-ball", help=PROBLEM_HELP)
    r.add_argument(
        "--seeds",
        type=integer(1, MAX_SEEDS),
        default=None,
        help=f"Monte-Carlo seeds (default: {DEFAULT_SEEDS}; {PORTFOLIO_SEEDS} on the "
        f"portfolio problems)",
    )
    r.add_argument(
        "--horizon",
        "-T",
        type=integer(1, MAX_HORIZON),
        default=None,
        help=f"rounds T (default: {DEFAULT_HORIZON}; the data's length on the portfolio problems)",
    )
    r.add_argument(
        "--dim",
        "-d",
        type=integer(1, MAX_DIM),
        default=None,
        help="dimension (default: the problem's own)",
    )
    r.add_argument("--c", type=number(), default=0.5, help="schedule exponent, in [1/2, 1)")
    r.add_argument("--eps", type=number(), default=0.1, help="gamma_t = t^(c + eps), eps > 0")
    r.add_argument(
        "--delta",
        type=number(0.0, low_open=True),
        default=None,
        help="perturbation, > 0 (default 1/T)",
    )
    r.add_argument(
        "--xi",
        type=number(0.0, low_open=True, high=1.0),
        default=None,
        help="shrinkage, in (0, 1) (default delta / r)",
    )
    r.add_argument(
        "--sigma",
        type=number(0.0, low_open=True),
        default=None,
        help="sigma of the strongly convex schedule alpha_t = sigma t (Thms. 3-4; "
        "default: the loss's modulus, as every other command; unused by the "
        "Thm. 1 schedule)",
    )
    r.add_argument("--alpha-scale", type=number(), default=1.0, help="scale on alpha_t")
    r.add_argument("--gamma-scale", type=number(), default=1.0, help="scale on gamma_t")
    r.add_argument("--eta-scale", type=number(), default=1.0, help="scale on eta_t")
    r.add_argument("--solver", default="dual", choices=sorted(SOLVERS), help="prox solver")
    r.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "float64"],
        help="floating point type of the run",
    )
    r.add_argument("--key", type=integer(0, MAX_KEY), default=0, help="master PRNG seed")
    r.add_argument(
        "--checkpoints",
        type=integer(2, MAX_HORIZON),
        default=100,
        help="log-spaced rounds recorded",
    )
    r.add_argument("--out", default="jaxbco-results", help="output folder")
    add_long_run_arguments(r)
    r.set_defaults(func=cmd_run)
    return r


def _sizes(args, problem):
    """(seeds, horizon) with the defaults filled in (the portfolio problems have their own)."""
    portfolio = problem.loss.wealth
    seeds = (
        args.seeds if args.seeds is not None else (PORTFOLIO_SEEDS if portfolio else DEFAULT_SEEDS)
    )
    horizon = args.horizon
    if horizon is None:
        if portfolio:  # the replayed days
            import jax

            horizon = int(jax.tree_util.tree_leaves(problem.loss_data.values)[0].shape[0])
        else:
            horizon = DEFAULT_HORIZON
    return seeds, horizon


def cmd_run(args) -> int:
    index, count = study.init_hosts(args)  # before anything touches a JAX backend
    if args.dtype == "float64":
        os.environ.setdefault("JAX_ENABLE_X64", "1")
    import jax

    if args.dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    import numpy as np

    from jaxbco import plotting  # matplotlib: only when the command runs (CLI start-up)

    out = writable_dir(args.out)
    results_file, state = study.prepare_output(
        out, index, count, resume=args.resume, overwrite=args.overwrite
    )
    problem = problems.make(args.problem, args.dim, horizon=args.horizon)
    seeds, T = _sizes(args, problem)
    if args.horizon is None:  # the builders whose data depend on T see the one that runs
        problem = problems.make(args.problem, args.dim, horizon=T)
    check_memory(
        "this run", 1, seeds, min(args.checkpoints, T), problem.dim, np.dtype(args.dtype).itemsize
    )
    sigma = H.problem_modulus(problem) if args.sigma is None else args.sigma
    hyper = H.theorem_defaults(
        problem.domain,
        T,
        c=args.c,
        eps=args.eps,
        delta=args.delta,
        xi=args.xi,
        sigma=sigma,
        alpha_scale=args.alpha_scale,
        gamma_scale=args.gamma_scale,
        eta_scale=args.eta_scale,
    )
    algorithm = RectifiedBCO(
        solver=solvers.SOLVERS[args.solver](), strongly_convex=problem.strongly_convex
    )
    checkpoints = simulate.log_checkpoints(T, args.checkpoints)
    chunk = None if args.chunk is None else min(args.chunk, T)
    kernel = False if args.no_kernel else None
    print(
        f"jaxbco run: {args.problem}, d={problem.dim}, T={T}, seeds={seeds}, "
        f"c={args.c}, eps={args.eps}, solver={args.solver}, {args.dtype}, "
        f"{jax.default_backend()}",
        flush=True,
    )
    planned = plan.before(problem, algorithm, T, kernel=kernel, dtype=args.dtype)
    for label, value in plan.lines(planned):
        print(f"  {label:<14} {value}", flush=True)
    res = simulate.sweep(
        problem,
        T,
        hyper,
        seeds=devices.host_share(np.arange(seeds)),
        key=args.key,
        algorithm=algorithm,
        checkpoints=checkpoints,
        dtype=args.dtype,
        chunk=chunk,
        progress=not args.quiet,
        resume=state,
        kernel=kernel,
    )
    wall = res.wall_s  # every session of a resumed run, compile included
    summary = summarize(res)
    summary.update(
        problem=args.problem,
        dim=problem.dim,
        c=args.c,
        eps=args.eps,
        delta=float(np.asarray(hyper.delta)),
        xi=float(np.asarray(hyper.xi)),
        sigma=sigma if problem.strongly_convex else None,
        solver=args.solver,
        dtype=args.dtype,
        wall_s=wall,
        engine=res.engine,
        engine_reason=res.engine_reason,
        engine_planned=planned.engine,
        prox_method=res.prox_method,
        comparator_method=res.comparator_method,
        compile_s=res.compile_s,
        seed_rounds_per_s=res.seed_rounds_per_s,
        schedule="Thm. 3" if problem.strongly_convex else "Thm. 1",
        backend=jax.default_backend(),
        device=str(jax.devices()[0]),
        machine=platform.processor() or platform.machine(),
        jax_version=jax.__version__,
    )
    skip = ("func", "traceback", "compile_cache", "no_compile_cache", "overwrite", "quiet")
    config = {k: v for k, v in vars(args).items() if k not in skip}
    config.update(seeds=seeds, horizon=T, sigma=sigma, schedule=summary["schedule"])
    tag = study.host_tag(index, count)
    ds = results.to_dataset(res, config=config)
    # the figure is drawn from the saved file itself: `jaxbco plot` on it draws the same one
    ds.attrs.update(
        figure_metrics=",".join(plotting.RUN_METRICS),
        figure_title=f"{args.problem}: {seeds} seeds, T = {T}, d = {problem.dim}, {args.dtype}",
    )
    with study.Staging(out, index, count) as stage:
        results.save(ds, stage.path(os.path.basename(results_file)))
        write_json(stage.path(f"summary{tag}.json"), summary)
        plotting.plot_dataset(ds, stage.path(f"curves{tag}"))
        files = stage.commit()
    os.remove(state)  # the results file now holds everything the state did
    fmt = lambda s: (
        f"{s['mean']:.4g}  [95% CI {s['ci95'][0]:.4g}, {s['ci95'][1]:.4g}]  "
        f"(2.5-97.5% of seeds: {s['q025']:.4g} .. {s['q975']:.4g})"
    )
    if res.engine != summary["engine_planned"]:
        print(f"  back-end       {res.engine} (planned: {summary['engine_planned']})")
    print(f"  R_T/T          {fmt(summary['regret_over_T'])}")
    print(f"  V_T hard       {fmt(summary['hard_violation'])}")
    print(f"  V_T soft       {fmt(summary['soft_violation'])}")
    print(f"  failed seeds   {summary['failed_seeds']}")
    bad = summary["x_star_uncertified_seeds"]
    print(
        f"  x* certificate {'passed on every seed' if not bad else f'FAILED on {bad} seeds: their regret is against an uncertified x*'}"
    )
    bad = summary["prox_uncertified_seeds"]
    print(
        f"  prox steps     {'certified on every seed' if not bad else f'a step FAILED its certificate on {bad} seeds: their x_t are not shown to follow Eq. (5)'}"
    )
    print(
        f"  wall time      {wall:.2f} s (compile included{'; all sessions' if args.resume else ''})"
    )
    print(
        f"  speed          {res.seed_rounds_per_s:.3g} seed-rounds/s (the rounds: compile "
        f"{res.compile_s:.2f} s and x* {res.comparator_s:.2f} s excluded"
        f"{'; this session' if args.resume else ''})"
    )
    print(f"  wrote {', '.join(files)}")
    return 0
