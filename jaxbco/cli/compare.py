"""``jaxbco compare``: every algorithm on one problem with the theorem bounds
(``jaxbco.compare``); ``--all`` regenerates the results page for every preset."""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

from jaxbco import compare as C
from jaxbco import problems
from jaxbco._src.machine import cpu_name
from jaxbco._src.output_folders import writable_dir
from jaxbco.algorithms import DEFAULT, registry
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


def _refuse_existing(paths, what: str) -> None:
    done = [p for p in paths if os.path.exists(p)]
    if done:
        raise ValueError(
            f"{', '.join(done)} already exist ({what}); pass --overwrite to replace "
            f"them, or choose another --out"
        )


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
            [base + ext for ext in (".md", ".json", ".png") + ((".tex",) if args.latex else ())],
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


def _write(path: str, text: str) -> str:
    with open(path, "w") as fh:
        fh.write(text)
    return path


def _names(text: str | None) -> list | None:
    """A comma-separated list (``--algorithms``, ``--presets``); None: not given."""
    return None if text is None else [v.strip() for v in text.split(",")]


def _horizons(text: str) -> list:
    try:
        return [int(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(
            f"--horizons must be comma-separated integers >= 1, e.g. 500,1000,2000; got {text!r}"
        ) from None


def _presets(text: str | None, presets: dict) -> list:
    """``--presets``: the names given (each a preset, none twice), or every preset."""
    names = list(presets) if text is None else _names(text)
    unknown = [n for n in names if n not in presets]
    if unknown or not names or len(set(names)) != len(names):
        raise ValueError(
            f"--presets must name each preset at most once, from: "
            f"{', '.join(presets)}; got {text!r}"
        )
    return names


def _all_command(args) -> str:
    """The command line that regenerates the page ``--all`` writes, with every option that
    changed what it holds (so the page never claims the presets' sizes for a smaller run)."""
    import shlex

    cmd = "python -m jaxbco.compare --all --overwrite --out " + shlex.quote(args.out)
    for flag, value in (
        ("--presets", args.presets),
        ("--seeds", args.seeds),
        ("--horizon", args.horizon),
        ("--algorithms", args.algorithms),
        ("--horizons", args.horizons),
    ):
        if value is not None:
            cmd += f" {flag} {shlex.quote(str(value))}"
    if args.no_ladder:
        cmd += " --no-ladder"
    if args.latex:
        cmd += " --latex"
    if args.dtype != "float32":
        cmd += f" --dtype {args.dtype}"
    if args.key != 0:
        cmd += f" --key {args.key}"
    return cmd


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


def _machine() -> str:
    import jax

    return (
        f"{cpu_name()}, {os.cpu_count()} logical CPUs, JAX {jax.__version__} on "
        f"{jax.default_backend()}, Python {platform.python_version()}"
    )


def cmd_all(args) -> int:
    """Regenerate OUT/results.md and OUT/results/* for every preset of ``compare.PRESETS``."""
    for flag, value in (("--problem", args.problem), ("--dim", args.dim)):
        if value is not None:
            raise ValueError(
                f"{flag} does not go with --all (every preset has its own problem "
                f"and dimension; --presets picks presets)"
            )
    presets = _presets(args.presets, C.PRESETS)
    algorithms = _names(args.algorithms)
    if algorithms is not None:  # refused before the first preset runs, not after it
        registry.resolve(algorithms)
    ladder_horizons = None if args.horizons is None else _horizons(args.horizons)
    if ladder_horizons is not None and (
        len(ladder_horizons) < 2
        or min(ladder_horizons) < 1
        or any(b <= a for a, b in zip(ladder_horizons, ladder_horizons[1:]))
    ):
        raise ValueError(
            f"--horizons must be at least 2 increasing integers >= 1; got {args.horizons!r}"
        )
    out = writable_dir(args.out)
    if not args.overwrite:
        _refuse_existing([os.path.join(out, "results.md")], "an earlier results page")
    clean_leftovers(out)
    start = time.perf_counter()
    sections, done = [], []
    with Staging(out, clean=False) as stage:  # nothing in OUT changes before every preset ran
        figs = stage.path("results")
        os.makedirs(figs)
        for name in presets:
            size = C.PRESETS[name]
            seeds = size["seeds"] if args.seeds is None else args.seeds
            horizon = size["horizon"] if args.horizon is None else args.horizon
            length = horizon or "the data's length"
            print(
                f"jaxbco compare --all: {name} ({seeds} seeds, T = {length})",
                file=sys.stderr,
                flush=True,
            )
            res = C.compare(
                name,
                seeds,
                horizon,
                algorithms=algorithms,
                out=figs,
                dtype=args.dtype,
                key=args.key,
                verbose=True,
                progress=not args.quiet,
            )
            sections.append(C.section_markdown(res, f"results/{C.slug(name)}.png"))
            if args.latex:
                _write(os.path.join(figs, C.slug(name) + ".tex"), C.table_latex(res))
            done.append(res)
            if size.get("ladder") and not args.no_ladder:
                horizons = size["ladder"] if ladder_horizons is None else ladder_horizons
                print(
                    f"jaxbco compare --all: {name}, horizons {horizons} "
                    f"({C.LADDER_SEEDS} seeds each)",
                    file=sys.stderr,
                    flush=True,
                )
                lad = C.ladder(
                    name,
                    C.LADDER_SEEDS,
                    horizons,
                    algorithms=algorithms,
                    dtype=args.dtype,
                    key=args.key,
                )
                if args.latex:
                    _write(
                        os.path.join(figs, C.slug(name) + "-ladder.tex"),
                        C.ladder_table(lad).latex(
                            caption=f"{name}: exponents across horizons T in {horizons}, "
                            f"{C.LADDER_SEEDS} seeds each; 95% bootstrap intervals.",
                            label=f"tab:{C.slug(name)}-ladder",
                        ),
                    )
                sections.append(
                    f"### {name}: exponents across horizons\n\n"
                    f"{C.ladder_markdown(lad)}\n\n{lad.wall_s:.0f} s.\n"
                )
        total = time.perf_counter() - start
        cmd = _all_command(args)
        with open(stage.path("results.md"), "w") as fh:
            fh.write(C.results_page(cmd, _machine(), total, sections, done))
        figdir = writable_dir(os.path.join(out, "results"))
        for name in sorted(os.listdir(figs)):  # the figures, then the page that shows them
            os.replace(os.path.join(figs, name), os.path.join(figdir, name))
        os.replace(stage.path("results.md"), os.path.join(out, "results.md"))
    print(f"wrote {os.path.join(out, 'results.md')} in {total:.0f} s")
    return 0
