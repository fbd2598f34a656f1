"""Named problem instances: a registry feeding the CLI and the tests.

Each entry builds ``(problem, strongly_convex)`` for a dimension d (where the instance allows).
"""

from __future__ import annotations

from typing import Callable

import jax.numpy as jnp
import numpy as np

from jaxbco import constraints as C
from jaxbco import losses as L
from jaxbco import sequences as Seq
from jaxbco import sets
from jaxbco.problem import Problem


def quadratic_ball(dim: int = 10) -> tuple[Problem, bool]:
    """The main study: f_t = ||x - theta_t||^2, theta_t ~ N(theta0, 0.1^2 I), ||theta0|| = 0.6;
    X the unit L2 ball; one fixed constraint <1/sqrt(d), x> <= 0.3 that cuts off the
    unconstrained optimum theta0 (<a, theta0> = 0.6)."""
    a = jnp.ones(dim) / np.sqrt(dim)
    problem = Problem(
        domain=sets.L2Ball(jnp.zeros(dim), 1.0),
        loss=L.Quadratic(),
        loss_data=Seq.IIDNormal(0.6 * a, jnp.full(dim, 0.1)),
        constraint=C.Linear(),
        constraint_data=Seq.Fixed((a, jnp.asarray(0.3))),
    )
    return problem, False


def strongly_convex_ball(dim: int = 10) -> tuple[Problem, bool]:
    """As ``quadratic-ball`` with the Theorem 3 schedule alpha_t = sigma t (sigma = 2)."""
    problem, _ = quadratic_ball(dim)
    return problem, True


def time_varying_ball(dim: int = 10) -> tuple[Problem, bool]:
    """``quadratic-ball`` with g_t(x) = <a, x> - 0.3 - s_t, s_t ~ U[0, 0.2] (Theorem 2 setting);
    every x with <a, x> <= 0.3 is feasible in every round."""
    a = jnp.ones(dim) / np.sqrt(dim)
    problem, _ = quadratic_ball(dim)
    problem = Problem(problem.domain, problem.loss, problem.loss_data, C.Shifted(C.Linear()),
                      Seq.Slackened((a, jnp.asarray(0.3)), 0.0, 0.2))
    return problem, False


def switching_box(dim: int = 10) -> tuple[Problem, bool]:
    """Linear losses whose mean switches sign every T/4 rounds (adversarial-style), on [-1, 1]^d,
    with two fixed linear constraints g = max(x_1 + x_2 - 1, -x_1 - x_2 - 1) (a slab)."""
    base = jnp.linspace(1.0, -1.0, dim)
    means = jnp.stack([base, -base, base, -base])
    problem = Problem(
        domain=sets.Box(-jnp.ones(dim), jnp.ones(dim)),
        loss=L.Linear(),
        loss_data=Seq.Switching(means, jnp.asarray([2500, 5000, 7500]), 0.5),
        constraint=C.MultiLinear(),
        constraint_data=Seq.Fixed((jnp.stack([jnp.eye(dim)[0] + jnp.eye(dim)[1],
                                              -(jnp.eye(dim)[0] + jnp.eye(dim)[1])]),
                                   jnp.ones(2))),
    )
    return problem, False


def logistic_ball(dim: int = 20) -> tuple[Problem, bool]:
    """Online logistic regression: (w_t, y_t) from a noisy linear classifier, ||x|| <= 5 as X
    and ||x||^2 <= 4 (a second norm bound, as an ellipsoid constraint)."""
    w_true = jnp.ones(dim) * 3.0 / np.sqrt(dim)
    problem = Problem(
        domain=sets.L2Ball(jnp.zeros(dim), 5.0),
        loss=L.Logistic(),
        loss_data=Seq.Classification(w_true, 0.5),
        constraint=C.Ellipsoid(),
        constraint_data=Seq.Fixed((jnp.eye(dim), jnp.zeros(dim), jnp.asarray(4.0))),
    )
    return problem, False


def portfolio_simplex(dim: int = 10) -> tuple[Problem, bool]:
    """A synthetic simplex instance: f_t = ||x - theta_t||^2, theta_t ~ U[0, 2/d], on the
    probability simplex, with a concentration cap x_1 + x_2 <= 0.1."""
    e = jnp.zeros(dim).at[0].set(1.0).at[1].set(1.0)
    problem = Problem(
        domain=sets.Simplex(dim),
        loss=L.Quadratic(),
        loss_data=Seq.IIDUniform(jnp.zeros(dim).at[0].set(0.3), jnp.full(dim, 2.0 / dim).at[0].set(0.6)),
        constraint=C.Linear(),
        constraint_data=Seq.Fixed((e, jnp.asarray(0.1))),
    )
    return problem, False


PROBLEMS: dict[str, Callable[..., tuple[Problem, bool]]] = {
    "quadratic-ball": quadratic_ball,
    "strongly-convex-ball": strongly_convex_ball,
    "time-varying-ball": time_varying_ball,
    "switching-box": switching_box,
    "logistic-ball": logistic_ball,
    "simplex-quadratic": portfolio_simplex,
}


def make(name: str, dim: int | None = None) -> tuple[Problem, bool]:
    """Build a registered problem; ValueError names the choices for an unknown name."""
    if name not in PROBLEMS:
        raise ValueError(f"unknown problem {name!r}; choose one of: {', '.join(PROBLEMS)}")
    return PROBLEMS[name]() if dim is None else PROBLEMS[name](dim)
