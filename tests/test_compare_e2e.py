"""``jaxbco compare`` end to end (issue 42, item 4): its success paths run for real through the
command line, at tiny sizes, and what they write is checked.

* ``python -m jaxbco.compare --problem simplex-quadratic --seeds 2 --horizon 40`` in a real
  subprocess: the default algorithm list (every algorithm of ``ALGORITHMS``; this command
  crashed before the fix in ``jaxbco/solvers/_roots.py``);
* ``jaxbco compare`` in-process (``jaxbco.cli.main``) with a short ``--algorithms`` list on the
  same problem (the same compiled programs, so the same numbers);
* ``--horizons`` (the ladder), and ``--all`` on a one-preset ``--presets`` list (with
  ``--algorithms``, ``--seeds``, ``--horizon`` and ``--horizons`` replacing the presets' sizes).

Every run of this module shares one compilation cache in a temporary folder (never the
user's): the short list reuses the subprocess's programs and ``--all``'s ladder the
``--horizons`` run's (same problem, seeds, horizons and algorithm), so the module compiles
each program once.  Measured on the 2-core VM shared with other jobs (load 5-7): 87-128 s of
wall time, about 55 s of CPU; the default list (nine algorithms compiled) is half of it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from jaxbco import cli
from jaxbco import compare as C
from jaxbco.algorithms import ALGORITHMS, display_name

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEEDS, T = 2, 40
PROBLEM = "simplex-quadratic"
SHORT = ["mahdavi-pd", "rectified-bco"]  # not in ALGORITHMS' order: the order given is kept
LADDER = [50, 100]  # gcd 50: both horizons run one compiled chunk of 50 rounds (ladder)
# The cheapest preset (one halfspace on a ball: closed-form prox; Theorem 4's setting) for the
# ladder and --all: the presets with several linear rows (yu-neely, hutchinson-toy) compile for
# 10-20 s per program here.
LADDER_PROBLEM = "strongly-convex-time-varying"
PRESETS = [LADDER_PROBLEM]
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("jax-cache"))


def _main(argv):
    """``jaxbco.cli.main(argv)`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def _clean_exit(code, err):
    assert code == 0, err[-3000:]
    assert "Traceback" not in err and "error:" not in err and "internal error" not in err, err[
        -3000:
    ]


def _table_rows(markdown: str, header: str) -> list:
    """The first column of the Markdown table whose header row starts with ``header``."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1].strip())
    return rows


def _check_comparison(folder, problem: str, algorithms: list, seeds: int, horizon: int) -> dict:
    """The three files of one comparison and the properties every run must have; the JSON."""
    base = os.path.join(folder, C.slug(problem))
    for ext in (".md", ".json", ".png"):
        assert os.path.getsize(base + ext) > 0, base + ext
    with open(base + ".png", "rb") as fh:
        assert fh.read(8) == PNG
    summary = json.load(open(base + ".json"))
    assert (summary["problem"], summary["seeds"], summary["horizon"]) == (problem, seeds, horizon)
    assert summary["dtype"] == "float32"
    rounds = np.asarray(summary["rounds"])
    assert rounds[-1] == horizon and np.all(np.diff(rounds) > 0)
    assert [r["algorithm"] for r in summary["rows"]] == algorithms
    for r in summary["rows"]:
        name = r["algorithm"]
        assert r["failed_seeds"] == 0, name
        for key in ("regret_over_T", "hard_violation", "soft_violation"):
            assert r[key]["n"] == seeds and np.isfinite(r[key]["mean"]), (name, key)
        assert r["hard_violation"]["mean"] >= 0, name
        # hard V_T >= soft V_T: sum [g]_+ >= sum g, seed by seed, so also in the mean
        assert r["hard_violation"]["mean"] >= r["soft_violation"]["mean"] - 1e-6, name
        assert r["wall_s"] > 0 and r["engine"], name
    assert list(summary["mean_curves"]) == algorithms
    for name, curves in summary["mean_curves"].items():
        hard = np.asarray(curves["hard_violation"], np.float64)
        assert hard.shape == rounds.shape and np.all(np.isfinite(hard)), name
        assert np.all(hard >= 0) and np.all(np.diff(hard) >= 0), name  # a sum of [g_t]_+
        assert np.all(np.isfinite(curves["regret"])) and np.all(
            np.isfinite(curves["soft_violation"])
        )
    for key in ("regret", "hard_violation"):
        bound = np.asarray(summary["bounds"][key])
        assert bound.shape == rounds.shape and np.all(np.isfinite(bound)) and np.all(bound > 0)
    markdown = open(base + ".md").read()
    assert markdown.startswith(f"## {problem}\n")
    assert _table_rows(markdown, "| algorithm | R_T / T |") == [display_name(a) for a in algorithms]
    # every row says what it rests on (issue 55 item 5): x*'s and the prox steps' certificates
    lines = markdown.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("| algorithm | R_T / T |"))
    cols = [c.strip() for c in lines[head].split("|")]
    at = cols.index("certified")
    for r, line in zip(summary["rows"], lines[head + 2 : head + 2 + len(algorithms)]):
        cell = [c.strip() for c in line.split("|")][at]
        want_x = "x* all seeds" if r["x_star_checked"] else "x* none"
        assert cell.startswith(want_x) and "; prox " in cell, (r["algorithm"], cell)
        assert ("prox all seeds" in cell) == (r["prox_checked"] and not r["prox_uncertified_seeds"])
    assert _table_rows(markdown, "| algorithm | R_t in run |") == [
        display_name(a) for a in algorithms
    ]
    assert f"![{problem}]({C.slug(problem)}.png)" in markdown
    return summary


# --- one problem, every algorithm, as a real process ------------------------------------------


@pytest.fixture(scope="module")
def default_list(tmp_path_factory, cache):
    out = str(tmp_path_factory.mktemp("default") / "out")
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}  # the users' float32
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxbco.compare",
            "--problem",
            PROBLEM,
            "--seeds",
            str(SEEDS),
            "--horizon",
            str(T),
            "--out",
            out,
            "--compile-cache",
            cache,
            "--quiet",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done, out


def test_default_algorithm_list_in_a_subprocess(default_list):
    """Every algorithm on simplex-quadratic (it crashed before the fix in ``_roots.py``: a
    scalar end of the bracket met per-lane values in the root finder's loop)."""
    done, out = default_list
    _clean_exit(done.returncode, done.stderr)
    summary = _check_comparison(out, PROBLEM, list(ALGORITHMS), SEEDS, T)
    assert summary["constants"]["d"] == 9  # the simplex of d = 10 spans 9 dimensions
    # stdout: the header, the table, the theory and the files written
    assert f"jaxbco compare: {PROBLEM}, {SEEDS} seeds, T = {T}, d = 10, float32" in done.stdout
    assert _table_rows(done.stdout, "| algorithm | R_T / T |") == [
        display_name(a) for a in ALGORITHMS
    ]
    assert "**Thm. 1** applies" in done.stdout
    base = os.path.join(out, C.slug(PROBLEM))
    assert f"wrote {base}.md, {base}.json, {base}.png" in done.stdout
    # stderr: the path of every algorithm before the runs, then one line per algorithm done
    for name in ALGORITHMS:
        assert f"{PROBLEM}: {name} done in" in done.stderr
    assert not [n for n in os.listdir(out) if n.startswith(".staging")]


# --- the same problem, a short list, in this process ------------------------------------------


@pytest.fixture(scope="module")
def short_list(default_list, tmp_path_factory, cache):
    """After ``default_list`` (its compiled programs are in ``cache``)."""
    out = str(tmp_path_factory.mktemp("short") / "out")
    code, stdout, stderr = _main(
        [
            "compare",
            "--problem",
            PROBLEM,
            "--seeds",
            str(SEEDS),
            "--horizon",
            str(T),
            "--algorithms",
            ", ".join(SHORT),
            "--out",
            out,
            "--compile-cache",
            cache,
            "--quiet",
            "--latex",
        ]
    )
    return code, stdout, stderr, out


def test_short_algorithm_list_in_process(short_list, default_list):
    code, stdout, stderr, out = short_list
    _clean_exit(code, stderr)
    summary = _check_comparison(out, PROBLEM, SHORT, SEEDS, T)
    assert _table_rows(stdout, "| algorithm | R_T / T |") == SHORT
    # --latex: the same table as LaTeX with booktabs, beside the Markdown
    tex = open(os.path.join(out, C.slug(PROBLEM) + ".tex")).read()
    assert tex.startswith("\\begin{table}") and tex.rstrip().endswith("\\end{table}")
    body = tex[tex.index("\\midrule") + len("\\midrule") : tex.index("\\bottomrule")].strip()
    assert [line.split(" & ")[0] for line in body.splitlines()] == SHORT
    lines = tex.split("\n")
    header = lines[lines.index("\\toprule") + 1]
    assert all(line.count(" & ") == header.count(" & ") for line in body.splitlines())
    assert "\\toprule" in tex and "\\label{tab:simplex-quadratic}" in tex
    # An algorithm's numbers do not depend on which others run beside it.
    whole = json.load(open(os.path.join(default_list[1], C.slug(PROBLEM) + ".json")))
    by_name = {r["algorithm"]: r for r in whole["rows"]}
    for r in summary["rows"]:
        for key in ("regret_over_T", "hard_violation", "soft_violation"):
            np.testing.assert_allclose(
                r[key]["mean"],
                by_name[r["algorithm"]][key]["mean"],
                rtol=1e-6,
                err_msg=f"{r['algorithm']} {key}",
            )
    # the same run again into the same folder is refused (nothing is lost) ...
    code, _, err = _main(
        [
            "compare",
            "--problem",
            PROBLEM,
            "--seeds",
            str(SEEDS),
            "--horizon",
            str(T),
            "--algorithms",
            SHORT[0],
            "--out",
            out,
            "--no-compile-cache",
        ]
    )
    assert code == 2 and "already exist" in err and len(err.strip().splitlines()) == 1


# --- the horizon ladder ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def ladder_run(tmp_path_factory, cache):
    """``--horizons`` with the real ``compare.ladder``, which a spy only records (the Ladder it
    returns; the command line writes its table, not the means at each T).  Seeds: the ladder
    seeds of ``--all`` (``LADDER_SEEDS``), so that ``--all``'s ladder below reuses these
    programs from the cache."""
    out = str(tmp_path_factory.mktemp("ladder") / "out")
    seen, real = [], C.ladder

    def spy(*args, **kwargs):
        seen.append(real(*args, **kwargs))
        return seen[-1]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(C, "ladder", spy)
        code, stdout, stderr = _main(
            [
                "compare",
                "--problem",
                LADDER_PROBLEM,
                "--seeds",
                str(C.LADDER_SEEDS),
                "--horizons",
                ",".join(map(str, LADDER)),
                "--algorithms",
                "rectified-bco",
                "--out",
                out,
                "--compile-cache",
                cache,
                "--quiet",
                "--latex",
            ]
        )
    return code, stdout, stderr, out, seen


def test_horizons_ladder(ladder_run):
    code, stdout, stderr, out, seen = ladder_run
    _clean_exit(code, stderr)
    [lad] = seen
    assert lad.horizons == LADDER and lad.seeds == C.LADDER_SEEDS
    assert [r["algorithm"] for r in lad.rows] == ["rectified-bco"]
    for r in lad.rows:
        for key in ("regret", "hard_violation", "soft_violation"):
            means = np.asarray(r[key]["means"])
            assert means.shape == (len(LADDER),) and np.all(np.isfinite(means)), key
        assert np.all(np.asarray(r["hard_violation"]["means"]) >= 0)
        assert np.isfinite(r["regret"]["exponent"])
    path = os.path.join(out, f"{C.slug(LADDER_PROBLEM)}-ladder.md")
    page = open(path).read()
    assert page.startswith(f"# {LADDER_PROBLEM}: exponents across horizons")
    assert f"T in {LADDER} ({C.LADDER_SEEDS} seeds each" in page
    assert _table_rows(page, "| algorithm | R_T exponent |") == ["rectified-bco"]
    assert "log T (exponent 0)" in page and "sqrt(T log T) (exponent 0.5)" in page  # Thm. 4
    tex = path[: -len(".md")] + ".tex"
    assert f"wrote {path}, {tex}" in stdout
    assert sorted(os.listdir(out)) == sorted([os.path.basename(path), os.path.basename(tex)])
    assert "\\toprule" in open(tex).read() and "rectified-bco &" in open(tex).read()


# --- --all on a tiny list of presets ----------------------------------------------------------


@pytest.fixture(scope="module")
def all_run(ladder_run, tmp_path_factory, cache):
    """After ``ladder_run``, whose programs the preset's ladder reuses."""
    out = str(tmp_path_factory.mktemp("all") / "docs")
    argv = [
        "compare",
        "--all",
        "--presets",
        ",".join(PRESETS),
        "--seeds",
        str(SEEDS),
        "--horizon",
        str(T),
        "--algorithms",
        "rectified-bco",
        "--horizons",
        ",".join(map(str, LADDER)),
        "--out",
        out,
        "--compile-cache",
        cache,
        "--quiet",
    ]
    code, stdout, stderr = _main(argv)
    return code, stdout, stderr, out


def test_all_on_a_tiny_preset_list(all_run):
    code, stdout, stderr, out = all_run
    _clean_exit(code, stderr)
    page = open(os.path.join(out, "results.md")).read()
    figures = os.path.join(out, "results")
    for name in PRESETS:
        _check_comparison(figures, name, ["rectified-bco"], SEEDS, T)
        assert f"![{name}](results/{C.slug(name)}.png)" in page
    # only the presets given, each comparison followed by its ladder at the horizons given
    heads = [
        line for line in page.splitlines() if line.startswith("## ") or line.startswith("### ")
    ]
    assert heads == [
        h for name in PRESETS for h in (f"## {name}", f"### {name}: exponents across horizons")
    ] + ["## Hyperparameter tuning"]
    assert page.count(f"T in {LADDER} ({C.LADDER_SEEDS} seeds each") == len(PRESETS)
    assert _table_rows(page, "| algorithm | R_T exponent |") == ["rectified-bco"]
    # the summary table: one row per preset, at the sizes run
    summary = _table_rows(page, "| problem | seeds | T |")
    assert summary == PRESETS
    for name in PRESETS:
        assert f"| {name} | {SEEDS} | {T} |" in page
    # the command recorded on the page is the one that regenerates it, overrides included
    assert (
        f"python -m jaxbco.compare --all --overwrite --out {out} --presets "
        f"{','.join(PRESETS)} --seeds {SEEDS} --horizon {T} --algorithms rectified-bco "
        f"--horizons {','.join(map(str, LADDER))}`"
    ) in page
    assert sorted(os.listdir(out)) == ["results", "results.md"]
    assert f"wrote {os.path.join(out, 'results.md')}" in stdout


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--presets", "yu-neely", "--problem", "yu-neely"], "--presets goes with --all"),
        (["--all", "--presets", "yu-neely,nope"], "--presets must name each preset"),
        (["--all", "--presets", "yu-neely,yu-neely"], "--presets must name each preset"),
        (["--all", "--problem", "yu-neely"], "--problem does not go with --all"),
        (["--all", "--dim", "3"], "--dim does not go with --all"),
        (["--all", "--algorithms", "rectified-bco,nope"], "unknown algorithm"),
        (["--all", "--horizons", "40,20"], "--horizons must be at least 2 increasing"),
        (["--all", "--horizons", "40"], "--horizons must be at least 2 increasing"),
    ],
)
def test_all_refuses_what_it_cannot_honour(tmp_path, argv, message):
    """Before anything runs: one line, exit 2, no output folder (before the fix --all ran every
    preset with every algorithm whatever --algorithms, --horizons, --problem or --dim said)."""
    out = tmp_path / "out"
    code, stdout, err = _main(["compare", *argv, "--out", str(out), "--no-compile-cache"])
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and not out.exists()
