"""A ``CustomConstraint`` on seeds-minor blocks: the user's g, written for one run, runs under
``vmap`` over a block's runs (``jaxbco._src.blocks.per_run``), and its prox (``SmoothIPM``)
gathers the binding lanes with their own data; checked against the same run per run
(``vmap``), and a seed's result against the seed run alone."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbco
from jaxbco import backends, constraints, losses, sequences, sets
from jaxbco._src import blocks
from jaxbco.algorithms import RectifiedBCO

FLOAT64 = True  # a float64 reference check (tests/conftest.py)
D = 3


def _ellipsoid_fn(x, phi):
    P, q, s = phi
    return (x - q) @ P @ (x - q) - s


def _shared(domain):
    """A fixed dense ellipsoid (data shared by every seed) with its interior point."""
    rng = np.random.default_rng(1)
    Q, _ = np.linalg.qr(rng.normal(size=(D, D)))
    P = (Q * np.array([0.3, 1.0, 4.0])) @ Q.T
    g = constraints.CustomConstraint(_ellipsoid_fn, interior=lambda phi: phi[1])
    data = sequences.Fixed((jnp.asarray(0.5 * (P + P.T)), jnp.full(D, 0.1), jnp.asarray(0.3)))
    theta = sequences.IIDNormal(jnp.full(D, -0.6), 0.5)
    return jaxbco.Problem(domain, losses.Linear(), theta, g, data)


def _per_seed(domain):
    """A ball whose centre each seed draws every round (data per run), no interior point."""
    g = constraints.CustomConstraint(lambda x, c: jnp.sum((x - c) ** 2) - 0.4)
    theta = sequences.IIDNormal(jnp.full(D, -0.6), 0.5)
    return jaxbco.Problem(domain, losses.Linear(), theta, g, sequences.IIDNormal(jnp.zeros(D), 0.1))


DOMAINS = {
    "box": sets.Box(-jnp.ones(D), jnp.ones(D)),
    "simplex": sets.Simplex(D),
    "l1-ball": sets.L1Ball(jnp.zeros(D), 1.5),
}


@pytest.mark.parametrize("make", [_shared, _per_seed], ids=["shared", "per-seed"])
@pytest.mark.parametrize("domain", list(DOMAINS), ids=list(DOMAINS))
def test_blocks_agree_with_per_run(make, domain):
    problem = make(DOMAINS[domain])
    assert backends.choose(problem, RectifiedBCO()) == (backends.SEEDS_MINOR, "")
    check = jaxbco.check_component(problem, seeds=5, horizon=15, kernel=False)
    assert check.ok and check.compared, check.mismatch
    assert check.max_rel_diff < 1e-12  # float64 round-off (measured <= 1e-13)


@pytest.mark.parametrize("make", [_shared, _per_seed], ids=["shared", "per-seed"])
def test_a_seed_alone_equals_the_seed_in_a_batch(make):
    """Bitwise: the binding lanes are solved in chunks whose make-up depends on the batch."""
    problem, T = make(DOMAINS["box"]), 15
    kw = dict(checkpoints=[T], dtype="float64", comparator=False)
    batch = jaxbco.sweep(problem, T, seeds=40, **kw)  # more lanes than a chunk (32)
    alone = jaxbco.sweep(problem, T, seeds=[37], **kw)
    assert batch.engine == alone.engine == backends.SEEDS_MINOR
    np.testing.assert_array_equal(alone.x_final[..., 0, :], batch.x_final[..., 37, :])
    np.testing.assert_array_equal(alone.regret[..., 0, :], batch.regret[..., 37, :])


def test_per_run_applies_one_runs_function_to_each_run():
    fn = lambda x, phi: _ellipsoid_fn(x, phi) * jnp.ones(2)  # a vector value: runs last
    P, q = jnp.diag(jnp.array([1.0, 2.0, 3.0])), jnp.array([0.1, 0.2, 0.3])
    s = jnp.array([0.5, 1.0, 1.5, 2.0])  # per run
    x = jnp.arange(12.0).reshape(D, 4) / 10.0
    out = blocks.per_run(fn, x, (P[..., None], q[:, None], s))
    assert out.shape == (2, 4)
    want = [fn(x[:, r], (P, q, s[r])) for r in range(4)]
    np.testing.assert_allclose(out, np.stack(want, axis=-1), rtol=1e-15)


def test_a_leaf_without_the_run_axes_is_refused():
    with pytest.raises(ValueError, match=r"shape \(3, 5\) does not end in the run axes \(4,\)"):
        blocks.lanes((jnp.ones((3, 5)),), (4,))


def test_the_interior_point_is_each_runs_own():
    """``per_run_data``: a function of one run's data alone (an ``interior`` point)."""
    centres = jnp.arange(6.0).reshape(D, 2)  # two runs' centres, runs last
    out = blocks.per_run_data(lambda c: 2.0 * c, centres, (2,))
    np.testing.assert_array_equal(out, 2.0 * centres)
    shared = blocks.per_run_data(lambda c: c, jnp.ones((D, 1)), (2,))
    assert shared.shape == (D, 2)
    assert jax.tree_util.tree_leaves(blocks.per_run_data(lambda c: None, centres, (2,))) == []
