"""``jaxbco compare``: every algorithm on one problem with the theorem bounds
(``jaxbco.compare``); ``--horizons`` fits exponents across horizons; ``--all`` regenerates
the results page for every preset (``jaxbco.cli.compare_all``)."""

from __future__ import annotations

import argparse
import os

from jaxbco import compare as C
from jaxbco import problems
from jaxbco._src.output_folders import writable_dir
from jaxbco.algorithms import DEFAULT, registry
from jaxbco.cli.compare_all import cmd_all
from jaxbco.cli.compare_options import _horizons, _names, _refuse_existing, _write
from jaxbco.cli.options import (
    MAX_DIM,
    MAX_HORIZON,
    MAX_KEY,
    MAX_SEEDS,
    PROBLEM_HELP,
    check_memory,
    check_out_dir,
    integer,
)
from jaxbco.study import Staging, clean_leftovers


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``jaxbco compare`` on the CLI's subparsers."""
    p = sub.add_parser("compare", help="every algorithm on one problem, with the theorem bounds")
    p.add_argument("--problem", default=None, help=f"{PROBLEM_HELP} (required unless --all)")
    p.add_argument("--seeds", type=int, default=None, help="Monte-Carlo seeds (default 100)")
    p.add_argument(
        "--horizon",
        "-T",
        type=integer(1, MAX_HORIZON),
        default=None,
        help="rounds (default: the data's length for portfolios, else 5000)",
    )
    p.add_argument(
        "--dim",
        "-d",
        type=integer(1, MAX_DIM),
        default=None,
        help="dimension, where the problem allows (default: the problem's own)",
    )
    p.add_argument(
        "--algorithms",
        default=None,
        help=f"comma-separated algorithms: registered names or module:Name specs "
        f"of your own, e.g. {DEFAULT},mypkg.algs:MyMethod (default: every "
        f"registered algorithm)",
    )
    p.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "float64"],
        help="floating point type of the runs",
    )
    p.add_argument("--key", type=integer(0, MAX_KEY), default=0, help="master PRNG seed")
    p.add_argument("--out", default="jaxbco-compare", help="output folder")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace this problem's earlier table and figure in OUT (or, with --all, "
        "the results page)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument(
        "--horizons",
        default=None,
        help="a ladder of horizons, e.g. 500,1000,2000,4000: every algorithm runs at "
        "each T with that T's step sizes and R_T, V_T exponents across T are "
        "fitted with bootstrap intervals (instead of one comparison; with --all: "
        "the ladder of every preset that has one; default: off)",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="every preset of the study at its documented size; writes "
        "OUT/results.md and OUT/results/ (--seeds, --horizon, --algorithms and "
        "--horizons replace the presets' own choices)",
    )
    p.add_argument(
        "--presets",
        default=None,
        help="with --all: a comma-separated subset of the presets, in the order given "
        "(default: every preset of jaxbco.compare.PRESETS)",
    )
    p.add_argument(
        "--latex",
        action="store_true",
        help="also write each table as LaTeX (booktabs) beside its Markdown: "
        "<problem>.tex, and <problem>-ladder.tex for a ladder",
    )
    p.add_argument(
        "--no-ladder",
        action="store_true",
        help="with --all: skip the presets' horizon ladders (default: run them)",
    )
    p.set_defaults(func=cmd_compare)
    return p


def _setup_dtype(dtype: str) -> None:
    if dtype == "float64":
        os.environ.setdefault("JAX_ENABLE_X64", "1")
        import jax

        jax.config.update("jax_enable_x64", True)


def cmd_compare(args) -> int:
    if args.seeds is not None and not 1 <= args.seeds <= MAX_SEEDS:
        raise ValueError(f"--seeds must be an integer >= 1 (and <= 2^32); got {args.seeds}")
    _setup_dtype(args.dtype)
    if args.all:
        return cmd_all(args)
    if args.presets is not None:
        raise ValueError("--presets goes with --all (it picks the presets of the results page)")
    if args.problem is None:
        raise ValueError("give --problem NAME (or --all)")
    seeds = 100 if args.seeds is None else args.seeds
    registry.resolve(_names(args.algorithms))  # refused before any folder is touched
    problems.check(args.problem)
    check_memory("this comparison", 1, seeds, 60, args.dim or 10, 8)
    out = check_out_dir(args.out)
    base = os.path.join(out, C.slug(args.problem))
    if not args.overwrite:
        _refuse_existing(
            [
                base + ext
                for ext in (".md", ".json", ".png", ".pdf") + ((".tex",) if args.latex else ())
            ],
            f"an earlier comparison on {args.problem}",
        )
    algorithms = _names(args.algorithms)
    if args.horizons is not None:
        return _cmd_ladder(args, seeds, algorithms, out, base)
    clean_leftovers(writable_dir(out))
    with Staging(out, clean=False) as stage:
        res = C.compare(
            args.problem,
            seeds,
            args.horizon,
            dim=args.dim,
            algorithms=algorithms,
            out=stage.dir,
            dtype=args.dtype,
            key=args.key,
            verbose=True,
            progress=not args.quiet,
        )
        if args.latex:
            res.files.append(
                _write(os.path.join(stage.dir, C.slug(res.problem) + ".tex"), C.table_latex(res))
            )
        res.files = [stage.final(f) for f in res.files]
        stage.commit()
    print(
        f"jaxbco compare: {res.problem}, {res.seeds} seeds, T = {res.horizon}, d = {res.dim}, "
        f"{res.dtype}, {res.wall_s:.1f} s in all"
    )
    print(C.table_markdown(res))
    if res.wealth_baselines is not None:
        print(C.wealth_markdown(res))
    print(C.theory_markdown(res))
    print("wrote " + ", ".join(res.files))
    return 0


def _cmd_ladder(args, seeds, algorithms, out, base) -> int:
    """``--horizons``: exponents across horizons (``jaxbco.compare.ladder``)."""
    horizons = _horizons(args.horizons)
    tex = base + "-ladder.tex"
    for path in [base + "-ladder.md"] + ([tex] if args.latex else []):
        if not args.overwrite and os.path.exists(path):
            raise ValueError(
                f"{path} already exists; pass --overwrite to replace it, or choose another --out"
            )
    lad = C.ladder(
        args.problem,
        seeds,
        horizons,
        dim=args.dim,
        algorithms=algorithms,
        dtype=args.dtype,
        key=args.key,
    )
    table = C.ladder_markdown(lad)
    writable_dir(out)
    tmp = base + "-ladder.md.tmp"
    with open(tmp, "w") as fh:
        fh.write(
            f"# {args.problem}: exponents across horizons\n\n{table}\n\n"
            f"{lad.wall_s:.1f} s in all.\n"
        )
    os.replace(tmp, base + "-ladder.md")
    if args.latex:
        os.replace(
            _write(
                tex + ".tmp",
                C.ladder_table(lad).latex(
                    caption=f"{args.problem}: exponents across horizons T in {horizons}, {seeds} seeds "
                    f"each; 95% bootstrap intervals.",
                    label=f"tab:{C.slug(args.problem)}-ladder",
                ),
            ),
            tex,
        )
    print(
        f"jaxbco compare --horizons: {args.problem}, {seeds} seeds, T in {horizons}, "
        f"{lad.wall_s:.1f} s"
    )
    print(table)
    print(f"wrote {base}-ladder.md" + (f", {tex}" if args.latex else ""))
    return 0
