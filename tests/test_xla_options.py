"""jaxbco._xla: YNNPACK fusions off on the CPU (a seed bitwise the same in a large batch), the
override, and that the choice changes results by float32 round-off only."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import _xla, problems, simulate
from jaxbco.algorithms import RectifiedBCO
from jaxbco.hyper import theorem_defaults
from jaxbco.solvers import Subgradient

OFF = _xla.YNN_OFF if _xla._supported(_xla.YNN_OFF) else ()


def test_fusions_off_on_the_cpu_and_the_override(monkeypatch):
    monkeypatch.delenv(_xla.ENV, raising=False)
    ball = problems.make("quadratic-ball", 4)
    expected = OFF if jax.default_backend() == "cpu" else ()
    assert _xla.options() == expected
    assert simulate.make_run(ball, 10).compiler_options == dict(expected)
    monkeypatch.setenv(_xla.ENV, "on")
    assert _xla.options() == ()
    monkeypatch.setenv(_xla.ENV, "fast")
    with pytest.raises(ValueError, match="JAXBCO_YNN must be one of auto, on, off"):
        _xla.options()


@pytest.mark.parametrize("name", ["quadratic-ball", "time-varying-ball"])
def test_seed_bitwise_the_same_in_a_batch_of_4112(name):
    """With the default options a seed's curves and x* are bitwise the same alone and at
    position 5 of 4112 seeds (seeds-minor and vmapped engines; YNNPACK's fusions broke this
    at this size: benchmarks/NOTES.md)."""
    problem = problems.make(name, 10)
    ck = np.asarray([8, 16])
    alone = simulate.sweep(problem, 16, seeds=np.asarray([5]), checkpoints=ck)
    batch = simulate.sweep(problem, 16, seeds=4112, checkpoints=ck)
    for m in simulate.METRICS:
        np.testing.assert_array_equal(getattr(alone, m)[0, 0], getattr(batch, m)[0, 5])
    np.testing.assert_array_equal(alone.x_star[0], batch.x_star[5])


def test_on_and_off_agree_to_round_off(monkeypatch):
    """The same 16 seeds, T = 30, subgradient solver, with the fusions on and off."""
    problem = problems.make("quadratic-ball", 5)
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
    problem = problems.make("quadratic-ball", 3)
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
