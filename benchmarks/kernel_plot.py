"""Throughput of the fused kernel against the number of seeds, with its rooflines.

    python -m benchmarks.kernel_plot OUT.png RECORDS.jsonl[=LABEL] ...

(=LABEL names the launch choice of that file's "seeds" records, for records whose label does
not say it: run 1's "kernel" was the then-default 128 seeds x 4 warps.)

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
    return {"int32 pipe (Threefry)": 64 * SMS * CLOCK / INT_OPS,
            "instruction issue": 128 * SMS * CLOCK / ALL_OPS,
            "memory, state per round": hbm / STATE_BYTES}


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


def plot(rows, out: str) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.6))
    ax = fig.add_subplot()
    device = next((r["device"] for r in rows), "gpu")
    series = {}
    for r in rows:
        if r.get("step") == "seeds":
            series.setdefault(r["engine"], []).append((r["seeds"], r["seed_rounds_per_s"]))
    for label, pts in sorted(series.items()):
        pts = sorted(set(pts))
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"{label} (T = 1000)")
    scan = [r for r in rows if r.get("engine") == "scan" and r.get("step") == "headline"]
    if scan:
        ax.plot([scan[0]["seeds"]], [scan[0]["seed_rounds_per_s"]], "ks",
                label="scan engine, 1e4 x 1e4")
    target = 1e4 * 1e4 / 0.030
    ax.plot([1e4], [target], "r*", ms=12, label="issue 17 target: 1e4 x 1e4 in 30 ms")
    for (name, value), style in zip(ceilings(device).items(), ("--", ":", "-.")):
        ax.axhline(value, color="grey", ls=style, lw=1)
        below = name.startswith("int32")
        ax.text(1.1e3, value / 1.25 if below else value * 1.08, f"{name}: {value:.2g}/s",
                fontsize=7, color="dimgrey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("seeds (one setting)")
    ax.set_ylabel("seed-rounds per second")
    ax.set_title(f"fused round-loop kernel, quadratic-ball d = 10, {device.split(':')[-1]}", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=150)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2:
        print(__doc__)
        return 2
    plot(load(argv[1:]), argv[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
