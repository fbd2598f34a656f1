"""The command line under hostile input: a catalogue of bad flags, study files, state and
results files, output folders and signals, each with its exact outcome.

Every refused case: exit code 2 (argparse's errors raise SystemExit(2); the commands' return
2), ONE line on stderr naming the parameter / value / range, no traceback, and the files that
were there before left byte for byte as they were.  Unexpected failures: exit code 1 with
"please report"; Ctrl-C 130; SIGTERM 143.  Nearly all cases run in-process
(``jaxbco.cli.main``) and are refused before anything compiles; the compilation cache is off
(``--no-compile-cache``) so the tests never touch the user's cache.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import types

import numpy as np
import pytest

from jaxbco import cli
from jaxbco._src import resume
from jaxbco.cli import main
from jaxbco.cli import plot as plot_command

sys.path.insert(0, os.path.dirname(__file__))
import _pausing  # noqa: E402

NC = "--no-compile-cache"
TINY = ["--seeds", "2", "--horizon", "10", "--dim", "2", "--quiet"]


def _call(argv):
    try:
        return main(list(argv) + [NC])
    except SystemExit as exc:
        return exc.code


def _snapshot(folder):
    """{relative path: bytes} of every file under ``folder`` (None: a folder)."""
    snap = {}
    if not os.path.exists(folder):
        return snap
    for root, dirs, files in os.walk(folder):
        for d in dirs:
            snap[os.path.relpath(os.path.join(root, d), folder)] = None
        for f in files:
            path = os.path.join(root, f)
            with open(path, "rb") as fh:
                snap[os.path.relpath(path, folder)] = fh.read()
    return snap


def refused(capsys, argv, fragment, *, code=2, folder=None):
    """Run ``argv``; assert exit ``code``, one line on stderr containing ``fragment``, no
    traceback, and ``folder`` (if given) unchanged.  Returns the stderr line."""
    before = _snapshot(folder) if folder is not None else None
    got = _call(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.strip().splitlines() if not line.startswith("jaxbco: note:")]
    assert got == code, (got, err)
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert fragment in lines[0], lines[0]
    if folder is not None:
        assert _snapshot(folder) == before
    return lines[0]


# --- flags checked by argparse: nothing runs ----------------------------------------------------

FLAGS = [
    # (argv, fragment)
    (["run", "--dim", "-2"], "argument --dim/-d: must be an integer in [1, 100000]; got -2"),
    (["run", "--c", "-inf"], "argument --c: must be a finite number; got '-inf'"),  # a value
    (["run", "--dim", "0"], "argument --dim/-d: must be an integer in [1, 100000]"),
    (["run", "--dim", "1e9"], "argument --dim/-d: must be an integer in [1, 100000]"),
    (["run", "--dim", "2.5"], "argument --dim/-d: must be an integer; got '2.5'"),
    (["run", "--key", str(10**23)], "argument --key: must be an integer in [0, 2^32 - 1]"),
    (["run", "--key", "-1"], "argument --key: must be an integer in [0, 2^32 - 1]; got -1"),
    (["run", "--key", "0x10"], "argument --key: must be an integer; got '0x10'"),
    (
        ["run", "--horizon", "3e9"],
        "argument --horizon/-T: must be an integer in [1, 2^31 - 2]; got 3e9",
    ),
    (["run", "--horizon", "0"], "argument --horizon/-T: must be an integer in [1, 2^31 - 2]"),
    (["run", "--horizon", "-100"], "argument --horizon/-T: must be an integer in [1,"),
    (["run", "--horizon", "ten"], "argument --horizon/-T: must be an integer; got 'ten'"),
    (["run", "--horizon", "1.5"], "argument --horizon/-T: must be an integer; got '1.5'"),
    (["run", "--horizon", "inf"], "argument --horizon/-T: must be an integer; got 'inf'"),
    (["run", "-T", ""], "argument --horizon/-T: must be an integer; got ''"),
    (["run", "--seeds", "0"], "argument --seeds: must be an integer in [1, 2^32]; got 0"),
    (["run", "--seeds", "-5"], "argument --seeds: must be an integer in [1, 2^32]"),
    (["run", "--seeds", "1e10"], "argument --seeds: must be an integer in [1, 2^32]; got 1e10"),
    (["run", "--seeds", "nan"], "argument --seeds: must be an integer; got 'nan'"),
    (["run", "--c", "nan"], "argument --c: must be a finite number; got 'nan'"),
    (["run", "--c", "inf"], "argument --c: must be a finite number; got 'inf'"),
    (["run", "--eps", "abc"], "argument --eps: must be a number; got 'abc'"),
    (["run", "--delta=-inf"], "argument --delta: must be a finite number"),
    (["run", "--delta", "-1"], "argument --delta: must be > 0; got -1"),
    (["run", "--delta", "0"], "argument --delta: must be > 0; got 0"),
    (["run", "--xi", "2"], "argument --xi: must lie in (0, 1); got 2"),
    (["run", "--xi", "0"], "argument --xi: must lie in (0, 1); got 0"),
    (["run", "--seed", "3"], "unrecognized arguments: --seed 3"),
    (["run", "--see", "3"], "unrecognized arguments: --see 3"),
    (["run", "--sigma", "nan"], "argument --sigma: must be a finite number"),
    (["run", "--alpha-scale", "1,5"], "argument --alpha-scale: must be a number; got '1,5'"),
    (
        ["run", "--checkpoints", "1"],
        "argument --checkpoints: must be an integer in [2, 2^31 - 2]; got 1",
    ),
    (["run", "--checkpoints", "0"], "argument --checkpoints: must be an integer in [2,"),
    (["run", "--chunk", "0"], "argument --chunk: must be an integer in [1, 2^31 - 2]; got 0"),
    (["run", "--chunk", "-3"], "argument --chunk: must be an integer in [1,"),
    (["run", "--solver", "newton"], "argument --solver: invalid choice: 'newton'"),
    (["run", "--dtype", "float16"], "argument --dtype: invalid choice: 'float16'"),
    (["run", "--seeds"], "argument --seeds: expected one argument"),
    (["run", "extra"], "unrecognized arguments: extra"),
    (["run", "--num-processes", "0"], "argument --num-processes: must be an integer in [1,"),
    (["run", "--process-id", "-1"], "argument --process-id: must be an integer in [0,"),
    (["run", "--connect-timeout", "0"], "argument --connect-timeout: must be an integer in [1,"),
    ([], "the following arguments are required: command"),
    (["runn"], "argument command: invalid choice: 'runn'"),
    (["sweep"], "the following arguments are required: --config"),
    (
        ["sweep", "--config", "s.toml", "--chunk", "0.5"],
        "argument --chunk: must be an integer; got '0.5'",
    ),
    (["compare", "--horizon", "0"], "argument --horizon/-T: must be an integer in [1,"),
    (["compare", "--dim", "-1"], "argument --dim/-d: must be an integer in [1, 100000]"),
    (["compare", "--key", "-7"], "argument --key: must be an integer in [0, 2^32 - 1]"),
    (["tune", "--lr", "nan"], "argument --lr: must be a finite number"),
    (["tune", "--kappa", "-1"], "argument --kappa: must be >= 0; got -1"),
    (["tune", "--budget", "-0.5"], "argument --budget: must be >= 0; got -0.5"),
    (["tune", "--mode", "sideways"], "argument --mode: invalid choice: 'sideways'"),
    (["tune", "--estimator", "es"], "argument --estimator: invalid choice: 'es'"),
    (["tune", "--horizon", "3e9"], "argument --horizon/-T: must be an integer in [1, 2^31 - 2]"),
    (["tune", "--key", "1e30"], "argument --key: must be an integer in [0, 2^32 - 1]"),
    (["plot"], "the following arguments are required: RESULTS"),
]


@pytest.mark.parametrize("argv, fragment", FLAGS, ids=[" ".join(a) or "empty" for a, _ in FLAGS])
def test_bad_flag_is_one_line_exit_2(capsys, tmp_path, argv, fragment):
    line = refused(capsys, argv, fragment, folder=tmp_path)
    assert line.startswith("jaxbco") and ": error: " in line
    assert "--help" in line  # where to look next


def test_scientific_notation_is_read_as_an_integer():
    from jaxbco.cli.options import integer

    assert integer(1, 10**6)("1e4") == 10_000 and integer(1, 10**6)("10_000") == 10_000


# --- flags checked by the command: refused before anything compiles ----------------------------

COMMAND = [
    (["run", "--c", "0.2"], "c must lie in [0.5, 1)"),
    (["run", "--c", "1.0"], "c must lie in [0.5, 1)"),
    (["run", "--eps", "0"], "eps must lie in"),
    (["run", "--eps", "-1"], "eps must lie in"),
    (["run", "--delta", "2"], "so delta must lie in (0, r) = (0, 1)"),
    (
        ["run", "--delta", "1e-45"],
        "delta must be at least r * 1.18e-38 = 1.18e-38 in float32: xi = delta / r",
    ),
    (["run", "--delta", "1e-300"], "delta must be at least r * 1.18e-38"),  # named, not xi
    (["run", "--c", "-1e-3"], "c must lie in [0.5, 1); got -0.001"),  # a value, not an option
    (
        ["run", "--alpha-scale", "1e-30"],
        "alpha_scale must be at least 5.42e-12 in float32 with delta",
    ),
    (["run", "--alpha-scale", "0"], "alpha_scale must lie in"),
    (
        ["run", "--problem", "yu-neely", "--dim", "3"],
        "yu-neely is 2-dimensional: dim (--dim) must be 2",
    ),
    (["run", "--problem", "hutchinson-toy", "--dim", "5"], "hutchinson-toy is 2-dimensional"),
    (
        ["run", "--problem", "nyse-portfolio", "--dim", "1", "--seeds", "2", "--horizon", "5"],
        "dim (--dim) of nyse-portfolio must be an integer in [2, ",
    ),
    (
        ["run", "--problem", "portfolio:djia", "--horizon", "100000", "--seeds", "2"],
        "horizon T must be an integer in [1,",
    ),
    (["run", "--process-id", "0"], "a multi-host run needs all of --coordinator HOST:PORT"),
    (
        ["run", "--coordinator", "localhost", "--num-processes", "2", "--process-id", "0"],
        "--coordinator must be HOST:PORT with a port in [1, 65535]; got 'localhost'",
    ),
    (
        ["run", "--coordinator", "h:99999", "--num-processes", "2", "--process-id", "0"],
        "--coordinator must be HOST:PORT",
    ),
    (
        ["run", "--coordinator", "h:1", "--num-processes", "2", "--process-id", "3"],
        "--process-id must lie in [0, 1]",
    ),
    (["run", "--seeds", "1000000000"], "this run needs at least"),
    (["run", "--seeds", "100000", "--dim", "100000"], "lower --dim (the vectors of d = 100000"),
    (
        ["run", "--seeds", "4000000", "--checkpoints", "100000", "--horizon", "100000"],
        "more than this machine's",
    ),
    (["compare"], "give --problem NAME (or --all)"),
    (
        ["compare", "--problem", "hutchinson-toy", "--seeds", "99999999999"],
        "--seeds must be an integer >= 1",
    ),
    (
        ["compare", "--problem", "hutchinson-toy", "--seeds", "-3"],
        "--seeds must be an integer >= 1",
    ),
    (["compare", "--problem", "hutchinson-toy", "--algorithms", ""], "unknown algorithm ''"),
    (
        ["compare", "--problem", "hutchinson-toy", "--algorithms", "rectified-bco,nope"],
        "unknown algorithm 'nope'; choose one of: rectified-bco,",
    ),
    (
        ["compare", "--problem", "hutchinson-toy", "--algorithms", "nomodule_xyz:Alg"],
        "algorithm 'nomodule_xyz:Alg': no module named 'nomodule_xyz'",
    ),
    (
        ["compare", "--problem", "hutchinson-toy", "--algorithms", "rectified-bco,rectified-bco"],
        "algorithm(s) ['rectified-bco'] named twice",
    ),
    (["run", "--problem", "quadratic_ball"], "unknown problem 'quadratic_ball'; choose one of:"),
    (["compare", "--problem", "nope"], "unknown problem 'nope'"),
    (["compare", "--problem", "nomodule_xyz:p"], "problem 'nomodule_xyz:p': no module named"),
    (
        ["run", "--problem", "own_plugin:NOT_A_PROBLEM"],
        "problem 'own_plugin:NOT_A_PROBLEM' must be a jaxbco.Problem or a function returning one",
    ),
    (["run", "--problem", "own_plugin:missing"], "module own_plugin has no attribute 'missing'"),
    (["tune", "--algorithm", "own_plugin:NOT_A_PROBLEM"], "is neither an AbstractAlgorithm"),
    (["tune", "--steps", "0"], "--steps must be an integer >= 1"),
    (["tune", "--seeds", "-2"], "--seeds must be an integer >= 1"),
    (["tune", "--heldout", "0"], "--heldout must be an integer >= 1"),
    (["tune", "--grid-points", "0"], "--grid-points must be an integer >= 1"),
    (["tune", "--lr", "0"], "--lr must lie in (0, inf)"),
    (["tune", "--smoothing", "0"], "--smoothing must lie in (0, inf)"),
    (["tune", "--random-samples", "0"], "--random-samples must be an integer >= 1"),
    (["tune", "--validation", "-3"], "--validation (0: none) must be an integer >= 1"),
    (["tune", "--perturbation", "0"], "--perturbation must lie in (0, inf)"),
    (["tune", "--check-every", "0"], "--check-every must be an integer >= 1"),
    (["tune", "--algorithm", "nope"], "unknown algorithm 'nope'"),
    (["tune", "--problem", "yu-neely", "--dim", "4"], "yu-neely is 2-dimensional"),
]


@pytest.mark.parametrize("argv, fragment", COMMAND, ids=[" ".join(a) for a, _ in COMMAND])
def test_bad_value_is_one_line_exit_2(capsys, tmp_path, argv, fragment):
    out = tmp_path / "out"
    line = refused(capsys, argv + ["--out", str(out)], fragment)
    assert line.startswith("jaxbco: error: ")
    assert (
        not any(out.glob("results*.nc"))
        and not any(out.glob("tune*"))
        and not any(out.glob("*.md"))
    )
    assert not any(out.glob(".staging*")) and not any(out.glob("*.tmp-*"))


# --- output folders: nothing lost ---------------------------------------------------------------


def _finished(out):
    """A folder as a finished `run` leaves it."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.nc").write_bytes(b"complete results")
    (out / "summary.json").write_text("{}")
    (out / "curves.png").write_bytes(b"a figure")


@pytest.mark.parametrize("command", [["run"] + TINY, ["sweep", "--config", "STUDY", "--quiet"]])
def test_out_with_results_is_refused_without_overwrite(capsys, tmp_path, command):
    out = tmp_path / "out"
    _finished(out)
    study = tmp_path / "s.toml"
    study.write_text("problem = 'quadratic-ball'\nhorizon = 10\nseeds = 2\n")
    argv = [str(study) if a == "STUDY" else a for a in command]
    assert refused(
        capsys,
        argv + ["--out", str(out)],
        "already holds the results of an earlier study (curves.png, results.nc, "
        "summary.json); pass --overwrite",
        folder=tmp_path,
    )


def test_out_with_only_a_figure_is_refused(capsys, tmp_path):
    (tmp_path / "results.png").write_bytes(b"sweep figure")
    assert refused(
        capsys,
        ["run", *TINY, "--out", str(tmp_path)],
        "(results.png); pass --overwrite",
        folder=tmp_path,
    )


def test_resume_of_a_finished_study_is_refused(capsys, tmp_path):
    _finished(tmp_path)
    assert refused(
        capsys,
        ["run", *TINY, "--out", str(tmp_path), "--resume"],
        "nothing to resume: ",
        folder=tmp_path,
    )


def test_unfinished_state_is_kept_even_with_overwrite(capsys, tmp_path):
    meta = json.dumps({"format": resume.FORMAT})  # what jaxbco's state files say they are
    np.savez(tmp_path / "state.npz", meta=np.asarray(meta))
    assert refused(
        capsys,
        ["run", *TINY, "--out", str(tmp_path), "--overwrite"],
        "holds the state of an unfinished run; continue it with --resume",
        folder=tmp_path,
    )


def test_a_foreign_file_where_the_state_goes_is_named_as_such(capsys, tmp_path):
    """Issue 57: any file named state.npz was called "the state of an unfinished run"."""
    (tmp_path / "state.npz").write_bytes(b"someone else's")
    assert refused(
        capsys,
        ["run", *TINY, "--out", str(tmp_path), "--overwrite"],
        "state.npz exists and is not a jaxbco state file",
        folder=tmp_path,
    )


@pytest.mark.parametrize("where", ["file", "under-file"])
def test_out_that_is_not_a_folder(capsys, tmp_path, where):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    out = blocker if where == "file" else blocker / "sub"
    for command in (
        ["run", *TINY],
        ["tune", "--horizon", "10"],
        ["compare", "--problem", "hutchinson-toy"],
    ):
        assert refused(capsys, command + ["--out", str(out)], "output folder", folder=tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_read_only_out(capsys, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        assert refused(capsys, ["run", *TINY, "--out", str(ro / "x")], "cannot be written")
        assert refused(capsys, ["tune", "--out", str(ro / "x")], "cannot be written")
    finally:
        ro.chmod(0o700)


def test_compare_and_tune_refuse_earlier_files(capsys, tmp_path):
    (tmp_path / "hutchinson-toy.json").write_text("{}")
    assert refused(
        capsys,
        ["compare", "--problem", "hutchinson-toy", "--out", str(tmp_path)],
        "hutchinson-toy.json already exist",
        folder=tmp_path,
    )
    (tmp_path / "tune.png").write_bytes(b"x")
    assert refused(
        capsys, ["tune", "--out", str(tmp_path)], "tune.png already exist", folder=tmp_path
    )
    (tmp_path / "results.md").write_text("page")
    assert refused(
        capsys,
        ["compare", "--all", "--out", str(tmp_path)],
        "results.md already exist",
        folder=tmp_path,
    )


def test_compare_all_interrupted_leaves_the_page_and_figures(monkeypatch, tmp_path):
    """``compare --all --overwrite`` stages every figure and the page: an interrupt after the
    first preset leaves the earlier page and figures as they were, and no staging folder."""
    from jaxbco import compare as C

    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "a.png").write_bytes(b"old figure")
    (tmp_path / "results.md").write_text("old page")
    before = _snapshot(tmp_path)
    calls = []

    def fake_compare(name, seeds, horizon, **kw):
        calls.append(name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return types.SimpleNamespace(wealth_baselines=None)

    def fake_write(res, out, figure=True):
        with open(os.path.join(out, "a.png"), "wb") as fh:
            fh.write(b"new figure")

    monkeypatch.setattr(
        C, "PRESETS", {"a": dict(seeds=2, horizon=10), "b": dict(seeds=2, horizon=10)}
    )
    monkeypatch.setattr(C, "compare", fake_compare)
    monkeypatch.setattr(C, "write", fake_write)
    monkeypatch.setattr(C, "section_markdown", lambda res, fig: "section")
    assert _call(["compare", "--all", "--overwrite", "--out", str(tmp_path), "--quiet"]) == 130
    assert calls == ["a", "b"] and _snapshot(tmp_path) == before


# --- state files: refused with one line and left in place ---------------------------------------


def _valid_npz(path, meta, digest=True):
    x_star, leaf0 = np.zeros((16, 2), np.float32), np.zeros(3)
    if digest:  # as jaxbco writes it: the digest of its contents inside
        meta = dict(meta, digest=resume._digest(meta, x_star, [leaf0]))
    with open(path, "wb") as fh:
        np.savez(fh, x_star=x_star, meta=np.asarray(json.dumps(meta)), leaf0=leaf0)


def _edited_round(path):
    """A state jaxbco wrote, whose round counter was then edited by hand."""
    _valid_npz(path, _meta())
    with np.load(path) as z:
        meta, x_star, leaf0 = json.loads(str(z["meta"])), z["x_star"], z["leaf0"]
    meta["next_round"] = 2
    np.savez(path, x_star=x_star, meta=np.asarray(json.dumps(meta)), leaf0=leaf0)


def _meta(**kw):
    return {"format": resume.FORMAT, "config": "0" * 64, "next_round": 5, **resume.versions(), **kw}


STATES = {
    "empty": (lambda p: p.write_bytes(b""), "is empty"),
    "random bytes": (lambda p: p.write_bytes(b"\x93garbage" * 40), "cannot be read"),
    "truncated": (
        lambda p: (_valid_npz(p, _meta()), p.write_bytes(p.read_bytes()[:200])),
        "cannot be read (BadZipFile: truncated",
    ),
    "no meta": (lambda p: np.savez(p, x_star=np.zeros(2)), "cannot be read (KeyError"),
    "meta not JSON": (
        lambda p: np.savez(p, x_star=np.zeros(2), meta=np.asarray("{oops")),
        "cannot be read",
    ),
    "meta a list": (
        lambda p: np.savez(p, x_star=np.zeros(2), meta=np.asarray("[1, 2]")),
        "cannot be read",
    ),
    "meta without next_round": (
        lambda p: np.savez(p, x_star=np.zeros(2), meta=np.asarray('{"format": "x"}')),
        "cannot be read (KeyError",
    ),
    "pickled objects": (
        lambda p: np.savez(p, x_star=np.array([object()], dtype=object), meta=np.asarray("{}")),
        "cannot be read",
    ),
    "a .npy, not .npz": (lambda p: p.write_bytes(_npy_bytes()), "cannot be read"),
    "another format": (
        lambda p: _valid_npz(p, _meta(format="other")),
        "is not a jaxbco state file",
    ),
    "another jaxbco": (
        lambda p: _valid_npz(p, _meta(jaxbco="0.0.0")),
        "was written by jaxbco 0.0.0",
    ),
    "another jax": (lambda p: _valid_npz(p, _meta(jax="0.1.0")), "was written by jax 0.1.0"),
    "another configuration": (lambda p: _valid_npz(p, _meta()), "different configuration"),
    "round counter edited": (_edited_round, "was changed after jaxbco wrote it"),
    "no digest": (
        lambda p: _valid_npz(p, _meta(), digest=False),
        "was changed after jaxbco wrote it",
    ),
}


def _npy_bytes():
    import io

    buf = io.BytesIO()
    np.save(buf, np.zeros(3))
    return buf.getvalue()


@pytest.mark.parametrize("case", list(STATES))
def test_bad_state_file_is_refused_and_kept(tmp_path, case):
    make, fragment = STATES[case]
    path = tmp_path / "state.npz"
    make(path)
    before = path.read_bytes()
    with pytest.raises(ValueError) as err:
        resume.load(str(path), {"a": np.zeros(3)}, "f" * 64)
    assert fragment in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value) and "delete" in str(err.value)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["state.npz"]


@pytest.mark.parametrize("case", ["empty", "truncated", "random bytes", "another configuration"])
def test_bad_state_file_under_run_resume(capsys, tmp_path, case):
    make, fragment = STATES[case]
    make(tmp_path / "state.npz")
    assert refused(
        capsys, ["run", *TINY, "--out", str(tmp_path), "--resume"], fragment, folder=tmp_path
    )


def test_unreachable_coordinator(capsys, tmp_path):
    """Checked before jax.distributed.initialize, whose connection failures abort from C++."""
    import socket

    base = [
        "run",
        *TINY,
        "--out",
        str(tmp_path / "out"),
        "--num-processes",
        "2",
        "--connect-timeout",
        "1",
    ]
    assert refused(
        capsys,
        base + ["--coordinator", "127.0.0.1:1", "--process-id", "1"],
        "--coordinator 127.0.0.1:1: process 0 cannot be reached within 1 s",
    )
    assert refused(
        capsys,
        base + ["--coordinator", "no-such-host.invalid:4321", "--process-id", "1"],
        "host 'no-such-host.invalid' cannot be resolved",
    )
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert refused(
            capsys,
            base + ["--coordinator", f"127.0.0.1:{port}", "--process-id", "0"],
            f"process 0 cannot listen on port {port}",
        )


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _peer(port, line, replies, stop):
    """A stand-in for another process of the run: connect as soon as process 0 listens (the
    port refuses until then; no fixed number of tries), send ``line``, keep what comes back."""
    import socket

    while not stop.is_set():
        try:
            conn = socket.create_connection(("127.0.0.1", port), timeout=60)
        except ConnectionRefusedError:
            time.sleep(0.01)
            continue
        with conn:
            conn.sendall(line)
            replies.append(conn.recv(256))
        return


def test_missing_or_mismatched_hosts(capsys, tmp_path):
    """Process 0 waits for every process before jax.distributed.initialize (which would abort
    from C++ when one never arrives): missing, mismatched or duplicated processes are one line."""
    import threading

    base = ["run", *TINY, "--out", str(tmp_path / "out"), "--process-id", "0"]
    port = _free_port()
    assert refused(
        capsys,
        base
        + ["--coordinator", f"127.0.0.1:{port}", "--num-processes", "3", "--connect-timeout", "2"],
        "process(es) 1, 2 of --num-processes 3 did not join within 2 s",
    )
    for line, fragment in [
        (b"jaxbco 1 4\n", "process 1 was started with --num-processes 4, process 0 with 3"),
        (b"jaxbco 5 3\n", "--process-id 5 is not in [1, 2]"),
    ]:
        replies, port, stop = [], _free_port(), threading.Event()
        peer = threading.Thread(target=_peer, args=(port, line, replies, stop))
        peer.start()
        # process 0 refuses as soon as the peer's line arrives; its 300 s wait is never reached,
        # so how fast the peer thread gets to run does not decide the outcome
        try:
            assert refused(
                capsys,
                base
                + [
                    "--coordinator",
                    f"127.0.0.1:{port}",
                    "--num-processes",
                    "3",
                    "--connect-timeout",
                    "300",
                ],
                fragment,
            )
        finally:
            stop.set()
            peer.join()
        assert replies == [b"no " + fragment.encode() + b"\n"]
    assert not (tmp_path / "out").exists()


def test_a_process_meets_something_else_on_the_port(capsys, tmp_path):
    import socket
    import threading

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]

        def answer(reply):
            conn, _ = server.accept()
            with conn:
                conn.recv(256)
                conn.sendall(reply)

        base = [
            "run",
            *TINY,
            "--out",
            str(tmp_path / "out"),
            "--connect-timeout",
            "2",
            "--num-processes",
            "2",
            "--process-id",
            "1",
            "--coordinator",
            f"127.0.0.1:{port}",
        ]
        for reply, fragment in [
            (b"HTTP/1.1 400\r\n\r\n", "something other than jaxbco's process 0"),
            (b"", "process 0 stopped waiting for the other processes"),
            (
                b"no two processes were started with --process-id 1\n",
                "two processes were started with --process-id 1",
            ),
        ]:
            t = threading.Thread(target=answer, args=(reply,))
            t.start()
            assert refused(capsys, base, fragment)
            t.join()


def test_state_that_is_a_folder(capsys, tmp_path):
    (tmp_path / "state.npz").mkdir()
    assert refused(
        capsys,
        ["run", *TINY, "--out", str(tmp_path), "--resume"],
        "state.npz' is a folder, not a state file; remove or rename it",
        folder=tmp_path,
    )


# --- study files ---------------------------------------------------------------------------------

BASE = "problem = 'quadratic-ball'\nhorizon = 10\nseeds = 2\n"
STUDIES = [
    (
        "problem = 'quadratic-ball'\nhorizon = 3000000000\nseeds = 2\n",
        "horizon must be an integer in [1, 2^31 - 2]; got 3000000000",
    ),
    (
        "problem = 'quadratic-ball'\nhorizon = 10\nseeds = -1\n",
        "seeds must be an integer in [1, 2^32]",
    ),
    (
        "problem = 'quadratic-ball'\nhorizon = 10\nseeds = 10000000000\n",
        "seeds must be an integer in [1, 2^32]",
    ),
    (BASE + "dim = -2\n", "dim must be an integer in [1, 100000]; got -2"),
    (BASE + "key = -1\n", "key must be an integer in [0, 2^32 - 1]"),
    (BASE + "key = 100000000000000000000000\n", "key must be an integer in [0, 2^32 - 1]"),
    (BASE + "checkpoints = 1\n", "checkpoints must be an integer in [2,"),
    (BASE + "dtype = 'float16'\n", "dtype must be 'float32' or 'float64'; got 'float16'"),
    (BASE + "[hyper]\nc = nan\n", "[hyper] c must be a finite number; got nan"),
    (BASE + "[hyper]\nc = true\n", "[hyper] c must be a finite number; got True"),
    (BASE + "[grid]\nc = [0.5, inf]\n", "[grid] c must be a non-empty list of finite numbers"),
    (BASE + "[grid]\nc = '0.5'\n", "[grid] c must be a non-empty list"),
    (BASE + "[hyper]\nc = 0.6\n[grid]\nc = [0.5]\n", "appear in both [hyper] and [grid]"),
    (BASE + "[hyperr]\nc = 0.6\n", "unknown key(s) ['hyperr']"),
    ("problem = 3\nhorizon = 10\nseeds = 2\n", "problem must be a str; got 3"),
    ("problem = 'quadratic-ball'\nhorizon = 10.5\nseeds = 2\n", "horizon must be a int; got 10.5"),
    ("", "missing required key(s) ['problem', 'horizon', 'seeds']"),
    ("horizon = 10\nhorizon = 20\n", "is not valid TOML"),
    ("problem = 'yu-neely'\nhorizon = 10\nseeds = 2\ndim = 3\n", "yu-neely is 2-dimensional"),
    (
        "problem = 'quadratic-ball'\nhorizon = 100\nseeds = 1000000000\n[grid]\nc = [0.5, 0.6]\n",
        "needs at least",
    ),
    (
        BASE + "[grid]\nc = [0.5, 0.6]\neps = [0.1, 0.2]\nsigma = [1.0]\nnope = [1]\n",
        "has no hyperparameter 'nope'",
    ),
    (BASE + "[grid]\nc = [0.3]\n", "c must lie in [0.5, 1)"),
]


@pytest.mark.parametrize("text, fragment", STUDIES, ids=[f"study{i}" for i in range(len(STUDIES))])
def test_bad_study_file(capsys, tmp_path, text, fragment):
    study = tmp_path / "study.toml"
    study.write_text(text)
    out = tmp_path / "out"
    line = refused(
        capsys, ["sweep", "--config", str(study), "--out", str(out), "--quiet"], fragment
    )
    assert str(study) in line  # every refusal names the study file (issue 57)
    assert not out.exists() or not any(out.glob("results*"))


def test_study_file_not_text_a_folder_or_absent(capsys, tmp_path):
    binary = tmp_path / "b.toml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert refused(capsys, ["sweep", "--config", str(binary)], "is not a text (UTF-8) file")
    assert refused(capsys, ["sweep", "--config", str(tmp_path)], "cannot be read")
    assert refused(capsys, ["sweep", "--config", str(tmp_path / "absent.toml")], "does not exist")


# --- results files under plot ---------------------------------------------------------------------


def test_plot_bad_inputs(capsys, tmp_path):
    text = tmp_path / "r.nc"
    text.write_text("not netcdf")
    empty = tmp_path / "e.nc"
    empty.write_bytes(b"")
    assert refused(capsys, ["plot", str(tmp_path / "absent.nc")], "does not exist", folder=tmp_path)
    assert refused(capsys, ["plot", str(text)], "is not a jaxbco results file", folder=tmp_path)
    assert refused(capsys, ["plot", str(empty)], "is not a jaxbco results file", folder=tmp_path)
    assert refused(capsys, ["plot", str(tmp_path)], "has no results.nc", folder=tmp_path)
    assert refused(
        capsys,
        ["plot", str(text), "--metrics", "bogus"],
        "unknown --metrics ['bogus']",
        folder=tmp_path,
    )
    assert refused(
        capsys, ["plot", str(text), "--metrics", ","], "unknown --metrics", folder=tmp_path
    )


# --- the error handler itself ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "exc, code, fragment",
    [
        (
            RuntimeError("kaboom\nsecond line"),
            1,
            "internal error: RuntimeError: kaboom second line (please report",
        ),
        (ZeroDivisionError("division by zero"), 1, "internal error: ZeroDivisionError"),
        (MemoryError(), 1, "error: out of memory (MemoryError)"),
        (
            RuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 9 TB"),
            1,
            "error: out of memory",
        ),
        (
            PermissionError(13, "Permission denied", "/x/y"),
            2,
            "cannot use '/x/y': Permission denied",
        ),
        (OSError(28, "No space left on device"), 2, "no space left on the device of"),
        (NotImplementedError("no comparator"), 2, "error: no comparator"),
        (KeyboardInterrupt(), 130, "jaxbco: interrupted"),
        (cli._Terminated(signal.SIGTERM), 143, "jaxbco: terminated (signal 15)"),
    ],
)
def test_error_handler_one_line(monkeypatch, capsys, tmp_path, exc, code, fragment):
    monkeypatch.setattr(plot_command, "cmd_plot", _raiser(exc))
    line = refused(capsys, ["plot", str(tmp_path)], fragment, code=code)
    assert line.startswith("jaxbco")


def _raiser(exc):
    def boom(args):
        raise exc

    return boom


def test_traceback_flag_shows_the_exception(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(plot_command, "cmd_plot", _raiser(RuntimeError("kaboom")))
    with pytest.raises(RuntimeError, match="kaboom"):
        main(["plot", str(tmp_path), "--traceback", NC])


def test_main_restores_jax_cache_settings(capsys, tmp_path):
    import jax

    before = jax.config.jax_compilation_cache_dir
    assert (
        main(["plot", str(tmp_path / "absent.nc"), "--compile-cache", str(tmp_path / "cache")]) == 2
    )
    assert jax.config.jax_compilation_cache_dir == before
    assert not (tmp_path / "cache").exists()  # nothing compiled: JAX made no cache folder
    blocker = tmp_path / "f"
    blocker.write_text("x")
    code = main(["plot", str(tmp_path / "absent.nc"), "--compile-cache", str(blocker / "c")])
    err = capsys.readouterr().err
    assert code == 2 and "compilation cache" in err and "running without it" in err


# --- what runs: leftovers cleaned, --overwrite replaces everything, SIGTERM -------------------------


def test_overwrite_replaces_an_earlier_study_and_cleans_leftovers(capsys, tmp_path):
    out = tmp_path / "out"
    _finished(out)
    (out / "results.pdf").write_bytes(b"old pdf")
    (out / "state.npz.tmp-999999999").write_bytes(b"torn")
    (out / ".staging-999999999").mkdir()
    (out / "keep.txt").write_text("the user's own file")
    assert _call(["run", *TINY, "--out", str(out), "--overwrite"]) == 0
    err = capsys.readouterr().err
    assert "removed temporary files of an earlier, killed run" in err
    names = sorted(os.listdir(out))
    assert names == ["curves.pdf", "curves.png", "keep.txt", "results.nc", "summary.json"], names
    assert (out / "results.nc").read_bytes() != b"complete results"
    study = tmp_path / "s.toml"
    study.write_text("problem = 'quadratic-ball'\ndim = 2\nhorizon = 10\nseeds = 2\n")
    assert _call(["sweep", "--config", str(study), "--out", str(out), "--quiet"]) == 2
    assert "already holds the results" in capsys.readouterr().err
    assert (
        _call(["sweep", "--config", str(study), "--out", str(out), "--quiet", "--overwrite"]) == 0
    )
    names = sorted(os.listdir(out))
    # the run's curves.png/.pdf are gone: no figure of an earlier study beside the new results
    assert names == ["keep.txt", "results.nc", "results.pdf", "results.png", "summary.json"], names


def test_sigterm_keeps_the_state_and_no_temporary_file(tmp_path):
    """SIGTERM mid-run: exit 143, one line, the state file is the last complete one, nothing
    temporary is left, and --resume finishes it."""
    out = tmp_path / "out"
    args = [
        "run",
        "--seeds",
        "16",
        "--horizon",
        "30000",
        "--dim",
        "3",
        "--checkpoints",
        "10",
        "--chunk",
        "200",
        "--quiet",
        "--out",
        str(out),
        "--compile-cache",
        str(tmp_path / "cache"),
    ]  # the resumed process reuses the programs
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _pausing.PAUSING_JAXBCO, "1", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    _pausing.paused(proc)  # after the first chunk (rounds 1-200) and its state
    state = out / "state.npz"
    with np.load(state) as z:
        paused_at = json.loads(str(z["meta"]))["next_round"]
    proc.send_signal(signal.SIGTERM)  # pending until the run goes on
    proc.send_signal(signal.SIGCONT)
    _, err = proc.communicate(timeout=60)
    assert paused_at == 201
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == (
        "jaxbco: terminated (signal 15); the finished chunks are kept, continue with --resume"
    )
    assert "Traceback" not in err
    assert sorted(os.listdir(out)) == ["state.npz"]
    with np.load(state) as z:
        assert json.loads(str(z["meta"]))["next_round"] == 201  # the last complete state
    cmd = [sys.executable, "-m", "jaxbco", *args]
    done = subprocess.run(cmd + ["--resume"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(os.listdir(out)) == ["curves.pdf", "curves.png", "results.nc", "summary.json"]


def test_a_second_run_into_a_live_out_is_refused(tmp_path):
    """Two real processes into one --out: the second fails at once with one line naming the
    first (exit 2) and touches nothing; the first (paused mid-run meanwhile) keeps its state
    when stopped, and leaves no lock file behind."""
    out = tmp_path / "out"
    args = [
        "run",
        "--seeds",
        "16",
        "--dim",
        "3",
        "--checkpoints",
        "10",
        "--quiet",
        "--out",
        str(out),
        "--compile-cache",
        str(tmp_path / "cache"),
    ]
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    first = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _pausing.PAUSING_JAXBCO,
            "1",
            *args,
            "--horizon",
            "30000",
            "--chunk",
            "200",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    _pausing.paused(first)  # mid-run, holding the folder, until signalled
    try:
        second = subprocess.run(
            [sys.executable, "-m", "jaxbco", *args, "--horizon", "100"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        first.send_signal(signal.SIGTERM)
        first.send_signal(signal.SIGCONT)
    _, err = first.communicate(timeout=60)
    assert second.returncode == 2, second.stderr[-2000:]
    assert second.stderr.strip().splitlines()[-1] == (
        f"jaxbco: error: output folder {str(out)!r} is in use by another jaxbco run (process "
        f"{first.pid}); wait for it to finish, or choose another --out"
    )
    assert first.returncode == 143, err[-2000:]
    assert sorted(os.listdir(out)) == ["state.npz"]


def test_a_full_disk_is_one_line_naming_the_folder(tmp_path, capsys):
    """ENOSPC while writing (seen on a 300 kB tmpfs: the state kept, the results not
    written): one line naming the folder and its free space, exit 2, and for run and sweep
    that the finished chunks are kept for --resume."""
    import errno

    from jaxbco.cli import report_errors

    def full(args):
        raise OSError(errno.ENOSPC, "No space left on device")

    args = argparse.Namespace(out=str(tmp_path), traceback=False)
    assert report_errors(full, args, resumable=True) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"jaxbco: error: no space left on the device of {str(tmp_path)!r} (")
    assert err.endswith(
        "MiB free); the finished chunks are kept: free some space, then continue with --resume"
    )


def test_a_file_error_names_the_users_folder_not_the_staging_one(tmp_path, capsys):
    """An OSError on an output while it is staged (OUT/.staging-PID/NAME) names OUT/NAME, the
    path the user asked for, in the one-line error and in the full-disk one."""
    import errno

    from jaxbco.cli import report_errors

    staged = os.path.join(str(tmp_path), f".staging-{os.getpid()}", "results.nc")
    args = argparse.Namespace(out=str(tmp_path), traceback=False)
    for code in (errno.EACCES, errno.ENOSPC):

        def fails(args, code=code):
            raise OSError(code, os.strerror(code), staged)

        assert report_errors(fails, args) == 2
        err = capsys.readouterr().err.strip()
        assert ".staging" not in err, err
        assert repr(os.path.join(str(tmp_path), "results.nc")) in err, err


def test_a_flag_value_is_shown_as_given(capsys, tmp_path):
    """--c 1.2 is stored in float32; the message shows 1.2, not 1.2000000476837158."""
    line = refused(
        capsys,
        ["run", *TINY, "--c", "1.2", "--out", str(tmp_path)],
        "c must lie in [0.5, 1); got 1.2",
    )
    assert line.endswith("got 1.2"), line
