"""`jaxbco sweep --config`, `--resume` after a killed process, and bad input at the edges:
one-line errors, exit code 2, nothing on disk damaged."""

import json
import os
import re
import signal
import subprocess
import sys

import numpy as np
import pytest

from jaxbco import results
from jaxbco.cli import main as _main
from jaxbco.hyper import Hyper

sys.path.insert(0, os.path.dirname(__file__))
import _pausing  # noqa: E402

NC = "--no-compile-cache"  # never the user's compilation cache


def main(argv):
    return _main(list(argv) + [NC])


STUDY = """
problem = "quadratic-ball"
dim = 3
horizon = 30
seeds = 5
checkpoints = 5

[hyper]
eta_scale = 2.0

[grid]
c = [0.5, 0.75]
eps = [0.1, 0.2, 0.5]
"""


def _write(tmp_path, text, name="study.toml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_sweep_config_writes_labelled_results(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["sweep", "--config", _write(tmp_path, STUDY), "--out", str(out), "--quiet"]) == 0
    ds = results.load(out / "results.nc")
    assert dict(ds["regret"].sizes) == {"c": 2, "eps": 3, "seed": 5, "round": ds.sizes["round"]}
    np.testing.assert_array_equal(ds["c"].values, [0.5, 0.75])
    np.testing.assert_array_equal(ds["eps"].values, [0.1, 0.2, 0.5])
    assert float(ds["eta_scale"]) == 2.0 and ds["round"].values[-1] == 30
    assert np.all(np.isfinite(ds["regret"].values))
    assert results.config_of(ds)["grid"] == {"c": [0.5, 0.75], "eps": [0.1, 0.2, 0.5]}
    assert len(results.to_frame(ds)) == 2 * 3 * 5 * ds.sizes["round"]
    assert (out / "results.png").exists() and not (out / "state.npz").exists()
    assert "regret_over_T_mean" in capsys.readouterr().out


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "problem = 'quadratic-ball'\nhorizon = 10\nseeds = 2\nhorizn = 3\n",
            "unknown key(s) ['horizn']",
        ),
        ("problem = 'quadratic-ball'\nseeds = 2\n", "missing required key(s) ['horizon']"),
        ("problem = 'quadratic-ball'\nhorizon = '10'\nseeds = 2\n", "horizon must be a int"),
        (
            "problem = 'quadratic-ball'\nhorizon = 10\nseeds = 2\n[grid]\nc = []\n",
            "[grid] c must be a non-empty list",
        ),
        (
            "problem = 'quadratic-ball'\nhorizon = 10\nseeds = 2\n[grid]\ncc = [0.5]\n",
            "has no hyperparameter 'cc'",
        ),
        (
            "problem = 'quadratic-ball'\nhorizon = 10\nseeds = 2\n[grid]\nc = [0.2]\n",
            "c must lie in [0.5, 1)",
        ),
        ("problem = 'no-such'\nhorizon = 10\nseeds = 2\n", "unknown problem 'no-such'"),
        (
            "problem = 'quadratic-ball'\nhorizon = 10\nseeds = 2\nalgorithm = 'nope'\n",
            "unknown algorithm 'nope'",
        ),
        (
            "problem = 'quadratic-ball'\nhorizon = 10\nseeds = 0\n",
            "seeds must be an integer in [1, 2^32]",
        ),
        ("problem = 'quadratic-ball\nhorizon = 10\n", "is not valid TOML"),
    ],
)
def test_bad_study_file_is_one_line_exit_2(tmp_path, capsys, text, message):
    out = tmp_path / "out"
    code = main(["sweep", "--config", _write(tmp_path, text), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "Traceback" not in err
    assert message in err, err
    assert not (out / "results.nc").exists()


def test_missing_study_file_and_bad_plot_input_exit_2(tmp_path, capsys):
    assert main(["sweep", "--config", str(tmp_path / "absent.toml")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "absent.nc")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_unfinished_state_is_not_overwritten_without_resume(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    state = out / "state.npz"
    state.write_bytes(b"an unfinished run")
    assert main(["run", "--seeds", "2", "--horizon", "10", "--out", str(out), "--quiet"]) == 2
    assert "is not a jaxbco state file" in capsys.readouterr().err
    assert state.read_bytes() == b"an unfinished run"
    # --resume with a file that is not a state: refused, file kept.
    assert (
        main(["run", "--seeds", "2", "--horizon", "10", "--out", str(out), "--quiet", "--resume"])
        == 2
    )
    assert "cannot be read" in capsys.readouterr().err
    assert state.read_bytes() == b"an unfinished run"


def test_resume_state_from_another_configuration_exit_2(tmp_path, capsys):
    out = tmp_path / "out"
    argv = [
        "run",
        "--seeds",
        "3",
        "--horizon",
        "20",
        "--dim",
        "3",
        "--out",
        str(out),
        "--quiet",
        "--checkpoints",
        "4",
        "--chunk",
        "5",
    ]
    from jaxbco._src import resume

    # Leave a state behind as an interrupted run would (stop after the first chunk).
    real = resume.save

    def stop(*a):
        real(*a)
        if a[3] > 1:
            raise KeyboardInterrupt

    resume.save = stop
    try:
        assert main(argv) == 130
    finally:
        resume.save = real
    assert "continue with --resume" in capsys.readouterr().err
    before = (out / "state.npz").read_bytes()
    assert main(argv[:-4] + ["--checkpoints", "4", "--chunk", "5", "--resume", "--c", "0.7"]) == 2
    assert "different configuration" in capsys.readouterr().err
    assert (out / "state.npz").read_bytes() == before
    assert main(argv + ["--resume"]) == 0
    assert results.load(out / "results.nc")["round"].values[-1] == 20


def test_killed_run_resumes_bitwise(tmp_path):
    """SIGKILL a `jaxbco run` mid-way, `--resume` it: the result equals an uninterrupted run."""
    args = [
        "run",
        "--seeds",
        "16",
        "--horizon",
        "6000",
        "--dim",
        "4",
        "--checkpoints",
        "20",
        "--chunk",
        "20",
        "--quiet",
    ]
    killed = tmp_path / "killed"
    env = dict(os.environ)
    env.pop("JAX_ENABLE_X64", None)
    # one compilation cache in tmp_path for the three processes: the second and third reuse
    # the first's programs (and the cache's executables must give the same bits)
    cache = ["--compile-cache", str(tmp_path / "cache")]
    cmd = [sys.executable, "-m", "jaxbco", *args, "--out", str(killed), *cache]
    # paused after the state of round 200 (10 chunks; the first state holds only x*)
    proc = subprocess.Popen(
        [sys.executable, "-c", _pausing.PAUSING_JAXBCO, "200", *cmd[3:]],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    state = killed / "state.npz"
    _pausing.paused(proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not (killed / "results.nc").exists()
    with np.load(state) as z:
        assert json.loads(str(z["meta"]))["next_round"] == 201
    resumed = subprocess.run(
        cmd + ["--resume"], env=env, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    whole = tmp_path / "whole"
    # in a process like the killed one, not in this test process: its JAX configuration (x64,
    # for one) may differ, which changes index types and XLA's fusion, so float32 rounding
    # (benchmarks/NOTES.md)
    done = subprocess.run(
        [sys.executable, "-m", "jaxbco", *args, "--out", str(whole), *cache],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    a, b = results.load(killed / "results.nc"), results.load(whole / "results.nc")
    for m in results.CURVES + ("failed", "x_star", "x_final"):
        np.testing.assert_array_equal(a[m].values, b[m].values, err_msg=m)


def test_merge_seed_blocks_equals_one_block(tmp_path):
    from jaxbco import problems, simulate

    p = problems.make("quadratic-ball", 3)
    kw = dict(checkpoints=np.array([1, 10, 20]))
    whole = results.to_dataset(simulate.sweep(p, 20, seeds=np.arange(7), **kw))
    parts = []
    for i, ids in enumerate([np.arange(4, 7), np.arange(4)]):  # any order
        path = str(tmp_path / f"part{i}.nc")
        results.save(results.to_dataset(simulate.sweep(p, 20, seeds=ids, **kw)), path)
        parts.append(path)
    merged = results.merge_seeds(parts)
    for m in results.CURVES + ("failed", "x_star", "x_final"):
        np.testing.assert_array_equal(merged[m].values, whole[m].values, err_msg=m)
    with pytest.raises(ValueError, match="share seeds"):
        results.merge_seeds([parts[0], parts[0]])


def test_merge_seeds_refuses_parts_of_other_studies_naming_the_field():
    """Parts that differ in T, rounds, hyperparameters or the stored configuration (key,
    problem) are refused, naming the field (issue 57: T = 100 and T = 120 files were
    outer-joined, NaN-filled)."""
    from jaxbco import problems, simulate

    p = problems.make("quadratic-ball", 3)
    cfg = {"problem": "quadratic-ball", "key": 0}

    def part(T, ids, hyper=None, config=cfg, cps=(1, 10)):
        res = simulate.sweep(p, T, hyper, seeds=ids, checkpoints=np.asarray(cps + (T,)))
        return results.to_dataset(res, config=config)

    H = Hyper(c=0.5, eps=0.1, xi=0.05, delta=0.05)
    a = part(20, np.arange(3), H)
    refused = {
        "horizon": part(24, np.arange(3, 5), H),
        "the checkpoint rounds": part(20, np.arange(3, 5), H, cps=(1, 5)),
        "hyperparameter 'c'": part(20, np.arange(3, 5), Hyper(c=0.7, eps=0.1, xi=0.05, delta=0.05)),
        "the configuration's 'key'": part(20, np.arange(3, 5), H, config={**cfg, "key": 1}),
    }
    for field, b in refused.items():
        with pytest.raises(ValueError, match=f"part 1 is not a seed block .*: {re.escape(field)}"):
            results.merge_seeds([a, b])
    merged = results.merge_seeds([a, part(20, np.arange(3, 5), H)])
    assert merged.sizes["seed"] == 5


def test_a_study_file_with_a_byte_order_mark_is_read():
    """Editors on some systems start a UTF-8 file with a byte-order mark, which TOML does not
    allow: the study file is read as if it were not there (before: "not valid TOML ... at line
    1, column 1")."""
    import tempfile

    from jaxbco.study import load_config

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "study.toml")
        with open(path, "w", encoding="utf-8-sig") as fh:
            fh.write(STUDY)
        cfg = load_config(path)
    assert cfg["problem"] == "quadratic-ball" and cfg["grid"]["eps"] == [0.1, 0.2, 0.5]
