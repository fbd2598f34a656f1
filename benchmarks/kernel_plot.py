"""Throughput of the fused kernel against the number of seeds, with its rooflines.

    python -m benchmarks.kernel_plot OUT.png RECORDS.jsonl[=LABEL] ...

(=LABEL names the launch choice of that file's "seeds" records, for records whose label does
not say it: run 1's "kernel" was the then-default 128 seeds x 4 warps.)  The current launch
default (``jaxbco.fused.kernel.Config``) is marked; a PDF is written beside the PNG.

Reads ``benchmarks.kernel``'s records (the "seeds" and "headline" steps) and draws seed-rounds/s
against seeds per launch choice, the scan engine's 1e4 x 1e4 point, and three ceilings for the
card the records name (NVIDIA H100/H200, 132 SMs at 1.98 GHz):

  integer pipe  64 int32 ops/clk/SM / the kernel's int32 ops per seed-round
  issue         4 x 32 thread-instructions/clk/SM / all its ops per seed-round
  memory        HBM bandwidth / the bytes a seed's carried state would move per round if it
                lived in memory (the scan engine's case; the kernel keeps it in registers)

The op counts are those of the kernel's Triton IR for quadratic-ball, d = 10 (padded to 16
rows), counted per seed-round (benchmarks/NOTES.md): they are estimates of the instruction
count, not a hardware reading.
"""

from __future__ import annotations

import json
import sys

SMS, CLOCK = 132, 1.98e9
INT_OPS, ALL_OPS = 4_500, 7_470  # per seed-round, from the Triton IR (benchmarks/NOTES.md)
STATE_BYTES = 224  # (x 10, lambda, 4 sums, 2 flags, 11 comparator sums) x 4 B, read + written
HBM = {"H200": 4.8e12, "H100": 3.35e12}  # datasheet bytes/s


def ceilings(device: str) -> dict:
    hbm = next((v for k, v in HBM.items() if k in device), 3.35e12)
    return {
        "int32 pipe (Threefry)": 64 * SMS * CLOCK / INT_OPS,
        "instruction issue": 128 * SMS * CLOCK / ALL_OPS,
        "memory, state per round": hbm / STATE_BYTES,
    }


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
    """Seed-rounds/s against seeds per launch choice (the current default marked), the scan
    engine's 1e4 x 1e4 point and the card's three ceilings; writes ``out`` (PNG) and the PDF
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
        for (name, value), style in zip(ceilings(device).items(), ("--", ":", "-.")):
            ax.axhline(value, color="#666666", ls=style, lw=0.9)
            below = name.startswith("int32")
            ax.annotate(
                f"{name}: {value:.2g}/s",
                (0.02, value),
                xycoords=("axes fraction", "data"),
                xytext=(0, -3 if below else 3),
                textcoords="offset points",
                va="top" if below else "bottom",
                fontsize=7.5,
                color="#444444",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(top=2.2 * max(ceilings(device).values()))
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
