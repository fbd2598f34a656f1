"""A user's own f and g checked before a run (``jaxbco._src.convexity``): non-convex or NaN at
x_1 is a ValueError naming the function, never a wrong answer or "infeasible"."""

import jax.numpy as jnp
import pytest

import jaxbco
from jaxbco import constraints, losses, sequences, sets

D = 4


def _problem(g=None, f=None):
    return jaxbco.Problem(
        domain=sets.Box(-jnp.ones(D), jnp.ones(D)),
        loss=losses.Linear() if f is None else losses.CustomLoss(f),
        loss_data=sequences.IIDNormal(jnp.ones(D), 0.1 * jnp.ones(D)),
        constraint=constraints.CustomConstraint(g or (lambda x, p: jnp.sum(jnp.abs(x - p)) - 0.6)),
        constraint_data=sequences.Fixed(jnp.zeros(D)),
    )


@pytest.mark.parametrize(
    "g",
    [
        lambda x, p: x[0] ** 2 - x[1] ** 2 - 0.05,  # a saddle: concave along x_1
        lambda x, p: 0.04 - jnp.sum((x - p) ** 2),  # concave: was "infeasible"
        lambda x, p: x[0] * x[1] - 0.5,  # indefinite, flat along the axes
    ],
    ids=["saddle", "concave", "bilinear"],
)
def test_a_non_convex_constraint_is_named(g):
    with pytest.raises(ValueError, match=r"CustomConstraint's fn \(g\) is not convex in x"):
        jaxbco.sweep(_problem(g), 20, seeds=1)


def test_a_non_convex_loss_is_named():
    with pytest.raises(ValueError, match=r"CustomLoss's fn \(f\) is not convex in x"):
        jaxbco.sweep(_problem(f=lambda x, th: -jnp.sum((x - th) ** 2)), 20, seeds=1)


def test_nan_at_the_start_point_is_named():
    with pytest.raises(ValueError, match=r"CustomConstraint's fn \(g\) is nan at the start point"):
        jaxbco.sweep(_problem(lambda x, p: jnp.sqrt(x[0] - 0.5)), 20, seeds=1)


def test_a_kink_at_the_start_point_is_allowed():
    """||x - c|| with c = x_1: convex, its gradient NaN at x_1 (the old LinAlgError)."""
    res = jaxbco.sweep(_problem(lambda x, p: jnp.linalg.norm(x - p) - 0.3), 20, seeds=1)
    assert res.x_star.shape == (1, D)
