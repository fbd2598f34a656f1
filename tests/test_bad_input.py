"""Every bad input of the core issue's item 9 raises a ValueError naming the parameter."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import constraints, losses, sequences, sets, simulate
from jaxbco.hyper import Hyper, theorem_defaults
from jaxbco.problem import Problem, validate

D = 3
A = jnp.ones(D) / np.sqrt(D)


def _problem(**kw):
    base = dict(
        domain=sets.L2Ball(jnp.zeros(D), 1.0),
        loss=losses.Quadratic(),
        loss_data=sequences.IIDUniform(jnp.zeros(D), jnp.ones(D)),
        constraint=constraints.Linear(),
        constraint_data=sequences.Fixed((A, jnp.asarray(0.3))),
    )
    base.update(kw)
    return Problem(**base)


GOOD = dict(c=0.5, eps=0.1, xi=0.1, delta=0.05)


@pytest.mark.parametrize(
    "field,value,match",
    [
        ("c", 0.49, r"c must lie in \[0.5, 1\)"),
        ("c", 1.0, r"c must lie in \[0.5, 1\)"),
        ("eps", 0.0, r"eps must lie in \(0"),
        ("eps", -1.0, r"eps must lie in \(0"),
        ("xi", 0.0, r"xi must lie in \(0, 1\)"),
        ("xi", 1.0, r"xi must lie in \(0, 1\)"),
        ("delta", 0.0, r"delta must lie in \(0"),
        ("delta", -0.1, r"delta must lie in \(0"),
        ("alpha_scale", 0.0, r"alpha_scale must lie in \(0"),
        ("c", float("nan"), r"c must be finite"),
    ],
)
def test_bad_hyperparameters(field, value, match):
    with pytest.raises(ValueError, match=match):
        Hyper(**{**GOOD, field: value})


def test_delta_larger_than_xi_r():
    with pytest.raises(ValueError, match=r"delta must lie in \(0, xi \* r\]"):
        simulate.run(_problem(), 5, Hyper(c=0.5, eps=0.1, xi=0.01, delta=0.5))


@pytest.mark.parametrize("horizon", [0, -3, 2.5])
def test_bad_horizon(horizon):
    with pytest.raises(ValueError, match="horizon T must be an integer >= 1"):
        simulate.run(_problem(), horizon, Hyper(**GOOD))


@pytest.mark.parametrize("seeds", [0, -1])
def test_bad_seeds(seeds):
    with pytest.raises(ValueError, match="seeds must be an integer >= 1"):
        simulate.sweep(_problem(), 5, Hyper(**GOOD), seeds=seeds)


def test_dimension_mismatch_loss_data():
    with pytest.raises(ValueError, match="dimension mismatch"):
        simulate.run(
            _problem(loss_data=sequences.IIDUniform(jnp.zeros(D + 1), jnp.ones(D + 1))),
            5,
            Hyper(**GOOD),
        )


def test_dimension_mismatch_constraint():
    with pytest.raises(ValueError, match="dimension mismatch"):
        simulate.run(
            _problem(constraint_data=sequences.Fixed((jnp.ones(D + 2), jnp.asarray(0.3)))),
            5,
            Hyper(**GOOD),
        )


def test_dimension_mismatch_initial_point():
    with pytest.raises(ValueError, match="dimension mismatch: x1"):
        simulate.run(_problem(x1=jnp.zeros(D + 1)), 5, Hyper(**GOOD))


def test_initial_point_outside_X():
    with pytest.raises(ValueError, match="x1 must lie in the feasible set X"):
        simulate.run(_problem(x1=jnp.full(D, 2.0)), 5, Hyper(**GOOD))


def test_infeasible_offline_problem():
    with pytest.raises(ValueError, match="offline problem is infeasible"):
        simulate.run(
            _problem(constraint_data=sequences.Fixed((A, jnp.asarray(-2.0)))), 5, Hyper(**GOOD)
        )


@pytest.mark.parametrize(
    "domain",
    [
        sets.L2Ball(jnp.full(D, 0.1), 1.0),
        sets.Box(-jnp.ones(D), 2 * jnp.ones(D)),
        sets.Simplex(D),
        sets.L1Ball(jnp.zeros(D), 1.5),
    ],
    ids=lambda s: type(s).__name__,
)
def test_fixed_halfspace_decided_at_the_boundary(domain):
    """A fixed halfspace a.x <= b meets X exactly when b >= min over X of a.x (closed form,
    ``min_linear``): at the touching b it is accepted, 1e-3 |a| below it refused."""
    a = np.asarray([1.0, -2.0, 0.5])
    touch = float(domain.min_linear(a[None])[0])
    ok = _problem(domain=domain, constraint_data=sequences.Fixed((jnp.asarray(a), touch)))
    validate(ok, 5)
    far = touch - 1e-3 * np.linalg.norm(a)
    bad = _problem(domain=domain, constraint_data=sequences.Fixed((jnp.asarray(a), far)))
    with pytest.raises(ValueError, match="offline problem is infeasible"):
        validate(bad, 5)


def test_non_finite_data():
    theta = np.ones((5, D))
    theta[2, 1] = np.nan
    with pytest.raises(ValueError, match="replayed data must be finite"):
        _problem(loss_data=sequences.Replay(theta))
    with pytest.raises(ValueError, match="constraint data must be finite"):
        simulate.run(
            _problem(constraint_data=sequences.Fixed((A.at[0].set(jnp.inf), jnp.asarray(0.3)))),
            5,
            Hyper(**GOOD),
        )


def test_replay_shorter_than_horizon():
    with pytest.raises(ValueError, match=r"T must lie in \[1, 5\]"):
        simulate.run(_problem(loss_data=sequences.Replay(np.ones((5, D)))), 6, Hyper(**GOOD))


def test_replayed_directions_wrong_shape():
    with pytest.raises(ValueError, match=r"directions must have shape \(T, d\)"):
        simulate.run(_problem(), 5, Hyper(**GOOD), directions=np.ones((4, D)) / np.sqrt(D))


def test_replayed_directions_not_unit():
    with pytest.raises(ValueError, match="directions must be unit vectors"):
        simulate.run(_problem(), 5, Hyper(**GOOD), directions=np.ones((5, D)))


def test_replayed_directions_leave_simplex_hull():
    prob = _problem(domain=sets.Simplex(D), constraint_data=sequences.Fixed((A, jnp.asarray(1.0))))
    u = np.zeros((5, D))
    u[:, 0] = 1.0
    with pytest.raises(ValueError, match="sum u = 0"):
        simulate.run(prob, 5, Hyper(**{**GOOD, "delta": 0.01}), directions=u)


def test_xi_from_delta_too_large():
    with pytest.raises(ValueError, match=r"xi = delta / r .* must lie in \(0, 1\)"):
        theorem_defaults(sets.L2Ball(jnp.zeros(D), 0.1), 5, delta=0.5)


def test_float64_without_x64():
    """The users' default configuration (the suite's): 64-bit JAX off."""
    with pytest.raises(ValueError, match="dtype float64 needs 64-bit JAX"):
        simulate.run(_problem(), 5, Hyper(**GOOD), dtype="float64")


class _DriftingFixed(sequences.Fixed):
    """A user's subclass of Fixed whose sample drifts: b_t = 0.2 - 0.4 t / 20.  It does not
    redeclare ``constant``, so it is not constant (issue 57: the inherited declaration was
    trusted, x* solved for round 1's b alone and certified, violating later rounds by 0.4)."""

    def sample(self, key, t):
        a, b = self.value
        return a, b - 0.4 * t / 20


def test_a_subclass_that_draws_its_data_declares_its_structure_itself():
    seq = _DriftingFixed((A, jnp.asarray(0.2)))
    assert not seq.constant and not seq.shared and seq.recorded(20) is None
    assert sequences.Fixed.constant  # the parent's declaration is untouched
    # drawn time-varying data: x* is refused, naming the data, not solved for round 1 alone
    with pytest.raises(ValueError, match="comparator=True: .* got Linear with _DriftingFixed"):
        simulate.sweep(_problem(constraint_data=seq), 20, Hyper(**GOOD), seeds=2)
    res = simulate.sweep(
        _problem(constraint_data=seq), 20, Hyper(**GOOD), seeds=2, comparator=False
    )
    assert not res.failed.any() and np.all(np.isfinite(res.hard_violation))
