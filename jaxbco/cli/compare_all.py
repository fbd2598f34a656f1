"""``jaxbco compare --all``: every preset of the study (``jaxbco.compare.PRESETS``) at its
documented size, with its horizon ladder, staged and written as one results page
(OUT/results.md, OUT/results/) that names the command and machine that made it."""

from __future__ import annotations

import os
import platform
import sys
import time

from jaxbco import compare as C
from jaxbco._src.machine import cpu_name
from jaxbco._src.output_folders import writable_dir
from jaxbco.algorithms import registry
from jaxbco.cli.compare_options import _horizons, _names, _refuse_existing, _write
from jaxbco.plotting import plot_portfolio_summary
from jaxbco.study import Staging, clean_leftovers


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
    sections, done, portfolios = [], [], []
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
                dtype=args.dtype,
                key=args.key,
                verbose=True,
                progress=not args.quiet,
            )
            portfolio = res.wealth_baselines is not None  # drawn in the summary figure
            C.write(res, figs, figure=not portfolio)
            if portfolio:
                portfolios.append(res)
            figure = None if portfolio else f"results/{C.slug(name)}.png"
            sections.append(C.section_markdown(res, figure))
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
        if portfolios:
            _, caption = plot_portfolio_summary(
                [C.portfolio_set(r) for r in portfolios],
                os.path.join(figs, "portfolios.png"),
                with_caption=True,
            )
            sections.append(C.summary_markdown(portfolios, "results/portfolios.png", caption))
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
