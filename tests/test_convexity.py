"""A user's own f and g checked before a run (``jaxbco.offline.convexity``): non-convex or NaN at
x_1 is a ValueError naming the function, never a wrong answer or "infeasible"; non-convex
where the run went (x*, x_T) is a NonConvexWarning naming it, every certificate failed."""

import warnings

import jax.numpy as jnp
import pytest

import jaxbco
from jaxbco import constraints, losses, sequences, sets
from jaxbco.problem import NonConvexWarning

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


def test_non_convex_where_the_run_went_is_named_and_flagged():
    """g = x_0^3 + x_1 - 0.5 has second differences 0 through X's centre (so the check before
    the run passes) and 6 x_0 < 0 where a loss pulling to x_0 = -0.8 takes x* and x_T."""
    problem = jaxbco.Problem(
        domain=sets.Box(-jnp.ones(D), jnp.ones(D)),
        loss=losses.Quadratic(),
        loss_data=sequences.Fixed(jnp.asarray([-0.8, 0.3, 0.1, 0.0])),
        constraint=constraints.CustomConstraint(lambda x, p: x[0] ** 3 + x[1] - 0.5),
        constraint_data=sequences.Fixed(()),  # no data (was an IndexError in the check)
    )
    with pytest.warns(NonConvexWarning, match=r"CustomConstraint's fn \(g\) is not convex where"):
        res = jaxbco.sweep(problem, 40, seeds=2)
    assert not res.x_star_ok.any() and not res.prox_ok.any()


def test_convex_where_the_run_went_is_not_flagged():
    problem = _problem(lambda x, p: jnp.sum((x - p) ** 2) - 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonConvexWarning)
        res = jaxbco.sweep(problem, 40, seeds=2)
    assert res.x_star_ok.all() and res.prox_ok.all()
