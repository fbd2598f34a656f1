"""A lane-wise loop's tail on the open lanes only (``jaxbco.solvers._tail``): the same answer,
bitwise, as one loop over every lane, lane by lane; and the polyhedral dual Newton that uses
it: a run the same with and without the compacted tail, a seed alone the same as in a batch."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import problems, simulate, tune
from jaxbco.algorithms import RectifiedBCO
from jaxbco.solvers import PolyhedralDual
from jaxbco.solvers._tail import open_first, tail

T = 30


def test_open_first_is_the_stable_order_of_the_open_lanes():
    rng = np.random.default_rng(0)
    for n in (1, 7, 300):
        for _ in range(20):
            done = rng.random(n) < rng.random()
            k = int(rng.integers(1, n + 1))
            got = np.asarray(open_first(jnp.asarray(done), k))
            np.testing.assert_array_equal(got, np.argsort(done, kind="stable")[:k])


def _collatz(lanes):
    """Each lane's Collatz trajectory from its own start until it reaches 1 (1 to 111 trips
    here): a loop whose lanes finish after very different numbers of trips."""
    start = jnp.arange(1, 301, dtype=jnp.int32)
    scale = jnp.linspace(1.0, 2.0, 300)  # a per-lane constant, gathered with the lanes

    def body(consts, c):
        (scale,) = consts
        v, steps, acc, done = c
        nxt = jnp.where(v % 2 == 0, v // 2, 3 * v + 1)
        keep = lambda old, new: jnp.where(done, old, new)
        return (
            keep(v, nxt),
            keep(steps, steps + 1),
            keep(acc, acc * 0.999 + scale * nxt.astype(acc.dtype)),
            done | (nxt == 1),
        )

    zero = jnp.zeros(300, jnp.int32)
    carry = (start, zero, jnp.zeros(300), start == 1)
    return jax.jit(lambda c: tail(body, (scale,), (True,), c, lambda c: c[3], lanes))(carry)


def test_tail_gives_every_lane_the_whole_loops_answer_bitwise():
    whole = _collatz(None)
    assert int(jnp.max(whole[1])) > 100 and int(jnp.min(whole[1])) == 0
    for lanes in (8, 32, 150):
        part = _collatz(lanes)
        for a, b in zip(part, whole):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _run(name, seeds, tail_lanes):
    problem = problems.make(name, horizon=T) if name != "switching-box" else problems.make(name)
    alg = RectifiedBCO(solver=PolyhedralDual(tail_lanes=tail_lanes))
    return simulate.sweep(
        problem,
        T,
        alg.default_hyper(problem, T),
        seeds=seeds,
        algorithm=alg,
        checkpoints=np.asarray([1, 5, T]),
    )


@pytest.mark.parametrize("name", ["switching-box", "hutchinson-toy"])
def test_polyhedral_tail_leaves_every_run_bitwise_unchanged(name):
    """300 seeds (one block of 300 lanes): the dual Newton's tail gathered into 32 lanes gives
    every run of the one-loop solve bitwise, and seed 137 alone gives its row of the batch."""
    seeds = np.arange(300)
    whole = _run(name, seeds, None)
    part = _run(name, seeds, 32)
    alone = _run(name, seeds[137:138], 32)
    for m in simulate.METRICS + ("x_final", "x_star", "failed"):
        np.testing.assert_array_equal(getattr(part, m), getattr(whole, m), err_msg=m)
        axis = 0 if m == "x_star" else 1  # the seeds' axis
        np.testing.assert_array_equal(
            np.take(getattr(alone, m), [0], axis=axis),
            np.take(getattr(part, m), [137], axis=axis),
            err_msg=f"{m} alone",
        )


def test_gradients_through_a_run_with_the_tail_are_the_one_loops():
    """Reverse mode through a whole run (300 seeds, the tail engaged): the same gradient,
    bitwise, as with one loop, and finite (the loop runs on stop_gradient data; the
    derivatives come from the differentiable finish)."""
    problem = problems.make("switching-box", 4)
    start = RectifiedBCO().default_hyper(problem, T)
    space = tune.make_space(problem, start, ("c", "alpha_scale", "gamma_scale"))
    ids = jnp.arange(300, dtype=jnp.uint32)
    z0 = jnp.asarray(space.encode(start))
    grads = []
    for lanes in (None, 32):
        alg = RectifiedBCO(solver=PolyhedralDual(tail_lanes=lanes), smoothing=0.05)
        obj = tune.make_objective(
            problem, T, space, algorithm=alg, comparator=False, smoothing=0.05, remat=True
        )
        grads.append(np.asarray(jax.jit(jax.grad(lambda z: obj(z, 3.0, ids)[0]))(z0)))  # noqa: B023
    assert np.all(np.isfinite(grads[0])) and np.any(grads[0] != 0)
    np.testing.assert_array_equal(grads[1], grads[0])
