"""``jaxbco compare``: every algorithm on one problem with the theorem bounds
(``jaxbco.compare``); ``--all`` regenerates the results page for every preset."""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``jaxbco compare`` on the CLI's subparsers."""
    from jaxbco.problems import PROBLEMS

    p = sub.add_parser("compare", help="every algorithm on one problem, with the theorem bounds")
    p.add_argument("--problem", choices=sorted(PROBLEMS), default=None)
    p.add_argument("--seeds", type=int, default=None, help="Monte-Carlo seeds (default 100)")
    p.add_argument("--horizon", "-T", type=int, default=None,
                   help="rounds (default: the data's length for portfolios, else 5000)")
    p.add_argument("--dim", "-d", type=int, default=None, help="dimension, where the problem allows")
    p.add_argument("--algorithms", default=None, help="comma-separated subset of the algorithms")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    p.add_argument("--key", type=int, default=0, help="master PRNG seed")
    p.add_argument("--out", default="jaxbco-compare", help="output folder")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--all", action="store_true",
                   help="every preset of the study at its documented size; writes "
                        "OUT/results.md and OUT/results/")
    p.set_defaults(func=cmd_compare)
    return p


def _setup_dtype(dtype: str) -> None:
    if dtype == "float64":
        os.environ.setdefault("JAX_ENABLE_X64", "1")
        import jax

        jax.config.update("jax_enable_x64", True)


def cmd_compare(args) -> int:
    from jaxbco import compare as C
    from jaxbco._io import writable_dir

    _setup_dtype(args.dtype)
    if args.all:
        return cmd_all(args)
    if args.problem is None:
        raise ValueError("give --problem NAME (or --all)")
    if args.seeds is not None and args.seeds < 1:
        raise ValueError(f"--seeds must be an integer >= 1; got {args.seeds}")
    out = writable_dir(args.out)
    algorithms = None if args.algorithms is None else [a.strip() for a in args.algorithms.split(",")]
    res = C.compare(args.problem, 100 if args.seeds is None else args.seeds, args.horizon,
                    dim=args.dim, algorithms=algorithms, out=out, dtype=args.dtype, key=args.key,
                    verbose=True, progress=not args.quiet)
    print(f"jaxbco compare: {res.problem}, {res.seeds} seeds, T = {res.horizon}, d = {res.dim}, "
          f"{res.dtype}, {res.wall_s:.1f} s in all")
    print(C.table_markdown(res))
    if res.wealth_baselines is not None:
        print(C.wealth_markdown(res))
    print(C.theory_markdown(res))
    print("wrote " + ", ".join(res.files))
    return 0


def _machine() -> str:
    import jax

    from jaxbco._machine import cpu_name

    return (f"{cpu_name()}, {os.cpu_count()} logical CPUs, JAX {jax.__version__} on "
            f"{jax.default_backend()}, Python {platform.python_version()}")


def cmd_all(args) -> int:
    """Regenerate OUT/results.md and OUT/results/* for every preset of ``compare.PRESETS``."""
    from jaxbco import compare as C
    from jaxbco._io import writable_dir

    out = writable_dir(args.out)
    figdir = writable_dir(os.path.join(out, "results"))
    start = time.perf_counter()
    sections, done = [], []
    for name, size in C.PRESETS.items():
        seeds = size["seeds"] if args.seeds is None else args.seeds
        horizon = size["horizon"] if args.horizon is None else args.horizon
        print(f"jaxbco compare --all: {name} ({seeds} seeds, T = {horizon})", file=sys.stderr,
              flush=True)
        res = C.compare(name, seeds, horizon, out=figdir, dtype=args.dtype, key=args.key,
                        verbose=True, progress=not args.quiet)
        sections.append(C.section_markdown(res, f"results/{C.slug(name)}.png"))
        done.append(res)
    total = time.perf_counter() - start
    cmd = "python -m jaxbco.compare --all --out " + args.out
    if args.dtype != "float32":
        cmd += f" --dtype {args.dtype}"
    with open(os.path.join(out, "results.md"), "w") as fh:
        fh.write(C.results_page(cmd, _machine(), total, sections, done))
    print(f"wrote {os.path.join(out, 'results.md')} in {total:.0f} s")
    return 0
