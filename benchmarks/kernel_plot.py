"""Throughput of the fused kernel against the number of seeds, with its rooflines.

    python -m benchmarks.kernel_plot OUT.png RECORDS.jsonl[=LABEL] ...

(=LABEL names the launch choice of that file's "seeds" records, for records whose label does
not say it: run 1's "kernel" was the then-default 128 seeds x 4 warps.)  The current launch
default (``jaxbco.fused.kernel.Config``) is marked; a PDF is written beside the PNG.

Reads ``benchmarks.kernel``'s records (the "seeds" and "headline" steps) and draws seed-rounds/s
against seeds per launch choice, and the scan engine's 1e4 x 1e4 point, for the card the
records name.  Draw it from records of the current random streams and launch default
(``benchmarks/gpu/h200-kernel-run7.jsonl``, session 17): older records (runs 1-3) predate both.

No ceilings are drawn: the instruction counts an int32-pipe or issue ceiling would rest on
were taken from the Triton IR before the counter-based streams (session 15) and are stale;
measured points lay above them.
"""

from __future__ import annotations

import json
import sys


def load(paths):
    rows = []
    for spec in paths:
        path, _, label = spec.partition("=")
        with open(path) as fh:
            new = [json.loads(line) for line in fh if line.startswith("{")]
        for r in new:
            if label and r.get("step") == "seeds":
                r["engine"] = label
        rows += new
    return rows


def default_engine() -> str:
    """The engine label of the kernel's current launch default (``jaxbco.fused.kernel.Config``)."""
    from jaxbco.fused.kernel import Config

    c = Config()
    return f"kernel B={c.block} warps={c.warps}"


def plot(rows, out: str) -> list:
    """Seed-rounds/s against seeds per launch choice (the current default marked) and the scan
    engine's 1e4 x 1e4 point; writes ``out`` (PNG) and the PDF
    beside it and returns both paths."""
    import os

    import matplotlib
    from matplotlib.figure import Figure

    from jaxbco.plotting.style import MARKERS, PAPER_RC, WIDE_COLORS

    default = default_engine()
    device = next((r["device"] for r in rows), "gpu")
    series = {}
    for r in rows:
        if r.get("step") == "seeds":
            series.setdefault(r["engine"], []).append((r["seeds"], r["seed_rounds_per_s"]))
    with matplotlib.rc_context(PAPER_RC):
        fig = Figure(figsize=(5.2, 3.4), layout="constrained")
        ax = fig.add_subplot()
        order = sorted(series, key=lambda e: (e != default, e))
        for k, label in enumerate(order):
            pts = sorted(set(series[label]))
            ax.plot(
                [p[0] for p in pts],
                [p[1] for p in pts],
                color=WIDE_COLORS[k],
                marker=MARKERS[k],
                ls=("-", "--", ":")[k % 3],
                ms=4,
                label=f"{label}{' (default)' if label == default else ''}, T = 1000",
            )
        scan = [r for r in rows if r.get("engine") == "scan" and r.get("step") == "headline"]
        if scan:
            ax.plot(
                [scan[0]["seeds"]],
                [scan[0]["seed_rounds_per_s"]],
                "ks",
                ms=5,
                label="scan engine, 1e4 seeds x 1e4 rounds",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("seeds (one setting)")
        ax.set_ylabel("seed-rounds per second")
        ax.set_title(f"fused kernel, quadratic-ball d = 10, {device.split(':')[-1]}")
        fig.legend(loc="outside lower center", ncols=2)
        root = os.path.splitext(out)[0]
        files = [root + ".png", root + ".pdf"]
        fig.savefig(files[0], dpi=300, bbox_inches="tight", pad_inches=0.04)
        fig.savefig(files[1], bbox_inches="tight", pad_inches=0.04)
    return files


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2:
        print(__doc__)
        return 2
    plot(load(argv[1:]), argv[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
