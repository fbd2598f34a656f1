"""``solvers.SmoothDual`` (the smooth-g method for a set of one's own, or chosen by a
constraint's ``prox_method``) in float32, where its APG's step test meets round-off.

Found by docs/own-algorithm.md's example (an energy budget ||x||^2 <= 0.5 on a box, run with
every step certified): inside ``lax.scan`` with the round's data folded in as constants, the
test "is the step's quadratic model short?" compared the objective with its model up to
8 eps (|value| + |model|): both sums cancel (mu g(z) ~ -16 against a value near 0), so
round-off read as "short", the lane's curvature doubled each step, its steps shrank to
nothing and the lane stopped far from x(mu) (x 0.805 y instead of 0.988 y; prox certificate
0.37-0.94 on every seed of a 300-round run, and the seeds-minor and vmap runs diverged).  The
allowance is now taken from the terms' sizes."""

import cvxpy as cp
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import jaxbco
from jaxbco import constraints, losses, sequences, sets, solvers
from jaxbco._src import blocks as _blocks
from jaxbco.algorithms import RectifiedBCO


class NormBudget(constraints.AbstractConstraint):
    """g(x, phi) = ||x||^2 - phi, its prox by SmoothDual (declared)."""

    blocks = True
    prox_method = solvers.SmoothDual

    def value(self, x, phi):
        return jnp.sum(x * x, axis=0) - phi

    def curvature(self, phi):
        return jnp.asarray(2.0)


# The failing round's 16 lanes (4 seeds of the run, the rest the block's padding copies).
Y = np.asarray(
    [
        [1.157954, 0.22043304, 0.4020209],
        [0.29963756, 0.08284305, 0.8832294],
        [0.5070904, 0.09857836, 1.1918837],
        [0.6254054, 0.31472084, 0.14867787],
    ],
    np.float32,
)[[0, 1, 2] + [3] * 13].T
ALPHA = np.full(16, 4.1231055, np.float32)
BETA = np.asarray([22.568039, 29.303585, 33.562504] + [41.282333] * 13, np.float32)
XI = 0.01


def _cvxpy(y, alpha, beta):
    z = cp.Variable(3)
    obj = alpha / 2 * cp.sum_squares(z - y) + beta * cp.pos(cp.sum_squares(z) - 0.5)
    cp.Problem(cp.Minimize(obj), [cp.abs(z) <= 1 - XI]).solve()
    return z.value


def test_inside_a_scan_with_constant_data_it_equals_cvxpy():
    domain = _blocks.expand(sets.Box(-jnp.ones(3), jnp.ones(3)))
    solve = lambda x0: solvers.SmoothDual().solve(
        domain,
        jnp.full(16, XI),
        NormBudget(),
        jnp.asarray(0.5),
        x0,
        jnp.asarray(Y),
        jnp.asarray(ALPHA),
        jnp.asarray(BETA),
    )
    in_scan = eqx.filter_jit(
        lambda: jax.lax.scan(lambda c, _: (solve(c), solve(c)), jnp.zeros((3, 16)), None, length=1)[
            1
        ][0]
    )()
    for k in range(4):
        np.testing.assert_allclose(
            np.asarray(in_scan[:, k]),
            _cvxpy(Y[:, k], ALPHA[k], BETA[k]),
            atol=2e-5,
            err_msg=f"lane {k}",
        )


def test_a_run_is_certified_and_both_back_ends_agree():
    problem = jaxbco.Problem(
        sets.Box(-jnp.ones(3), jnp.ones(3)),
        losses.Quadratic(),
        sequences.IIDNormal(jnp.full(3, 0.8), 0.1),
        NormBudget(),
        sequences.Fixed(jnp.asarray(0.5)),
    )
    plain = type("Plain", (RectifiedBCO,), {})
    runs = [
        jaxbco.sweep(problem, 100, seeds=4, algorithm=cls(certify_every=1), checkpoints=[100])
        for cls in (RectifiedBCO, plain)
    ]
    assert [r.engine for r in runs] == ["seeds-minor", "vmap"]
    for r in runs:
        assert r.prox_method.startswith("SmoothDual") and r.prox_ok.all(), r.prox_certificate
    np.testing.assert_allclose(runs[0].x_final, runs[1].x_final, atol=1e-5)
