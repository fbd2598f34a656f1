"""The ``jaxbco run`` command at tiny sizes: summary, results file, figure, exit codes; every
registered problem runs; README's problem list is the registry; --help shows defaults; the
comparator pass shows progress; the wall time totals every session of a resumed run.  The
compilation cache stays off (``--no-compile-cache``) or in tmp_path: never the user's."""

import json
import os
import re

import numpy as np
import pytest

from jaxbco import problems, results
from jaxbco.cli import main as _main

NC = "--no-compile-cache"
README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def main(argv):
    return _main(list(argv) + [NC])


def test_run_writes_summary_results_and_figure(tmp_path, capsys):
    out = tmp_path / "res"
    code = main(
        [
            "run",
            "--seeds",
            "5",
            "--horizon",
            "40",
            "--dim",
            "3",
            "--out",
            str(out),
            "--checkpoints",
            "10",
        ]
    )
    assert code == 0
    captured = capsys.readouterr()
    text = captured.out
    for key in ("R_T/T", "V_T hard", "V_T soft", "wall time", "seed-rounds/s"):
        assert key in text
    # the path is printed before the run, the speed (compile split out) after it
    lines = text.splitlines()
    first = {
        label: next(i for i, line in enumerate(lines) if line.split()[:1] == [label])
        for label in ("back-end", "prox", "comparator", "R_T/T", "speed")
    }
    assert first["back-end"] < first["prox"] < first["comparator"] < first["R_T/T"] < first["speed"]
    assert "seeds-minor" in lines[first["back-end"]] and "BallHalfspace" in lines[first["prox"]]
    assert "compile" in lines[first["speed"]] and "excluded" in lines[first["speed"]]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seeds"] == 5 and summary["horizon"] == 40
    assert summary["prox_method"].startswith("BallHalfspace") and summary["engine"] == "seeds-minor"
    assert summary["comparator_method"].startswith("projection of the mean theta")
    assert 0.0 <= summary["compile_s"] <= summary["wall_s"] and summary["seed_rounds_per_s"] > 0
    # quadratic-ball is not strongly convex: sigma is unused, and said so (not a stray 2.0)
    assert summary["sigma"] is None and summary["schedule"] == "Thm. 1"
    # in a log file (not a terminal) progress comes as whole lines, the last one "done"
    assert "\r" not in captured.err
    assert np.isfinite(summary["regret_over_T"]["mean"])
    ds = results.load(out / "results.nc")
    assert ds["regret"].shape == (1, 5, ds["round"].size)  # (setting, seed, round)
    assert ds["round"].values[-1] == 40 and not (out / "state.npz").exists()
    assert results.config_of(ds)["problem"] == "quadratic-ball"
    png = (out / "curves.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    # `jaxbco plot` on the run's results file redraws the run's figure, pixel for pixel
    assert main(["plot", str(out / "results.nc"), "--out", str(tmp_path / "again")]) == 0
    import matplotlib.image

    np.testing.assert_array_equal(
        matplotlib.image.imread(out / "curves.png"),
        matplotlib.image.imread(tmp_path / "again" / "results.png"),
    )
    # a figure already there is replaced only when asked (issue 57: it was, silently)
    before = (tmp_path / "again" / "results.pdf").stat().st_mtime_ns
    again = ["plot", str(out / "results.nc"), "--out", str(tmp_path / "again")]
    assert main(again) == 2
    assert "already exist; pass --overwrite" in capsys.readouterr().err
    assert (tmp_path / "again" / "results.pdf").stat().st_mtime_ns == before
    assert main(again + ["--overwrite"]) == 0
    assert f"(the figure of {out / 'results.nc'})" in capsys.readouterr().out


def test_unknown_problem_exits_2(capsys):
    """An unknown name (neither registered nor a module:Name spec): one line naming the
    choices, exit 2."""
    assert main(["run", "--problem", "no-such-problem"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown problem 'no-such-problem'; choose one of:" in err[0]


def test_bad_parameter_is_one_line_exit_2(tmp_path, capsys):
    code = main(["run", "--c", "0.2", "--seeds", "2", "--horizon", "10", "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("jaxbco: error: c must lie in [0.5, 1)") and "\n" not in err


def test_unwritable_output_folder_exits_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    code = main(["run", "--seeds", "2", "--horizon", "10", "--out", str(blocker / "sub")])
    assert code == 2
    assert "cannot be written" in capsys.readouterr().err
    assert blocker.read_text() == "not a folder"


def test_readme_problem_list_is_the_registry():
    text = open(README).read()
    block = text.split("<!-- problems: jaxbco.problems.PROBLEMS, in order -->")[1]
    block = block.split("<!-- /problems -->")[0]
    items = [" ".join(chunk.split()) for chunk in re.split(r"^\* ", block, flags=re.M)[1:]]
    names = [n for item in items for n in re.findall(r"`([a-z0-9:_-]+)`", item.split(" — ")[0])]
    assert names == list(problems.PROBLEMS)


@pytest.mark.parametrize("name", list(problems.PROBLEMS))
def test_every_registered_problem_runs(tmp_path, capsys, name):
    """Tiny sizes (d = 3, or 2 where fixed; T = 8, 2 seeds); the portfolio problems share one
    compiled program.  simplex-quadratic at T = 20: at T = 8 its default xi = delta / r = 0.31
    and on the shrunk simplex of d = 3 the halfspace x_1 + x_2 <= 0.1 is empty (refused up
    front; xi <= 0.15 needs T >= 17)."""
    out = tmp_path / "out"
    dim = "2" if name in ("yu-neely", "hutchinson-toy") else "3"
    horizon = 20 if name == "simplex-quadratic" else 8
    code = main(
        [
            "run",
            "--problem",
            name,
            "--seeds",
            "2",
            "--horizon",
            str(horizon),
            "--dim",
            dim,
            "--checkpoints",
            "3",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seeds"] == 2 and summary["horizon"] == horizon and summary["failed_seeds"] == 0
    assert np.isfinite(summary["regret_over_T"]["mean"])
    assert sorted(os.listdir(out)) == ["curves.pdf", "curves.png", "results.nc", "summary.json"]


@pytest.mark.parametrize("command", ["run", "sweep", "compare", "tune", "plot"])
def test_help_shows_defaults(capsys, command):
    with pytest.raises(SystemExit) as exc:
        _main([command, "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--no-compile-cache" in text and "--compile-cache DIR" in text
    expect = {
        "run": [
            "(default: 0.5)",
            "(default: quadratic-ball)",
            "(default: jaxbco-results)",
            "(default: 100)",
            "(default: 1000;",
            "(default: dual)",
        ],
        "sweep": ["(default: jaxbco-sweep)", "(default: 300)"],
        "compare": ["(default 100)", "(default: jaxbco-compare)", "(default: float32)"],
        "tune": [
            "(default: 20)",
            "(default: 0.3)",
            "(default: jaxbco-tune)",
            "(default: c,eps,alpha_scale)",
            "(default: forward)",
        ],
        "plot": ["(default: those of the command that wrote the file"],
    }[command]
    for fragment in expect:
        assert fragment in text, fragment


def test_comparator_pass_shows_progress(capsys, monkeypatch):
    """In a log file: whole lines (the x* pass's start and end, tenths of the rounds, the end);
    on a terminal: the tqdm bar, which names the x* pass while it runs."""
    import io
    import sys

    from jaxbco import simulate

    p = problems.make("quadratic-ball", 2)
    simulate.sweep(p, 100, seeds=3, progress=True, checkpoints=np.array([1, 100]))
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert "\r" not in err
    assert lines[0].startswith("x* for 3 seeds over 100 rounds: one compiled pass")
    assert lines[1].startswith("x* for 3 seeds over 100 rounds: done in")
    assert [line.split(": ")[1].split("%")[0] for line in lines[2:-1]] == [
        str(10 * k) for k in range(1, 10)
    ]  # chunks of 1 round: each tenth once
    assert lines[-1].startswith("3 runs: done, 100/100 rounds in")

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    simulate.sweep(p, 100, seeds=3, progress=True, checkpoints=np.array([1, 100]))
    assert "x* for 3 seeds over 100 rounds (one pass" in term.getvalue() and "\r" in term.getvalue()


def test_wall_time_totals_every_session(tmp_path, capsys):
    """An interrupted run resumed: the reported wall time includes the first session's."""
    from jaxbco._src import resume

    out = tmp_path / "out"
    argv = [
        "run",
        "--seeds",
        "3",
        "--horizon",
        "40",
        "--dim",
        "2",
        "--out",
        str(out),
        "--quiet",
        "--checkpoints",
        "4",
        "--chunk",
        "10",
    ]
    real = resume.save

    def stop(path, carry, x_star, next_round, config_hash, wall_s=0.0):
        real(path, carry, x_star, next_round, config_hash, wall_s + 1000.0)  # a long session
        if next_round > 11:
            raise KeyboardInterrupt

    resume.save = stop
    try:
        assert main(argv) == 130
    finally:
        resume.save = real
    capsys.readouterr()
    assert main(argv + ["--resume"]) == 0
    text = capsys.readouterr().out
    wall = float(re.search(r"wall time\s+([0-9.]+) s \(compile included; all sessions\)", text)[1])
    assert wall > 1000.0
    assert json.loads((out / "summary.json").read_text())["wall_s"] > 1000.0
