"""A problem: feasible set, loss family with its data sequence, constraint family with its data."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import _checks
from jaxbco.constraints import AbstractConstraint
from jaxbco.losses import AbstractLoss
from jaxbco.sequences import AbstractSequence, Fixed, Replay
from jaxbco.sets import AbstractSet


class Problem(eqx.Module):
    """f_t(x) = loss.value(x, theta_t), theta_t = loss_data.sample(key, t);
    g_t(x) = constraint.value(x, phi_t), phi_t = constraint_data.sample(key, t); x in X = domain.

    ``x1``: the initial decision (default: the centre of X's inscribed ball).
    ``strongly_convex``: run the strongly convex schedule of Theorems 3-4 (alpha_t = sigma t)
    on this problem (algorithms with such a schedule read it; ``problems.make`` sets it).
    """

    domain: AbstractSet
    loss: AbstractLoss
    loss_data: AbstractSequence
    constraint: AbstractConstraint
    constraint_data: AbstractSequence
    x1: jax.Array | None = None
    strongly_convex: bool = eqx.field(static=True, default=False)

    @property
    def dim(self) -> int:
        return self.domain.dim

    def initial_point(self):
        return self.domain.inscribed_ball()[0] if self.x1 is None else self.x1


def validate(problem: Problem, horizon: int) -> None:
    """Dimensions, finiteness, x1 in X and replay lengths, on concrete values; ValueError if not."""
    horizon = _checks.check_positive_int("horizon T", horizon)
    d = problem.dim
    key = jax.random.key(0)
    t1 = jnp.asarray(1, jnp.int32)
    theta = problem.loss_data.sample(key, t1)
    phi = problem.constraint_data.sample(key, t1)
    _checks.check_finite("loss data", theta)
    _checks.check_finite("constraint data", phi)
    for name, seq in (("loss_data", problem.loss_data), ("constraint_data", problem.constraint_data)):
        if isinstance(seq, Replay) and seq.length < horizon:
            raise ValueError(f"{name} replays {seq.length} rounds but the horizon T is {horizon}; "
                             f"T must lie in [1, {seq.length}]")
    x = jnp.zeros(d, dtype=jax.tree_util.tree_leaves(problem.domain)[0].dtype
                  if jax.tree_util.tree_leaves(problem.domain) else jnp.float32)
    try:
        f = problem.loss.value(x, theta)
    except (TypeError, ValueError) as err:
        raise ValueError(f"dimension mismatch between the loss data and the feasible set "
                         f"(dimension {d}): {err}") from None
    try:
        g = problem.constraint.value(x, phi)
    except (TypeError, ValueError) as err:
        raise ValueError(f"dimension mismatch between the constraint data and the feasible set "
                         f"(dimension {d}): {err}") from None
    if jnp.shape(f) != () or jnp.shape(g) != ():
        raise ValueError(f"dimension mismatch: the loss and constraint must return scalars on "
                         f"x in R^{d}; got shapes {jnp.shape(f)} and {jnp.shape(g)}")
    if problem.x1 is not None:
        _checks.check_dim("x1", problem.x1, d)
        _checks.check_finite("x1", problem.x1)
        x1 = np.asarray(problem.x1, float)
        dist = np.linalg.norm(np.asarray(problem.domain.project(jnp.asarray(problem.x1))) - x1)
        if dist > 1e-6 * (1 + np.linalg.norm(x1)):
            raise ValueError(f"x1 must lie in the feasible set X; it is {dist:.3g} away from X")
    if isinstance(problem.constraint_data, Fixed):
        _check_fixed_feasible(problem, phi)


def _check_fixed_feasible(problem, phi) -> None:
    """A fixed constraint must meet X: project X's centre onto X n {g <= 0} and check g there."""
    from jaxbco.solvers import Dual

    c, _ = problem.domain.inscribed_ball()
    big = jnp.asarray(1e12, c.dtype)
    x = Dual().solve(problem.domain, jnp.zeros((), c.dtype), problem.constraint, phi, c, c,
                     jnp.ones((), c.dtype), big)
    g = float(problem.constraint.value(x, phi))
    scale = 1e-4 if c.dtype == jnp.float32 else 1e-8
    if g > scale * (1 + float(problem.domain.diameter())):
        raise ValueError(f"the offline problem is infeasible: the constraint g(x) <= 0 does not meet "
                         f"the feasible set X (min over X of g is about {g:.3g} > 0)")
