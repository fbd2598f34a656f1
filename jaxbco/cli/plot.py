"""``jaxbco plot RESULTS``: re-draw the figures of a saved results file, without recomputing.

RESULTS is a netCDF file written by ``jaxbco.results.save`` (or a folder holding results.nc).
Writes ``<OUT>/<name of RESULTS>.png`` and ``.pdf`` (``plotting.plot_dataset``) and prints the
final-round summary table.  An existing figure of that name is replaced only with
``--overwrite``.  Errors are ValueErrors with a one-line message (``jaxbco.cli``
turns them into exit code 2).
"""

from __future__ import annotations

import argparse
import os
import sys

from jaxbco import results
from jaxbco._src.output_folders import writable_dir
from jaxbco.cli import main as cli_main
from jaxbco.results import CURVES as METRICS


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``jaxbco plot`` on the CLI's subparsers (``args.func(args)`` runs it)."""
    p = sub.add_parser("plot", help="re-draw figures from a saved results file (no recomputation)")
    p.add_argument(
        "results",
        metavar="RESULTS",
        help="results file (.nc) written by jaxbco, or a folder holding results.nc",
    )
    p.add_argument(
        "--out", default=None, help="output folder (default: the folder of the results file)"
    )
    p.add_argument(
        "--metrics",
        default=None,
        help=f"comma-separated panels, one per metric, from: {', '.join(METRICS)} "
        f"(default: those of the command that wrote the file, so its figure is "
        f"redrawn; else regret,hard_violation)",
    )
    p.add_argument(
        "--no-quantiles",
        action="store_true",
        help="leave out the shaded band (95%% confidence interval of the mean)",
    )
    p.add_argument("--no-theory", action="store_true", help="leave out the theorem's slopes")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing figure of the same name in the output folder",
    )
    p.add_argument(
        "--title",
        default=None,
        help="figure title (default: the one the command that wrote the file drew)",
    )
    p.set_defaults(func=cmd_plot)
    return p


def _metrics(text: str) -> list:
    names = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in names if m not in METRICS]
    if unknown or not names:
        raise ValueError(f"unknown --metrics {unknown}; choose from: {', '.join(METRICS)}")
    return names


def cmd_plot(args) -> int:
    from jaxbco import plotting  # matplotlib: only when the command runs (CLI start-up)

    metrics = None if args.metrics is None else _metrics(args.metrics)
    ds = results.load(args.results)
    src = args.results
    if os.path.isdir(src):
        src = os.path.join(src, "results.nc")
    out = writable_dir(args.out if args.out is not None else (os.path.dirname(src) or "."))
    stem = os.path.splitext(os.path.basename(src))[0]
    there = [os.path.join(out, stem + e) for e in (".png", ".pdf")]
    there = [f for f in there if os.path.exists(f)]
    if there and not args.overwrite:
        raise ValueError(
            f"{' and '.join(there)} already exist; pass --overwrite to replace them, or "
            f"--out another folder"
        )
    files = plotting.plot_dataset(
        ds,
        os.path.join(out, stem),
        metrics=metrics,
        theory_slopes={} if args.no_theory else None,
        quantile_band=not args.no_quantiles,
        title=args.title,
    )
    table = results.summary_table(ds)
    print(
        f"jaxbco plot: {src}: algorithm(s) {', '.join(results.algorithms_of(ds))}, "
        f"{ds.sizes['seed']} seeds, T = {ds.attrs.get('horizon')}, created {ds.attrs.get('created')}"
    )
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print("wrote " + ", ".join(files) + f" (the figure of {src})")
    return 0


def main(argv=None) -> int:
    """``jaxbco plot RESULTS ...`` with errors reading ``jaxbco plot: error: ...``."""
    return cli_main(["plot", *(sys.argv[1:] if argv is None else argv)], name="jaxbco plot")
