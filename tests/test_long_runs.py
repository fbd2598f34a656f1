"""Studies that outgrow one call: chunks = one shot, resume after an interruption = never
interrupted, 4 devices = 1 device, two hosts = one host.  All bitwise."""

import os
import socket
import subprocess
import sys

import numpy as np
import pytest

from jaxbco import hyper, problems, simulate
from jaxbco._src import resume

T = 45
CPS = np.array([1, 2, 10, 33, 45])
GRID = hyper.grid(c=[0.5, 0.75], eps=[0.1], xi=[0.05], delta=[0.05])
NAMES = simulate.METRICS + ("failed", "failed_round", "x_star", "x_final", "decisions")
WORKER = os.path.join(os.path.dirname(__file__), "_devices_worker.py")


@pytest.fixture(scope="module")
def problem():
    return problems.make("quadratic-ball", 4)


def _sweep(problem, **kw):
    return simulate.sweep(problem, T, GRID, seeds=19, checkpoints=CPS, record_decisions=True, **kw)


@pytest.fixture(scope="module")
def one_shot(problem):
    return _sweep(problem)


def _assert_same(a, b):
    for m in NAMES:
        np.testing.assert_array_equal(getattr(a, m), getattr(b, m), err_msg=m)


@pytest.mark.parametrize("chunk", [1, 9, 15, 44])
def test_chunked_equals_one_shot(problem, one_shot, chunk):
    _assert_same(_sweep(problem, chunk=chunk), one_shot)


def test_resume_after_interrupt_equals_uninterrupted(problem, one_shot, tmp_path, monkeypatch):
    path = str(tmp_path / "state.npz")
    saved = []
    real_save = resume.save

    def save_then_interrupt(*args):
        real_save(*args)
        saved.append(args[3])
        if len(saved) == 3:  # the state after x*, then after each chunk
            raise KeyboardInterrupt  # as if Ctrl-C arrived right after the second chunk

    monkeypatch.setattr(resume, "save", save_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        _sweep(problem, chunk=9, resume=path)
    monkeypatch.setattr(resume, "save", real_save)
    with np.load(path) as z:
        assert '"next_round": 19' in str(z["meta"])  # two chunks of 9 rounds were kept
    # Resume with another chunk length: the remaining rounds continue from round 19.
    _assert_same(_sweep(problem, chunk=15, resume=path), one_shot)


def test_resume_file_from_another_configuration_is_refused_and_kept(problem, tmp_path):
    path = str(tmp_path / "state.npz")
    simulate.sweep(problem, T, GRID, seeds=19, checkpoints=CPS, chunk=15, resume=path)
    before = open(path, "rb").read()
    other = hyper.grid(c=[0.5, 0.8], eps=[0.1], xi=[0.05], delta=[0.05])
    with pytest.raises(ValueError, match="different configuration"):
        simulate.sweep(problem, T, other, seeds=19, checkpoints=CPS, chunk=15, resume=path)
    with pytest.raises(ValueError, match="different configuration"):
        simulate.sweep(problem, T, GRID, seeds=19, checkpoints=CPS, chunk=15, resume=path, key=1)
    assert open(path, "rb").read() == before
    (tmp_path / "junk.npz").write_bytes(b"not a state")
    with pytest.raises(ValueError, match="cannot be read"):
        simulate.sweep(
            problem, T, GRID, seeds=19, checkpoints=CPS, resume=str(tmp_path / "junk.npz")
        )


def test_state_file_is_written_atomically(problem, tmp_path, monkeypatch):
    # A process killed while writing leaves the previous state intact: the new state goes to a
    # temporary file first and only a finished file is renamed over the old one.
    path = str(tmp_path / "state.npz")
    calls = []
    real_replace = os.replace

    def replace_spy(src, dst):
        calls.append((src, dst))
        assert os.path.getsize(src) > 0 and src != dst
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_spy)
    simulate.sweep(problem, T, GRID, seeds=19, checkpoints=CPS, chunk=15, resume=path)
    assert len(calls) == 4 and all(dst == path for _, dst in calls)  # after x*, 3 chunks
    assert not [f for f in os.listdir(tmp_path) if ".tmp-" in f]


# A hang guard, not a speed check: alone the worker takes ~11 s, under a loaded suite minutes.
def _run_worker(*args, env_extra=None, timeout=900):
    env = dict(os.environ, **(env_extra or {}))
    env.pop("JAX_ENABLE_X64", None)
    try:
        proc = subprocess.run(
            [sys.executable, WORKER, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as err:  # say what it was doing (a hang, or slowness)
        tail = (
            err.stderr.decode(errors="replace")
            if isinstance(err.stderr, bytes)
            else (err.stderr or "")
        )
        pytest.fail(f"the worker ran past {timeout} s; the end of its stderr: {tail[-3000:]!r}")
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_four_devices_equal_one_device(tmp_path):
    out = str(tmp_path / "shard.npz")
    _run_worker("shard", out, env_extra={"XLA_FLAGS": "--xla_force_host_platform_device_count=4"})
    with np.load(out) as z:
        assert int(z["n_devices"]) == 4
        for m in simulate.METRICS + ("failed", "x_star", "x_final"):
            np.testing.assert_array_equal(z[f"many_{m}"], z[f"one_{m}"], err_msg=m)
            np.testing.assert_array_equal(z[f"chunked_{m}"], z[f"one_{m}"], err_msg=m)
        assert z["one_regret"].shape == (2, 37, 3)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_hosts_equal_one_host(tmp_path):
    """Two local processes under jax.distributed, each running its share of the seeds."""
    port = str(_free_port())
    outs = [str(tmp_path / f"host{i}.npz") for i in range(2)]
    env = dict(os.environ)
    env.pop("JAX_ENABLE_X64", None)
    procs = [
        subprocess.Popen(
            [sys.executable, WORKER, "host", str(i), "2", port, outs[i]],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for p in procs:
        _, err = p.communicate(timeout=900)
        assert p.returncode == 0, err[-3000:]
    sys.path.insert(0, os.path.dirname(__file__))
    import _devices_worker as w

    parts = [np.load(o) for o in outs]
    assert [int(z["process_count"]) for z in parts] == [2, 2]
    ids = np.concatenate([z["seed_ids"] for z in parts])
    np.testing.assert_array_equal(ids, w.WORK["seeds"])  # every seed exactly once, in order
    alone = simulate.sweep(
        w._problem(),
        w.WORK["horizon"],
        hyper.grid(**w.GRID),
        seeds=w.WORK["seeds"],
        checkpoints=w.WORK["checkpoints"],
    )
    for m in simulate.METRICS + ("failed", "x_final"):
        joined = np.concatenate([z[f"host_{m}"] for z in parts], axis=1)
        np.testing.assert_array_equal(joined, getattr(alone, m), err_msg=m)
