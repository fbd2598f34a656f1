"""The benchmark harness runs at tiny sizes and prints its JSON (no thresholds: never timed)."""

import json
import subprocess
import sys


def test_throughput_harness_smoke():
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.throughput", "--seeds", "16", "--horizon", "8",
         "--dim", "3", "--inner-steps", "2", "--repeats", "1", "--loop-seeds", "1",
         "--checkpoints", "4", "--json"], capture_output=True, text=True, check=True)
    lines = [json.loads(line) for line in out.stdout.strip().splitlines()]
    impls = {r.get("impl") for r in lines}
    assert {"jaxbco", "numpy-vectorised", "per-seed-loop"} <= impls
    for r in lines:
        if "impl" in r:
            for key in ("run_s", "compile_s", "seed_rounds_per_s", "peak_rss_mb", "cpu", "backend"):
                assert key in r
            assert r["run_s"] > 0
    assert "ratios_speedup" in lines[-1]
