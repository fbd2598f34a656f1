"""The benchmark harness runs at tiny sizes and prints its JSON (no thresholds: never timed)."""

import json
import pathlib
import subprocess
import sys

# ``python -m benchmarks.*`` finds the package from the repository root, whatever folder pytest
# was started in: every command runs there
ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_throughput_harness_smoke():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.throughput",
            "--seeds",
            "16",
            "--horizon",
            "8",
            "--dim",
            "3",
            "--inner-steps",
            "2",
            "--repeats",
            "1",
            "--loop-seeds",
            "1",
            "--checkpoints",
            "4",
            "--peer-processes",
            "2",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    lines = [json.loads(line) for line in out.stdout.strip().splitlines()]
    impls = {r.get("impl") for r in lines}
    assert {"jaxbco", "numpy-vectorised", "per-seed-loop"} <= impls
    # equal cores: each NumPy peer also as 2 processes splitting the 16 seeds
    par = [r for r in lines if r.get("processes") == 2]
    assert {r["impl"] for r in par} == {"numpy-vectorised", "numpy-seeds-minor"}
    assert all(sum(r["seeds_per_process"]) == 16 and r["seeds"] == 16 for r in par)
    assert "jaxbco_over_best_numpy_equal_cores" in lines[-1]
    for r in lines:
        if "impl" in r:
            for key in ("run_s", "compile_s", "seed_rounds_per_s", "peak_rss_mb", "cpu", "backend"):
                assert key in r
            assert r["run_s"] > 0
    assert "ratios_speedup" in lines[-1]


def test_scaling_sweep_smoke(tmp_path):
    """One point of one axis at tiny sizes: the JSON lines carry the axis, the figure is drawn."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.scaling",
            "--out",
            str(tmp_path),
            "--repeats",
            "1",
            "--axes",
            "dim",
            "--values",
            "dim=3",
            "--base",
            "seeds=16",
            "--base",
            "horizon=6",
            "--base",
            "dim=3",
            "--base",
            "inner_steps=2",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    lines = [json.loads(line) for line in out.stdout.strip().splitlines()]
    assert {(r["axis"], r["dim"], r["impl"]) for r in lines} == {
        ("dim", 3, "jaxbco"),
        ("dim", 3, "numpy-vectorised"),
    }
    assert all(r["seed_rounds_per_s"] > 0 for r in lines)
    assert (tmp_path / "scaling.png").stat().st_size > 0
    assert len((tmp_path / "scaling.jsonl").read_text().splitlines()) == 2


def test_gpu_script_parses_and_its_flags_exist():
    """benchmarks/gpu.sh runs only on a lent GPU; here: it is valid bash, and every
    ``--flag`` it passes to benchmarks.throughput, benchmarks.memory, benchmarks.kernel,
    benchmarks.problems or ``jaxbco run`` is one
    they accept (nvidia-smi's and XLA's flags aside)."""
    import re

    script = ROOT / "benchmarks" / "gpu.sh"
    parsed = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert parsed.returncode == 0, parsed.stderr
    text = script.read_text()
    flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)(?!\w)", text))
    flags -= {"--format", "--query-gpu"}  # nvidia-smi's; XLA's contain '_' and are not matched
    known = set()
    for args in (
        ["benchmarks.throughput"],
        ["benchmarks.memory"],
        ["benchmarks.kernel"],
        ["benchmarks.problems"],
        ["jaxbco", "run"],
    ):
        out = subprocess.run(
            [sys.executable, "-m", *args, "--help"],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        known |= set(re.findall(r"--[a-z][a-z-]+", out.stdout))
    assert "--seeds" in flags and "--solver" in flags
    assert flags <= known, (
        f"gpu.sh passes flags the benchmarks do not take: {sorted(flags - known)}"
    )


def test_problems_harness_smoke():
    """One named problem at tiny sizes: its JSON line names the prox path and the comparator
    and carries the throughput (the new paths themselves are tested against cvxpy elsewhere)."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.problems",
            "--seeds",
            "16",
            "--horizon",
            "6",
            "--repeats",
            "1",
            "--problems",
            "quadratic-ball",
            "--json",
            "--breakdown",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    lines = [json.loads(line) for line in out.stdout.strip().splitlines()]
    (rec,) = [r for r in lines if "problem" in r]
    # the breakdown's ablations ran on the full run's back-end, and every part has a share
    parts = rec["breakdown"]
    assert set(parts["engines"].values()) == {rec["engine"]}, parts["engines"]
    assert set(parts["share"]) == {"data", "estimate", "prox", "prox_certificate", "comparator"}
    assert all(parts[k] > 0 for k in parts if k.endswith("_s"))
    assert rec["solver_path"] == "closed form: ball n halfspace"
    assert rec["comparator"] == "projection of the mean theta (quadratic)"
    for key in ("compile_s", "run_s", "peak_rss_mb", "cpu", "d"):
        assert key in rec
    assert rec["seed_rounds_per_s"] > 0 and rec["failed_seeds"] == 0
    assert lines[-1]["fraction_of_quadratic_ball"] == {"quadratic-ball": 1.0}


def test_kernel_benchmark_smoke(tmp_path):
    """benchmarks.kernel in its CPU dry run (Pallas' interpreter), one headline pair, and the
    throughput figure drawn from its records."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.kernel",
            "--out",
            str(tmp_path),
            "--quick",
            "--steps",
            "headline",
            "--configs",
            "32x4",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    rows = [json.loads(line) for line in (tmp_path / "kernel.jsonl").read_text().splitlines()]
    assert [r["engine"] for r in rows[:2]] == ["scan", "kernel B=32 warps=4"]
    assert {r["step"] for r in rows} == {"headline"}
    assert all(r["run_s"] > 0 and r["failed"] == 0 for r in rows)
    # the same run (T = 200, 256 seeds) by either engine: the same mean regret to round-off
    assert abs(rows[0]["regret_T_mean"] - rows[1]["regret_T_mean"]) < 1e-4 * abs(
        rows[0]["regret_T_mean"]
    )
    figure = tmp_path / "seeds.png"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.kernel_plot",
            str(figure),
            str(tmp_path / "kernel.jsonl"),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert figure.stat().st_size > 0
