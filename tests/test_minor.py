"""The seeds-minor back-end (jaxbco.backends.seeds_minor) and the streaming comparator: same random numbers as
jax.random, same runs as the vmapped engine, regret against an independently computed x*."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import backends, comparator, losses, problems, sequences, sets, simulate
from jaxbco import constraints as C
from jaxbco._src import blocks, normal, prng
from jaxbco.algorithms import RectifiedBCO
from jaxbco.backends import seeds_minor
from jaxbco.keys import round_keys, seed_keys
from jaxbco.problem import Problem
from jaxbco.solvers import Dual, Subgradient


def _keys(n):
    return seed_keys(jax.random.key(11), jnp.arange(n, dtype=jnp.uint32))


def test_hashed_words_are_jax_random_bits_and_fold_in():
    keys = _keys(20)
    words = jax.random.key_data(keys)
    k0, k1 = prng.fold_in_words(words[:, 0], words[:, 1], 7)
    want = jax.random.key_data(jax.vmap(lambda k: jax.random.fold_in(k, 7))(keys))
    np.testing.assert_array_equal(np.stack([k0, k1], -1), want)
    for width, dtype in ((32, jnp.uint32), (64, jnp.uint64)):
        with jax.enable_x64(width == 64):
            got = prng.bits_words(words[:, 0], words[:, 1], (3, 5), width)  # (3, 5, 20)
            ref = jax.vmap(lambda k: jax.random.bits(k, (3, 5), dtype))(keys)
            np.testing.assert_array_equal(np.moveaxis(np.asarray(got), -1, 0), ref)
            # under vmap, ``normal`` takes the same path: equal to per-key draws
            a = jax.jit(jax.vmap(lambda k: normal.seed_minor_bits(k, (4,), width)))(keys)
            np.testing.assert_array_equal(
                a, jax.vmap(lambda k: jax.random.bits(k, (4,), dtype))(keys)
            )


def test_block_draws_are_the_engine_streams():
    """theta_t and u_t drawn for blocks of rounds equal the per-seed samplers on the round keys."""
    with jax.enable_x64(True):
        problem = problems.make("quadratic-ball", 6)
        problem = simulate._cast(problem, jnp.float64)
        keys = _keys(16)
        words = jax.random.key_data(keys)
        ts = jnp.arange(3, 7, dtype=jnp.int32)
        theta, u, _ = jax.jit(
            lambda w: seeds_minor.draw_rounds(
                blocks.expand(problem), w[:, 0], w[:, 1], ts, jnp.float64
            )
        )(words)
        for b, t in enumerate(ts):
            kl, kd, _ = jax.vmap(round_keys, (0, None))(keys, t)
            want_theta = jax.vmap(problem.loss_data.sample, (0, None))(kl, t)
            want_u = jax.vmap(lambda k: problem.domain.sample_direction(k, jnp.float64))(kd)
            np.testing.assert_allclose(np.asarray(theta[b]).T, want_theta, rtol=0, atol=1e-15)
            np.testing.assert_allclose(np.asarray(u[b]).T, want_u, rtol=0, atol=1e-15)


class _PlainQuadratic(losses.Quadratic):
    """The same loss under another type that declares nothing (``jaxbco._src.blocks``): the
    engine vmaps."""


def test_which_problems_run_seeds_minor():
    ball = problems.make("quadratic-ball", 4)
    varying = problems.make("time-varying-ball", 4)
    minor = lambda p, a: backends.blocker(p, a) is None
    assert minor(ball, RectifiedBCO())
    assert minor(ball, RectifiedBCO(solver=Subgradient(steps=3)))
    assert minor(varying, RectifiedBCO())
    plain = Problem(
        ball.domain, _PlainQuadratic(), ball.loss_data, ball.constraint, ball.constraint_data
    )
    assert backends.choose(plain, RectifiedBCO()) == (
        "vmap",
        "_PlainQuadratic does not declare blocks = True (the loss)",
    )


def test_seeds_minor_run_agrees_with_the_vmapped_engine():
    """float64, a 2-setting grid x 20 seeds, both solvers: the seeds-minor and the vmapped
    engines compute the same runs (up to summation order)."""
    with jax.enable_x64(True):
        ball = problems.make("quadratic-ball", 5)
        plain = Problem(
            ball.domain, _PlainQuadratic(), ball.loss_data, ball.constraint, ball.constraint_data
        )
        hyper = RectifiedBCO().default_hyper(ball, 40)
        hyper = jax.tree_util.tree_map(lambda v: jnp.stack([v, 1.3 * v]), hyper)
        for solver in (Dual(), Subgradient(steps=4)):
            alg = RectifiedBCO(solver=solver)
            kw = dict(
                seeds=20,
                algorithm=alg,
                dtype="float64",
                record_decisions=True,
                checkpoints=np.asarray([1, 7, 40]),
            )
            a = simulate.sweep(ball, 40, hyper, **kw)
            b = simulate.sweep(plain, 40, hyper, **kw)
            for m in simulate.METRICS + ("x_star", "x_final", "decisions"):
                np.testing.assert_allclose(
                    getattr(a, m), getattr(b, m), rtol=1e-11, atol=1e-11, err_msg=m
                )


def _project_ball_halfspace(y, a, b):
    """NumPy float64: the Euclidean projection of y onto {||x|| <= 1, <a, x> <= b} (||a|| = 1,
    |b| < 1), by cases of which constraints bind (KKT): none; the ball alone; the halfspace
    alone; both (the point of the circle ||x|| = 1, <a, x> = b nearest y)."""
    if np.linalg.norm(y) <= 1 and a @ y <= b:
        return y
    on_ball = y / max(np.linalg.norm(y), 1.0)
    if a @ on_ball <= b:
        return on_ball
    on_plane = y - (a @ y - b) * a
    if np.linalg.norm(on_plane) <= 1:
        return on_plane
    w = y - (a @ y) * a  # y's part along the plane
    return b * a + np.sqrt(1 - b * b) * w / np.linalg.norm(w)


@pytest.mark.parametrize("offset", [0.0, 1.2], ids=["halfspace-binds", "both-bind"])
def test_streaming_regret_against_an_independent_comparator(offset):
    """float64, every round a checkpoint, on the seeds-minor engine with the streamed x*:
    theta_t drawn in NumPy and replayed, f_t = ||x - theta_t||^2 on the unit ball with
    <a, x> <= 0.3.  Computed in NumPy alone, from the data and the recorded decisions x_t:
    x* (the projection of the mean theta onto the feasible set, which minimises
    sum_t ||x - theta_t||^2 = T ||x - mean||^2 + const), every f_t(x_t) and
    R_t = sum_{s<=t} f_s(x_s) - f_s(x*).  ``offset`` moves the mean along the plane so that
    the ball binds too (x* on the circle where sphere and plane meet)."""
    T, d, S = 25, 4, 3
    rng = np.random.default_rng(7)
    a = np.ones(d) / np.sqrt(d)
    along = np.r_[1.0, -1.0, 0.0, 0.0] / np.sqrt(2)  # orthogonal to a
    theta = 0.6 * a + offset * along + 0.1 * rng.normal(size=(T, d))
    x_star = _project_ball_halfspace(theta.mean(axis=0), a, 0.3)
    assert (np.linalg.norm(x_star) > 1 - 1e-12) == (offset > 0)  # the case meant
    f = lambda x: np.sum((x - theta) ** 2, axis=-1)  # (T,) f_t(x_t) for x (T, d)
    with jax.enable_x64(True):
        problem = Problem(
            sets.L2Ball(jnp.zeros(d), 1.0),
            losses.Quadratic(),
            sequences.Replay(theta),
            C.Linear(),
            sequences.Fixed((a, 0.3)),
        )
        assert comparator.streams(problem)
        res = simulate.sweep(
            problem,
            T,
            seeds=S,
            dtype="float64",
            record_decisions=True,
            checkpoints=np.arange(1, T + 1),
        )
    assert res.engine == "seeds-minor"
    for s in range(S):
        np.testing.assert_allclose(res.x_star[s], x_star, rtol=0, atol=1e-12)
        xs = res.decisions[0, s]  # (T, d): x_1 .. x_T
        np.testing.assert_allclose(res.loss[0, s], f(xs), rtol=1e-12, atol=1e-13)
        want = np.cumsum(f(xs)) - np.cumsum(f(x_star[None]))
        np.testing.assert_allclose(res.regret[0, s], want, rtol=1e-12, atol=1e-11)
