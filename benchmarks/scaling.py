"""Scaling sweeps of the throughput harness: seeds, horizon, dim, inner steps.

    python -m benchmarks.scaling [--out benchmarks/figures] [--repeats 2]

Varies one axis at a time around the issue's workload (4096 seeds, T = 500 here to keep the
sweep short, d = 10, K = 20 subgradient steps) and runs ``benchmarks.throughput`` for jaxbco
and the seed-vectorised NumPy peer at every point (each in its own subprocess, so compile and
peak RSS are per configuration).  Writes ``scaling.jsonl`` (one throughput record per line,
plus an ``axis`` field) and ``scaling.png`` (and ``scaling.pdf``): seed-rounds/s against each axis, both
implementations, log-log.  ``--axes`` and ``--values AXIS=v1,v2`` shrink it (CI smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

BASE = dict(seeds=4096, horizon=500, dim=10, inner_steps=20)
AXES = {
    "seeds": [256, 1024, 4096, 16384],
    "horizon": [100, 500, 2000],
    "dim": [2, 10, 50, 200],
    "inner_steps": [5, 20, 80],
}
IMPLS = ("jaxbco", "numpy-vectorised")


def _run(config: dict, repeats: int) -> list[dict]:
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.throughput",
        "--json",
        "--repeats",
        str(repeats),
        "--impls",
        ",".join(IMPLS),
        "--solver",
        "subgradient",
        "--checkpoints",
        "20",
        "--peer-processes",
        "1",
    ]  # one record per implementation and point
    for k, v in config.items():
        cmd += [f"--{k.replace('_', '-')}", str(v)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in out.stdout.strip().splitlines() if '"impl"' in line]


def plot(records: list[dict], path: str) -> list:
    """Seed-rounds/s against each axis, both implementations, log-log, a y label on every
    panel; writes ``path`` (PNG) and the PDF beside it and returns both paths."""
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    from jaxbco.plotting.style import PAPER_RC

    axes = [a for a in AXES if any(r["axis"] == a for r in records)]
    styles = {"jaxbco": ("#0072B2", "-", "o"), "numpy-vectorised": ("#E69F00", "--", "s")}
    with matplotlib.rc_context(PAPER_RC):
        fig = Figure(figsize=(1.9 * max(len(axes), 2) + 0.4, 2.5), layout="constrained")
        for i, axis in enumerate(axes):
            ax = fig.add_subplot(1, len(axes), i + 1)
            for impl in IMPLS:
                pts = sorted(
                    (r[axis], r["seed_rounds_per_s"])
                    for r in records
                    if r["axis"] == axis and r["impl"] == impl
                )
                if pts:
                    colour, ls, marker = styles[impl]
                    ax.plot(
                        *zip(*pts),
                        color=colour,
                        ls=ls,
                        marker=marker,
                        ms=4,
                        label=impl if i == 0 else None,
                    )
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel(axis.replace("_", " "))
            ax.set_ylabel("seed-rounds / s")
        if axes:
            fig.legend(loc="outside lower center", ncols=2)
        cpu = records[0].get("cpu", "") if records else ""
        backend = records[0].get("backend", "") if records else ""
        fig.suptitle(f"Subgradient(K) throughput, float32, {cpu} ({backend})"[:90])
        root = os.path.splitext(path)[0]
        files = [root + ".png", root + ".pdf"]
        fig.savefig(files[0], dpi=300, bbox_inches="tight", pad_inches=0.04)
        fig.savefig(files[1], bbox_inches="tight", pad_inches=0.04)
    return files


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.path.join("benchmarks", "figures"))
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument(
        "--axes", default=",".join(AXES), help="comma-separated subset of " + ",".join(AXES)
    )
    p.add_argument("--values", action="append", default=[], help="AXIS=v1,v2 (override an axis)")
    p.add_argument("--base", action="append", default=[], help="NAME=v (override the base config)")
    args = p.parse_args(argv)
    axes = {a: list(AXES[a]) for a in args.axes.split(",")}
    for spec in args.values:
        name, vals = spec.split("=")
        axes[name] = [int(v) for v in vals.split(",")]
    base = dict(BASE)
    for spec in args.base:
        name, val = spec.split("=")
        base[name] = int(val)
    os.makedirs(args.out, exist_ok=True)
    records = []
    for axis, values in axes.items():
        for v in values:
            for rec in _run({**base, axis: v}, args.repeats):
                rec["axis"] = axis
                records.append(rec)
                print(json.dumps(rec), flush=True)
    with open(os.path.join(args.out, "scaling.jsonl"), "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    plot(records, os.path.join(args.out, "scaling.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
