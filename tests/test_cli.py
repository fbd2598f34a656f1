"""The ``jaxbco run`` command at tiny sizes: summary, results file, figure, exit codes."""

import json

import numpy as np
import pytest

from jaxbco import results
from jaxbco.cli import main


def test_run_writes_summary_results_and_figure(tmp_path, capsys):
    out = tmp_path / "res"
    code = main(["run", "--seeds", "5", "--horizon", "40", "--dim", "3", "--out", str(out),
                 "--checkpoints", "10"])
    assert code == 0
    text = capsys.readouterr().out
    for key in ("R_T/T", "V_T hard", "V_T soft", "wall time"):
        assert key in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seeds"] == 5 and summary["horizon"] == 40
    assert np.isfinite(summary["regret_over_T"]["mean"])
    ds = results.load(out / "results.nc")
    assert ds["regret"].shape == (1, 5, ds["round"].size)  # (setting, seed, round)
    assert ds["round"].values[-1] == 40 and not (out / "state.npz").exists()
    assert results.config_of(ds)["problem"] == "quadratic-ball"
    png = (out / "curves.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_unknown_problem_exits_2(capsys):
    with pytest.raises(SystemExit) as err:
        main(["run", "--problem", "no-such-problem"])
    assert err.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


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
