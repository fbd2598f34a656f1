"""Pieces the baselines share: the gradient oracle (two-point estimate or jax.grad), the set
they project onto, and the static test for a constraint known in advance."""

from __future__ import annotations

import jax.numpy as jnp

from jaxbco import _checks, _ops
from jaxbco.algorithms.rectified_bco import two_point_gradient
from jaxbco.hyper import check_against_domain
from jaxbco.sequences import Fixed
from jaxbco.sets import project_shrunk
from jaxbco.solvers.dual import Dual, project_feasible


def is_fixed(problem) -> bool:
    """True when g is the same every round (a static, Python-level check)."""
    return isinstance(problem.constraint_data, Fixed)


def fixed_phi(problem):
    """The fixed constraint's data (None when g varies over rounds)."""
    return problem.constraint_data.value if is_fixed(problem) else None


def known_set_projector(problem, xi, phi):
    """z -> Pi_{(1-xi)X n {g <= 0}}(z) when g is fixed (known in advance; ``phi`` its data),
    else z -> Pi_{(1-xi)X}(z): the set a projection-only bandit method can use."""
    if is_fixed(problem):
        return lambda z: project_feasible(problem.domain, xi, problem.constraint, phi, z)
    return lambda z: project_shrunk(problem.domain, z, xi)


def oracle_methods(problem, knows_constraint: bool) -> tuple:
    """The prox method ``known_set_projector`` calls (``AbstractAlgorithm.prox_methods``)."""
    if knows_constraint and is_fixed(problem):
        return (Dual.method(problem.domain, problem.constraint),)
    return ()


def projector(problem, xi, phi, knows_constraint: bool):
    """``known_set_projector`` for an algorithm given g in advance, else z -> Pi_{(1-xi)X}(z)."""
    if knows_constraint:
        return known_set_projector(problem, xi, phi)
    return lambda z: project_shrunk(problem.domain, z, xi)


def projection_warm(problem, dtype, knows_constraint: bool):
    """The state ``warm_projector`` carries between rounds: the projection's multiplier where
    its method keeps one (several halfspaces: ``Dual.init_warm``), else ()."""
    if knows_constraint and is_fixed(problem):
        return Dual().init_warm(problem, dtype)
    return ()


def warm_projector(problem, xi, phi, knows_constraint: bool):
    """``projector`` as (z, warm) -> (x, warm'): the projection onto a fixed g started from
    last round's multiplier (``projection_warm``; consecutive projections differ little, so the
    dual Newton takes a step or two instead of a cold ascent)."""
    if knows_constraint and is_fixed(problem):
        return lambda z, warm: project_feasible(problem.domain, xi, problem.constraint, phi, z, warm)
    plain = projector(problem, xi, phi, knows_constraint)
    return lambda z, warm: (plain(z), warm)


def loss_gradient(problem, theta, x, u, delta, bandit: bool):
    """Two-point estimate d/(2 delta) [f(x + delta u) - f(x - delta u)] u (Eq. 4 of the paper,
    Agarwal et al. 2010) when ``bandit``, else the true gradient jax.grad(f)(x)."""
    if bandit:
        d_hull = jnp.asarray(problem.domain.hull_dim, x.dtype)
        return two_point_gradient(problem.loss, theta, x, u, delta, d_hull)
    return _ops.value_and_grad(lambda z: problem.loss.value(z, theta), x)[1]


def project(domain, x, xi, bandit: bool):
    """Pi_{(1-xi)X}(x) when ``bandit`` (so that x +- delta u stays in X), else Pi_X(x)."""
    return project_shrunk(domain, x, xi) if bandit else domain.project(x)


def constraint_value_and_grad(problem, x, phi):
    """(g(x, phi), grad_x g(x, phi)) by a VJP (a subgradient where g = max of rows); one run
    or a seeds-minor block."""
    return _ops.value_and_grad(lambda z: problem.constraint.value(z, phi), x)


def rowwise(constraint) -> bool:
    """Whether the family is linear rows (each row one constraint g_k of the paper)."""
    return constraint.kind in ("linear", "polyhedral")


def constraint_rows(problem, x, phi):
    """(g_k(x))_k and the rows grad g_k(x) (shape (m,), (m, d)): the rows A x - b and A of a
    linear or polyhedral family, else the one smooth g and jax.grad of it."""
    if rowwise(problem.constraint):
        A, b = problem.constraint.rows(phi)
        A = jnp.asarray(A, x.dtype)
        return jnp.sum(A * x[None], axis=1) - jnp.asarray(b, x.dtype), A  # one run or a block
    g, grad = constraint_value_and_grad(problem, x, phi)
    return g[None], grad[None]


def check_type(name: str, hyper, cls) -> None:
    if not isinstance(hyper, cls):
        raise ValueError(f"{name} needs {cls.__name__} hyperparameters; got {type(hyper).__name__}")


def check_perturbation(hyper, domain, bandit: bool = True) -> None:
    """delta in (0, xi r] so that the queried points stay in X (bandit variants only)."""
    if bandit:
        check_against_domain(hyper, domain)


def positive(name, value):
    _checks.check_range(name, value, low=0.0, low_open=True)


def unit_open(name, value):
    _checks.check_range(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


def shrinkage(domain, delta, what: str = "delta"):
    """xi = delta / r (the smallest admissible shrinkage), with a clear error if it is >= 1."""
    _, r = domain.inscribed_ball()
    xi = float(delta) / float(r)
    if xi >= 1.0:
        raise ValueError(f"xi = {what} / r = {xi:g} must lie in (0, 1); choose a smaller {what} "
                         f"(the inscribed radius of X is r = {float(r):g})")
    return xi


def constants(problem, horizon: int) -> dict:
    """The problem's F, G, D, C (``jaxbco.constants.problem_constants``) for default step
    sizes: 2 seeds and at most 512 rounds of random data (replayed data: all rounds)."""
    from jaxbco.constants import problem_constants

    return problem_constants(problem, horizon, seeds=2, rounds=512)


def given_or(value, name: str, default: float) -> float:
    """A user's constant (checked > 0) or the problem's ``default``."""
    if value is None:
        return float(default)
    _checks.check_range(name, value, low=0.0, low_open=True)
    return float(value)
