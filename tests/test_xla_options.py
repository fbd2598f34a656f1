"""jaxbco._xla: which programs get YNNPACK fusions switched off, the override, and that the
choice changes results by float32 round-off only."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import _xla, problems, simulate
from jaxbco.algorithms import RectifiedBCO
from jaxbco.hyper import theorem_defaults
from jaxbco.solvers import Subgradient

OFF = _xla.YNN_OFF if _xla._supported(_xla.YNN_OFF) else ()


def test_choice_follows_inner_loops(monkeypatch):
    monkeypatch.delenv(_xla.ENV, raising=False)
    if jax.default_backend() != "cpu":
        pytest.skip("CPU-only options")
    ball, _ = problems.make("quadratic-ball", 4)
    box, _ = problems.make("switching-box", 4)
    logistic, _ = problems.make("logistic-ball", 4)
    varying, _ = problems.make("time-varying-ball", 4)
    assert _xla.options(ball, RectifiedBCO()) == ()                 # closed-form prox and x*
    # seeds-minor rounds (jaxbco._minor): YNNPACK's reductions win even with the K steps
    assert _xla.options(ball, RectifiedBCO(solver=Subgradient())) == ()
    assert _xla.options(ball, RectifiedBCO(solver=Subgradient()), minor=False) == OFF
    assert _xla.options(varying, RectifiedBCO(solver=Subgradient())) == OFF  # vmapped, K steps
    assert _xla.options(box, RectifiedBCO()) == OFF                 # bracketed Newton loop
    assert _xla.options(logistic, RectifiedBCO(), part="start") == OFF  # FISTA comparator
    fn = simulate.make_run(varying, 10, algorithm=RectifiedBCO(solver=Subgradient()))
    assert fn.compiler_options == dict(OFF)


def test_override_and_bad_value(monkeypatch):
    ball, _ = problems.make("quadratic-ball", 4)
    monkeypatch.setenv(_xla.ENV, "on")
    assert _xla.options(ball, RectifiedBCO(solver=Subgradient())) == ()
    monkeypatch.setenv(_xla.ENV, "off")
    if jax.default_backend() == "cpu":
        assert _xla.options(ball, RectifiedBCO()) == OFF
    monkeypatch.setenv(_xla.ENV, "fast")
    with pytest.raises(ValueError, match="JAXBCO_YNN must be one of auto, on, off"):
        _xla.options(ball, RectifiedBCO())


def test_on_and_off_agree_to_round_off(monkeypatch):
    """The same 16 seeds, T = 30, subgradient solver, with the fusions on and off."""
    problem, _ = problems.make("quadratic-ball", 5)
    alg = RectifiedBCO(solver=Subgradient(steps=5))
    out = {}
    for choice in ("on", "off"):
        monkeypatch.setenv(_xla.ENV, choice)
        out[choice] = simulate.sweep(problem, 30, seeds=16, algorithm=alg,
                                     checkpoints=np.asarray([10, 30]))
    a, b = out["on"], out["off"]
    assert np.all(np.isfinite(a.regret)) and not a.failed.any() and not b.failed.any()
    np.testing.assert_allclose(a.regret, b.regret, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(a.x_final, b.x_final, atol=1e-5)


def test_unroll_knobs_parse_and_agree_to_round_off(monkeypatch):
    """JAXBCO_SCAN_UNROLL / JAXBCO_INNER_UNROLL: values, a clear error, and unrolled loops
    compute what the rolled ones do (8 seeds, T = 12, K = 5 subgradient steps)."""
    monkeypatch.setenv(_xla.INNER_UNROLL_ENV, "0")
    assert _xla.inner_unroll(5) == 5
    monkeypatch.setenv(_xla.INNER_UNROLL_ENV, "9")
    assert _xla.inner_unroll(5) == 5
    monkeypatch.setenv(_xla.SCAN_UNROLL_ENV, "0")
    assert _xla.scan_unroll() == 1
    monkeypatch.setenv(_xla.SCAN_UNROLL_ENV, "-2")
    with pytest.raises(ValueError, match=r"JAXBCO_SCAN_UNROLL must be an integer >= 0"):
        _xla.scan_unroll()
    problem, _ = problems.make("quadratic-ball", 3)
    alg = RectifiedBCO(solver=Subgradient(steps=5))
    hyper = theorem_defaults(problem.domain, 12)
    out = {}
    try:
        for scan, inner in (("1", "1"), ("4", "0")):
            monkeypatch.setenv(_xla.SCAN_UNROLL_ENV, scan)
            monkeypatch.setenv(_xla.INNER_UNROLL_ENV, inner)
            jax.clear_caches()  # the knobs are read at trace time
            fn = simulate.make_run(problem, 12, algorithm=alg, checkpoints=np.asarray([5, 12]))
            out[scan] = jax.jit(fn)(hyper, jax.random.key(3), jnp.arange(8))
    finally:
        jax.clear_caches()  # no unrolled trace left for later tests
    a, b = out["1"], out["4"]
    assert np.all(np.isfinite(a["regret"]))
    np.testing.assert_allclose(a["regret"], b["regret"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(a["x_final"], b["x_final"], atol=1e-5)
