"""Back-ends chosen by declaration (``jaxbco.backends``), beyond the every-pair matrix
(tests/test_matrix.py: every named problem x every algorithm on each back-end, float32 and
float64): shared data sampled once a round, the comparator on a key block, chunking, replayed
directions, the polyhedral model step on a block, and researchers' own problems."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import backends, comparator, problems, sequences, simulate
from jaxbco._src import blocks as _blocks
from jaxbco._src.prng import KeyBlock
from jaxbco.algorithms import ALGORITHMS
from jaxbco.keys import seed_keys
from jaxbco.problem import Problem
from jaxbco.solvers._capped_simplex import model_step

T = 30


def _make(name):
    if name in ("yu-neely", "hutchinson-toy"):
        return problems.make(name, horizon=T)
    return problems.make(name, dim=4, horizon=T)


def _algorithm(name, problem, plain=False):
    cls = ALGORITHMS[name]
    if plain:  # the same code under a class that declares nothing: the vmap back-end
        cls = type("Plain" + cls.__name__, (cls,), {})
    try:
        return cls(strongly_convex=problem.strongly_convex)
    except TypeError:
        return cls()


def _sweep(problem, alg, seeds, dtype="float64"):
    hyper = alg.default_hyper(problem, T)
    hyper = jax.tree_util.tree_map(lambda v: jnp.stack([v, 1.2 * v]), hyper)
    return simulate.sweep(
        problem,
        T,
        hyper,
        seeds=seeds,
        algorithm=alg,
        dtype=dtype,
        checkpoints=np.asarray([1, 5, T]),
    )


def _agree(problem, alg_name, seeds=None):
    seeds = np.arange(5) if seeds is None else seeds
    a = _sweep(problem, _algorithm(alg_name, problem), seeds)
    b = _sweep(problem, _algorithm(alg_name, problem, plain=True), seeds)
    assert (a.engine, b.engine) == (backends.SEEDS_MINOR, backends.VMAP)
    for m in simulate.METRICS + ("x_star", "x_final", "failed"):
        np.testing.assert_allclose(
            getattr(a, m), getattr(b, m), rtol=1e-10, atol=1e-11, err_msg=f"{alg_name} {m}"
        )
    return a


class _RecordedReplay(sequences.Replay):
    """Replayed data that record the shapes they hand the round (at trace time)."""

    blocks = True
    shared = True
    # its sample draws what Replay's does: it says so (a class that defines sample declares
    # its structure itself, issue 57)
    recorded = sequences.Replay.recorded
    length = sequences.Replay.length

    def sample(self, key, t):
        out = super().sample(key, t)
        SEEN.append((key is None, out.shape))
        return out


SEEN: list = []


def test_shared_data_are_sampled_once_a_round_without_a_seed_axis():
    """``Fixed`` and ``Replay`` declare ``shared``: no key, no seed axis, on both back-ends;
    the carry holds no constraint data for a shared constraint sequence."""
    ball = _make("quadratic-ball")
    assert _blocks.shared(ball.constraint_data) and not _blocks.shared(ball.loss_data)
    theta = np.random.default_rng(0).normal(0.2, 0.1, (T, 4)).astype(np.float32)
    replay = Problem(
        ball.domain, ball.loss, _RecordedReplay(theta), ball.constraint, ball.constraint_data
    )
    for plain, engine_name in ((False, backends.SEEDS_MINOR), (True, backends.VMAP)):
        SEEN.clear()
        alg = _algorithm("rectified-bco", replay, plain)
        res = simulate.sweep(replay, T, alg.default_hyper(replay, T), seeds=32, algorithm=alg)
        assert res.engine == engine_name
        # the rounds sample it with no key (once a round, for every seed) and no seed axis
        in_rounds = {shape for keyless, shape in SEEN if keyless}
        assert in_rounds and in_rounds <= {(4,), (4, 1)}
        # every seed saw the same data: one x* for all
        np.testing.assert_array_equal(res.x_star, np.broadcast_to(res.x_star[:1], res.x_star.shape))
    hyper = jax.tree_util.tree_map(lambda v: jnp.asarray(v)[None], alg.default_hyper(replay, T))
    carry, _ = jax.eval_shape(
        lambda: simulate.engine.start(
            replay,
            alg,
            hyper,
            jax.random.key(0),
            jnp.arange(32, dtype=jnp.uint32),
            T,
            1,
            True,
            False,
        )
    )
    assert carry.phi == ()


@pytest.mark.parametrize("name", ["time-varying-ball", "logistic-ball"])
def test_comparator_written_once_runs_on_a_key_block(name):
    """``comparator.offline_optimum`` is one function for one seed key and for a ``KeyBlock``
    of seeds with the problem laid out for blocks (the engine vmaps it today: on blocks the
    logistic Hessian sums measured 3.7x slower, benchmarks/NOTES.md); both give the same x*
    (to the iterative comparator's own accuracy)."""
    with jax.enable_x64(True):
        problem = simulate._cast(_make(name), jnp.float64)
        keys = seed_keys(jax.random.key(0), jnp.arange(3, dtype=jnp.uint32))
        per_seed = jax.vmap(comparator.offline_optimum, (None, 0, None))(problem, keys, T)
        words = jax.random.key_data(keys)
        block = comparator.offline_optimum(
            _blocks.expand(problem), KeyBlock(words[:, 0], words[:, 1]), T
        )
        np.testing.assert_allclose(
            np.moveaxis(np.asarray(block), 0, -1), per_seed, rtol=0, atol=1e-7
        )


@pytest.mark.parametrize("name", ["time-varying-ball", "switching-box", "simplex-quadratic"])
def test_blocks_any_chunking_bitwise(name):
    """Chunks of 13 rounds (not aligned to the 8-round draw blocks) give the whole run's result
    bitwise: the carried constraint data (drawn slack) and the prox's warm start included."""
    problem = _make(name)
    alg = _algorithm("rectified-bco", problem)
    hyper = alg.default_hyper(problem, T)
    kw = dict(seeds=4, algorithm=alg, checkpoints=np.asarray([1, 5, T]))
    whole = simulate.sweep(problem, T, hyper, **kw)
    chunked = simulate.sweep(problem, T, hyper, chunk=13, **kw)
    assert whole.engine == chunked.engine == backends.SEEDS_MINOR
    for m in simulate.METRICS + ("x_final", "x_star"):
        np.testing.assert_array_equal(getattr(chunked, m), getattr(whole, m), err_msg=m)


def test_replayed_directions_on_blocks_agree_with_vmap():
    """Replayed u_t, shared (T, d) and per seed (S, T, d), on the seeds-minor back-end equal the
    vmap back-end's runs (float64), chunked or not."""
    rng = np.random.default_rng(3)
    with jax.enable_x64(True):
        problem = _make("time-varying-ball")
        for shape in ((T, 4), (5, T, 4)):
            u = rng.normal(size=shape)
            u /= np.linalg.norm(u, axis=-1, keepdims=True)
            out = []
            for plain, chunk in ((False, None), (False, 13), (True, None)):
                alg = _algorithm("rectified-bco", problem, plain)
                out.append(
                    simulate.sweep(
                        problem,
                        T,
                        alg.default_hyper(problem, T),
                        seeds=5,
                        algorithm=alg,
                        dtype="float64",
                        directions=u,
                        chunk=chunk,
                        checkpoints=np.asarray([1, 5, T]),
                    )
                )
            assert [r.engine for r in out] == [backends.SEEDS_MINOR] * 2 + [backends.VMAP]
            for m in simulate.METRICS + ("x_final",):
                np.testing.assert_array_equal(getattr(out[1], m), getattr(out[0], m), err_msg=m)
                np.testing.assert_allclose(
                    getattr(out[0], m), getattr(out[2], m), rtol=1e-10, atol=1e-11, err_msg=m
                )


@pytest.mark.parametrize("cap", [0.05, 1e6], ids=["cap-binds", "cap-slack"])
def test_polyhedral_model_step_on_a_block_is_the_per_run_maximiser(cap):
    """The capped-simplex model step on a block (faces off the cap first, the cap's faces only
    when a lane needs them) equals the per-run full enumeration, lane by lane (float64)."""
    rng = np.random.default_rng(7)
    m, R = 4, 64
    with jax.enable_x64(True):
        nu = jnp.asarray(rng.uniform(0, 0.02, (m, R)))
        G = jnp.asarray(rng.normal(size=(m, R)))
        B = rng.normal(size=(m, m, R))
        K = jnp.asarray(np.einsum("ijr,kjr->ikr", B, B) + 0.1 * np.eye(m)[..., None])
        beta = jnp.full((R,), cap)
        z_block, v_block = model_step(nu, G, K, beta)
        z_run, v_run = jax.vmap(model_step, in_axes=(1, 1, 2, 0), out_axes=(1, 0))(nu, G, K, beta)
        np.testing.assert_allclose(z_block, z_run, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(v_block, v_run, rtol=1e-12, atol=1e-14)
        if cap < 1:  # the cap binds in some lanes: sum z = beta there
            assert np.any(np.abs(np.sum(np.asarray(z_block), axis=0) - cap) < 1e-12)


def _own(set_name, constraint_name, d=3):
    """A researcher's own problem: a set x a constraint family outside the named problems."""
    from jaxbco import constraints as C
    from jaxbco import losses as L
    from jaxbco import sets

    domain = {
        "L1Ball": sets.L1Ball(jnp.full(d, 0.1), 1.0),
        "Box": sets.Box(-jnp.ones(d), jnp.ones(d)),
        "L2Ball": sets.L2Ball(jnp.zeros(d), 1.0),
    }[set_name]
    fam, data = {
        "Ellipsoid": (
            C.Ellipsoid(),
            (
                jnp.asarray([[2.0, 0.3, 0.0], [0.3, 1.0, 0.0], [0.0, 0.0, 0.5]]),
                jnp.asarray([0.3, 0.0, 0.1]),
                jnp.asarray(0.05),
            ),
        ),
        "Linear": (C.Linear(), (jnp.asarray([0.6, 0.8, 0.0]), jnp.asarray(0.1))),
        "Ball": (C.Ball(), (jnp.asarray([0.2, 0.1, 0.0]), jnp.asarray(0.2))),
    }[constraint_name]
    return Problem(
        domain=domain,
        loss=L.Quadratic(),
        loss_data=sequences.IIDUniform(-jnp.ones(d), jnp.ones(d)),
        constraint=fam,
        constraint_data=sequences.Fixed(data),
    )


@pytest.mark.parametrize(
    "set_name,constraint_name",
    [("L1Ball", "Ellipsoid"), ("L1Ball", "Linear"), ("Box", "Ellipsoid"), ("L2Ball", "Ball")],
)
def test_own_problem_on_blocks_agrees_with_vmap(set_name, constraint_name):
    """Sets and constraints outside the named problems (an L1 ball's centre laid out (d, 1) on
    blocks once broke its projection: every L1-ball problem failed to run seeds-minor)."""
    with jax.enable_x64(True):
        result = _agree(_own(set_name, constraint_name), "rectified-bco")
    assert np.all(np.isfinite(result.regret)) and not np.any(result.failed)
