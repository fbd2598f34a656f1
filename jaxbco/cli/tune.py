"""``jaxbco tune``: differentiable hyperparameter tuning through whole runs (``jaxbco.tune``),
optionally next to grid and random search; ``python -m jaxbco.tune`` takes the same options,
and ``python -m jaxbco.tune cost [...]`` prints ``tune.measure_cost``."""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys

from jaxbco import problems, tune
from jaxbco._src import checks
from jaxbco._src.output_folders import writable_dir
from jaxbco.algorithms import DEFAULT, RectifiedBCO, registry
from jaxbco.cli import main, report_errors
from jaxbco.cli.options import (
    MAX_DIM,
    MAX_HORIZON,
    MAX_KEY,
    PROBLEM_HELP,
    check_out_dir,
    integer,
    number,
)
from jaxbco.cli.tune_files import FILES, _figure, _write_json
from jaxbco.comparator import has_comparator
from jaxbco.study import Staging, clean_leftovers
from jaxbco.tune import FORWARD, REVERSE
from jaxbco.tune.estimators import AUTO, ESTIMATORS


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``jaxbco tune`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "tune", help="differentiable hyperparameter tuning through whole runs"
    )
    p.add_argument("--problem", default="quadratic-ball", help=PROBLEM_HELP)
    p.add_argument(
        "--dim",
        "-d",
        type=integer(1, MAX_DIM),
        default=None,
        help="dimension (default: the problem's own)",
    )
    p.add_argument(
        "--algorithm",
        default=DEFAULT,
        help="a registered algorithm (jaxbco.algorithms.ALGORITHMS) or your own as module:Name",
    )
    p.add_argument("--kappa", type=number(0.0), default=1.0, help="J = R_T/T + kappa V_T/T")
    p.add_argument(
        "--budget", type=number(0.0), default=None, help="minimise R_T/T s.t. mean V_T <= budget"
    )
    p.add_argument("--seeds", type=int, default=16, help="training seeds per step")
    p.add_argument(
        "--heldout", type=int, default=64, help="held-out seeds for the final evaluation"
    )
    p.add_argument("--horizon", "-T", type=integer(1, MAX_HORIZON), default=1000, help="rounds T")
    p.add_argument("--steps", type=int, default=20, help="optimiser steps")
    p.add_argument(
        "--free", default="c,eps,alpha_scale", help="comma-separated free hyperparameters"
    )
    p.add_argument(
        "--mode",
        default=FORWARD,
        choices=[FORWARD, REVERSE],
        help="forward (jacfwd) or reverse (grad, checkpointed) derivatives",
    )
    p.add_argument(
        "--lr", type=number(), default=0.3, help="Adam learning rate in z (cosine-decayed to lr/10)"
    )
    p.add_argument(
        "--estimator",
        default=AUTO,
        choices=list(ESTIMATORS),
        help="the gradient: pathwise (through the run), smoothed (antithetic Gaussian "
        "smoothing of J), or auto (pathwise, checked against central differences at steps "
        "0, c, 2c, ...; smoothed where they disagree)",
    )
    p.add_argument(
        "--perturbation",
        type=number(0.0),
        default=0.1,
        help="the smoothing scale in z of the smoothed estimator and of the check",
    )
    p.add_argument("--check-every", type=int, default=10, help="steps between two checks (auto)")
    p.add_argument(
        "--validation",
        type=int,
        default=None,
        help="validation seeds every step's point is judged on (default max(4, seeds/2); "
        "0: none, the last point is returned)",
    )
    p.add_argument("--fresh-seeds", action="store_true", help="new training seeds every step")
    p.add_argument(
        "--smoothing", type=number(), default=None, help="temperature of line 9 while tuning"
    )
    p.add_argument("--compare-search", action="store_true", help="also grid and random search")
    p.add_argument("--grid-points", type=int, default=5, help="grid values per free hyperparameter")
    p.add_argument("--random-samples", type=int, default=None, help="default: as many as the grid")
    p.add_argument(
        "--search-seeds", type=int, default=64, help="training seeds of grid/random search"
    )
    p.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "float64"],
        help="floating point type of the runs",
    )
    p.add_argument("--key", type=integer(0, MAX_KEY), default=0, help="master PRNG seed")
    p.add_argument(
        "--out",
        default="jaxbco-tune",
        help="output folder: tune.json (the table, the tuned hyperparameters, the "
        "training trajectory) and tune.png",
    )
    p.add_argument(
        "--overwrite", action="store_true", help="replace an earlier tune.json / tune.png in OUT"
    )
    p.set_defaults(func=cmd_tune)
    return p


def _build(args):
    record = registry.get(args.algorithm)
    problem = problems.make(args.problem, args.dim, args.horizon)
    return problem, record.build(problem)


def cmd_tune(args) -> int:
    import jax
    import numpy as np

    if args.dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    for name in (
        "seeds",
        "heldout",
        "horizon",
        "steps",
        "grid_points",
        "search_seeds",
        "check_every",
    ):
        checks.check_positive_int("--" + name.replace("_", "-"), getattr(args, name))
    checks.check_range("--lr", args.lr, low=0.0, low_open=True)
    if args.smoothing is not None:
        checks.check_range("--smoothing", args.smoothing, low=0.0, low_open=True)
    checks.check_range("--perturbation", args.perturbation, low=0.0, low_open=True)
    if args.validation is not None and args.validation != 0:
        checks.check_positive_int("--validation (0: none)", args.validation)
    if args.random_samples is not None:
        checks.check_positive_int("--random-samples", args.random_samples)
    out = check_out_dir(args.out)
    files = [os.path.join(out, name) for name in FILES]
    done = [f for f in files if os.path.exists(f)]
    if done and not args.overwrite:
        raise ValueError(
            f"{', '.join(done)} already exist (an earlier tuning); pass --overwrite "
            f"to replace them, or choose another --out"
        )
    problem, algorithm = _build(args)
    free = tuple(f.strip() for f in args.free.split(",") if f.strip())
    tune_kwargs = dict(
        steps=args.steps,
        seeds=args.seeds,
        mode=args.mode,
        budget=args.budget,
        fresh_seeds=args.fresh_seeds,
        smoothing=args.smoothing,
        optimizer=tune.default_optimizer(args.steps, args.lr),
        estimator=args.estimator,
        perturbation=args.perturbation,
        check_every=args.check_every,
        validation=args.validation,
    )
    common = dict(algorithm=algorithm, free=free, kappa=args.kappa, key=args.key, dtype=args.dtype)
    head = (
        f"jaxbco tune: {args.problem}, {args.algorithm}, d={problem.dim}, T={args.horizon}, "
        f"kappa={args.kappa:g}, free={','.join(free)}, {args.mode} mode, {args.seeds} "
        f"{'fresh' if args.fresh_seeds else 'common'} training seeds/step, {args.estimator} "
        f"gradient, {args.dtype}, "
        f"{jax.default_backend()}"
    )
    res = None
    if args.compare_search:
        rows = tune.compare_methods(
            problem,
            args.horizon,
            heldout=args.heldout,
            search_seeds=args.search_seeds,
            points=args.grid_points,
            samples=args.random_samples,
            **common,
            **tune_kwargs,
        )
    else:
        res = tune.tune(problem, args.horizon, heldout=args.heldout, **common, **tune_kwargs)
        space_vals = lambda h: {n: float(np.asarray(getattr(h, n))) for n in res.names}
        tuned = res.tuned_heldout
        rows = [
            tune.Row("defaults (start)", res.heldout_start, 0, 0.0, space_vals(res.hyper_start)),
            tune.Row(
                f"gradient tuning ({res.mode}, {res.steps} steps, {res.estimator_used})",
                tuned,
                res.runs,
                res.wall_s,
                space_vals(res.hyper if not res.kept_defaults else res.candidate),
                res.compile_s,
            ),
        ]
    print(head)
    for line in res.notes() if res is not None else ():
        print(line)
    print(tune.format_table(rows, args.heldout, reference=1 if args.compare_search else 0))
    print(
        "full runs = seeds x settings (grid/random); gradient tuning: steps x seeds x (k + 1) "
        "(forward) / x 4 (reverse, checkpointed) / x 2P (smoothed), + the checks' 2 x seeds "
        "each + (steps + 2) x validation seeds; held-out evaluation not included; wall s "
        "includes compile "
        "(random search reuses grid search's compiled call when it has as many settings)"
    )
    if not has_comparator(problem, args.horizon):
        print(
            "no offline comparator for this problem (time-varying ellipsoids): R_T is regret "
            "against x_1, which differs from regret against x* by a constant independent of "
            "the hyperparameters and seeds (for portfolios -R_T - sum_t f_t(x_1) = log final wealth)"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB
    print(
        f"peak RSS of this process {peak:.0f} MB (ru_maxrss: compile, tuning, held-out evaluation)"
    )
    clean_leftovers(writable_dir(out))
    with Staging(out, clean=False) as stage:
        _write_json(stage.path(FILES[0]), args, head, rows, res, problem)
        _figure(stage.path(FILES[1]), rows, res, head)
        written = stage.commit()
    print("wrote " + ", ".join(written))
    return 0


def cmd_cost(args) -> int:
    """``measure_cost`` on one problem, printed as one JSON line."""
    problem = problems.make(args.problem, args.dim, args.horizon)
    out = tune.measure_cost(
        problem,
        args.horizon,
        algorithm=RectifiedBCO(strongly_convex=problem.strongly_convex),
        free=args.free,
        seeds=args.seeds,
    )
    print(json.dumps(out))
    return 0


def module_main(argv=None) -> int:
    """``python -m jaxbco.tune [options]`` = ``jaxbco tune [options]``; ``python -m jaxbco.tune
    cost [--problem P --dim d --horizon T --seeds S --free ...]`` prints ``measure_cost``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] != ["cost"]:
        return main(["tune"] + argv)
    p = argparse.ArgumentParser(prog="python -m jaxbco.tune cost")
    p.add_argument("--problem", default="quadratic-ball")
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--horizon", type=int, default=2000)
    p.add_argument("--seeds", type=int, default=64)
    p.add_argument("--free", default="c,eps,alpha_scale")
    return report_errors(cmd_cost, p.parse_args(argv[1:]))
