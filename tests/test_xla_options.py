"""jaxbco._xla: which programs get YNNPACK fusions switched off, the override, and that the
choice changes results by float32 round-off only."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import _xla, problems, simulate
from jaxbco.algorithms import RectifiedBCO
from jaxbco.solvers import Subgradient

OFF = _xla.YNN_OFF if _xla._supported(_xla.YNN_OFF) else ()


def test_choice_follows_inner_loops(monkeypatch):
    monkeypatch.delenv(_xla.ENV, raising=False)
    if jax.default_backend() != "cpu":
        pytest.skip("CPU-only options")
    ball, _ = problems.make("quadratic-ball", 4)
    box, _ = problems.make("switching-box", 4)
    logistic, _ = problems.make("logistic-ball", 4)
    assert _xla.options(ball, RectifiedBCO()) == ()                 # closed-form prox and x*
    assert _xla.options(ball, RectifiedBCO(solver=Subgradient())) == OFF
    assert _xla.options(box, RectifiedBCO()) == OFF                 # bracketed Newton loop
    assert _xla.options(logistic, RectifiedBCO(), part="start") == OFF  # FISTA comparator
    fn = simulate.make_run(ball, 10, algorithm=RectifiedBCO(solver=Subgradient()))
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
