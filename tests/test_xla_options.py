"""jaxbco._src.xla: YNNPACK fusions off on the CPU (a seed bitwise the same in a large batch);
loop unrolling as arguments (part of the compiled program's identity, same numbers)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import problems, simulate
from jaxbco._src import xla
from jaxbco.algorithms import RectifiedBCO
from jaxbco.hyper import theorem_defaults
from jaxbco.solvers import Subgradient

# What jaxbco's CPU programs must be compiled with (benchmarks/NOTES.md), written out here
# rather than taken from jaxbco._src.xla (whose YNN_OFF and _supported are what is tested).
YNN_FUSIONS_OFF = {"xla_cpu_experimental_ynn_fusion_type": ""}


def _jaxlib_knows(options: dict) -> bool:
    """This jaxlib's compiler takes ``options`` (an unknown name: INVALID_ARGUMENT)."""
    try:
        jax.jit(lambda x: 2 * x, compiler_options=options).lower(jnp.zeros(())).compile()
    except Exception:
        return False
    return True


def _make(name, d):
    p = problems.make(name, d)
    return p[0] if isinstance(p, tuple) else p


def test_fusions_off_on_the_cpu():
    import jaxlib

    ball = _make("quadratic-ball", 4)
    cpu = jax.default_backend() == "cpu"
    if cpu and tuple(int(v) for v in jaxlib.__version__.split(".")[:2]) == (0, 10):
        assert _jaxlib_knows(YNN_FUSIONS_OFF)  # the jaxlib the option is documented for
    expected = YNN_FUSIONS_OFF if cpu and _jaxlib_knows(YNN_FUSIONS_OFF) else {}
    assert xla.options() == tuple(expected.items())  # hashable: part of a program's identity
    assert simulate.make_run(ball, 10).compiler_options == expected


@pytest.mark.parametrize("name", ["quadratic-ball", "time-varying-ball"])
def test_seed_bitwise_the_same_in_a_batch_of_4112(name):
    """With the default options a seed's curves and x* are bitwise the same alone and at
    position 5 of 4112 seeds (seeds-minor and vmapped engines; YNNPACK's fusions broke this
    at this size: benchmarks/NOTES.md)."""
    problem = _make(name, 10)
    ck = np.asarray([8, 16])
    alone = simulate.sweep(problem, 16, seeds=np.asarray([5]), checkpoints=ck)
    batch = simulate.sweep(problem, 16, seeds=4112, checkpoints=ck)
    for m in simulate.METRICS:
        np.testing.assert_array_equal(getattr(alone, m)[0, 0], getattr(batch, m)[0, 5])
    np.testing.assert_array_equal(alone.x_star[0], batch.x_star[5])


def test_unroll_arguments_are_checked_and_agree_to_round_off():
    """``Subgradient(unroll=...)`` and ``scan_unroll``: clear errors, and unrolled loops
    compute what the rolled ones do (8 seeds, T = 12, K = 5 subgradient steps), no cache
    clearing needed (the choice is part of the program)."""
    with pytest.raises(ValueError, match=r"unroll must be an integer >= 0"):
        Subgradient(steps=5, unroll=-1)
    with pytest.raises(ValueError, match=r"steps must be an integer >= 1"):
        Subgradient(steps=0)
    problem = _make("quadratic-ball", 3)
    with pytest.raises(ValueError, match=r"scan_unroll must be an integer >= 1"):
        simulate.make_run(problem, 12, scan_unroll=0)
    hyper = theorem_defaults(problem.domain, 12)
    rolled = simulate.make_run(
        problem,
        12,
        algorithm=RectifiedBCO(solver=Subgradient(steps=5)),
        checkpoints=np.asarray([5, 12]),
    )(jax.random.key(3), hyper, jnp.arange(8))
    unrolled = simulate.sweep(
        problem,
        12,
        hyper,
        seeds=8,
        key=jax.random.key(3),
        algorithm=RectifiedBCO(solver=Subgradient(steps=5, unroll=0)),
        checkpoints=np.asarray([5, 12]),
        scan_unroll=4,
    )
    assert np.all(np.isfinite(rolled["regret"]))
    np.testing.assert_allclose(unrolled.regret, rolled["regret"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(unrolled.x_final, rolled["x_final"], atol=1e-5)
