"""The comparison study: a tiny run writes its table and figure, the theorem bound overlay is
finite and lies above the measured mean curves, exponent fits, the CLI's error paths."""

import json
import os

FLOAT64 = True  # every test here is a float64 reference check (tests/conftest.py)

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jaxbco import cli, compare, problems  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("compare"))
    res = compare.compare(
        "hutchinson-toy",
        seeds=8,
        horizon=200,
        algorithms=["rectified-bco", "mahdavi-pd"],
        out=out,
        checkpoints=30,
    )
    return res, out


def test_compare_writes_table_and_figures(tiny):
    res, out = tiny
    assert [r["algorithm"] for r in res.rows] == ["rectified-bco", "mahdavi-pd"]
    for name in ("hutchinson-toy.md", "hutchinson-toy.json", "hutchinson-toy.png"):
        assert os.path.getsize(os.path.join(out, name)) > 0
    table = open(os.path.join(out, "hutchinson-toy.md")).read()
    assert "| rectified-bco |" in table and "Thm. 3" in table and "F = " in table
    summary = json.load(open(os.path.join(out, "hutchinson-toy.json")))
    assert summary["horizon"] == 200 and len(summary["rows"]) == 2
    for r in res.rows:
        for key in ("regret_over_T", "hard_violation", "soft_violation"):
            assert np.isfinite(r[key]["mean"]) and r[key]["n"] == 8
        assert r["wall_s"] > 0 and r["failed_seeds"] == 0
    assert res.curves["rectified-bco"]["regret"].shape == (8, len(res.rounds))


def test_bound_overlay_is_finite_and_above_the_mean(tiny):
    res, _ = tiny
    b = res.bounds
    assert b["label"].startswith("Thm. 3")  # 6-strongly convex loss, fixed constraint
    for key in ("regret", "hard_violation"):
        assert np.all(np.isfinite(b[key])) and np.all(b[key] > 0)
        mean = np.mean(res.curves["rectified-bco"][key], axis=0)
        assert np.all(b[key] >= mean), key


def test_theorem_choice_and_constants():
    toy = problems.make("hutchinson-toy")
    k = compare.bound_constants(toy, 100, strongly_convex=toy.strongly_convex)
    # F_t <= 2 * 3 * (R_X + ||theta_t||) with R_X = 1, ||theta_t|| <= sqrt(2); G = max row norm 1
    assert 6.0 < k["F"] <= 6 * (1 + np.sqrt(2)) + 1e-9 and k["G"] == pytest.approx(1.0)
    assert (k["D"], k["d"]) == (2.0, 2) and compare.theorem(k) == "Thm. 3"
    k1 = dict(k, strongly_convex=False, sigma=None, F=1.0, G=1.0, D=2.0, d=2, c=0.5, eps=0.1)
    T = np.asarray([100.0])
    b = compare.bound_curves(k1, T)
    assert b["regret"][0] == pytest.approx((9 * 4 / 2 + 2 + 2) * 10.0)  # Thm. 1 at T = 100
    assert b["hard_violation"][0] == pytest.approx(27 + 6 * 2 * 1.1 / 0.1 + 4)
    b2 = compare.bound_curves(dict(k1, fixed_g=False), T)
    assert compare.theorem(dict(k1, fixed_g=False)) == "Thm. 2"
    assert b2["hard_violation"][0] == pytest.approx(((27 * 4 + 1) / 4 + 6 * 2 * 18 + 8) * 100**0.75)
    assert b2["violation_exponent"] == 0.75 and b["regret_exponent"] == 0.5


def test_fit_exponent():
    t = np.logspace(0, 4, 40)
    assert compare.fit_exponent(t, 3 * t**0.5, 10, 1e4) == pytest.approx(0.5)
    assert compare.fit_exponent(t, np.full_like(t, 2.0), 10, 1e4) == pytest.approx(0.0, abs=1e-12)
    assert np.isnan(compare.fit_exponent(t, -t, 10, 1e4))


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--algorithms", "nope"], "unknown algorithm"),
        (["--seeds", "0"], "--seeds"),
    ],
)
def test_cli_errors_are_one_line_exit_2(argv, message, capsys, tmp_path):
    code = cli.main(["compare", "--problem", "hutchinson-toy", "--out", str(tmp_path)] + argv)
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_cli_unknown_problem_exits_2(capsys):
    assert cli.main(["compare", "--problem", "nope"]) == 2
    assert "unknown problem 'nope'" in capsys.readouterr().err
