"""The synthetic problem instances of this study: quadratic, linear and logistic losses on a
ball, a box or the simplex, with fixed or time-varying constraints (``quadratic-ball`` ...
``simplex-quadratic``)."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from jaxbco import constraints as C
from jaxbco import losses as L
from jaxbco import sequences as Seq
from jaxbco import sets
from jaxbco.problem import Problem


def _float():
    """The default floating dtype (float32, float64 under 64-bit JAX) as a NumPy dtype: the
    instances' constants are built in NumPy with JAX's arithmetic in it, bitwise as ``jnp``
    builds them, without compiling a program per operation."""
    return np.dtype(jnp.result_type(float))


def quadratic_ball(dim: int = 10) -> Problem:
    """The main study: fₜ = ‖x − θₜ‖₂², θₜ ~ N(θ₀, 0.1² I), ‖θ₀‖ = 0.6, on the unit L2 ball.

    One fixed constraint ⟨a, x⟩ ≤ 0.3, a = 1/√d, cuts off the unconstrained optimum θ₀
    (⟨a, θ₀⟩ = 0.6).

    Args:
        dim: the dimension d.

    Returns:
        The ``Problem``.

    Example:
        >>> from jaxbco import problems
        >>> p = problems.quadratic_ball(4)
        >>> type(p.domain).__name__, p.dim
        ('L2Ball', 4)
    """
    F = _float()
    a = np.ones(dim, F) / F.type(np.sqrt(dim))
    problem = Problem(
        domain=sets.L2Ball(np.zeros(dim, F), 1.0),
        loss=L.Quadratic(),
        loss_data=Seq.IIDNormal(0.6 * a, np.full(dim, 0.1, F)),
        constraint=C.Linear(),
        constraint_data=Seq.Fixed((a, np.asarray(0.3, F))),
    )
    return problem


def strongly_convex_ball(dim: int = 10) -> Problem:
    """As ``quadratic-ball`` with the Theorem 3 schedule αₜ = σt (σ = 2) of Hikima (2023).

    Args:
        dim: the dimension d.

    Returns:
        The ``Problem``.

    Example:
        >>> from jaxbco import problems
        >>> problems.strongly_convex_ball(4).strongly_convex
        True
    """
    return dataclasses.replace(quadratic_ball(dim), strongly_convex=True)


def time_varying_ball(dim: int = 10) -> Problem:
    """``quadratic-ball`` with gₜ(x) = ⟨a, x⟩ − 0.3 − sₜ, sₜ ~ U[0, 0.2] (Theorem 2 setting).

    Every x with ⟨a, x⟩ ≤ 0.3 is feasible in every round.

    Args:
        dim: the dimension d.

    Returns:
        The ``Problem``.

    Example:
        >>> from jaxbco import problems
        >>> type(problems.time_varying_ball(4).constraint).__name__
        'Shifted'
    """
    F = _float()
    a = np.ones(dim, F) / F.type(np.sqrt(dim))
    problem = quadratic_ball(dim)
    problem = Problem(
        problem.domain,
        problem.loss,
        problem.loss_data,
        C.Shifted(C.Linear()),
        Seq.Slackened((a, np.asarray(0.3, F)), 0.0, 0.2),
    )
    return problem


def strongly_convex_time_varying(dim: int = 10) -> Problem:
    """``time-varying-ball`` with the strongly convex schedule αₜ = σt (σ = 2).

    fₜ = ‖x − θₜ‖₂²: the Theorem 4 setting of Hikima (2023) (strongly convex f, time-varying g).

    Args:
        dim: the dimension d.

    Returns:
        The ``Problem``.

    Example:
        >>> from jaxbco import problems
        >>> problems.strongly_convex_time_varying(4).strongly_convex
        True
    """
    return dataclasses.replace(time_varying_ball(dim), strongly_convex=True)


def switching_box(dim: int = 10) -> Problem:
    """Linear losses whose mean switches sign every 2500 rounds (T/4 at T = 10⁴), on [−1, 1]ᵈ.

    Two fixed linear constraints g = max(x₁ + x₂ − 1, −x₁ − x₂ − 1) (a slab).

    Args:
        dim: the dimension d ≥ 2.

    Returns:
        The ``Problem``.

    Example:
        >>> from jaxbco import problems
        >>> type(problems.switching_box(4).domain).__name__
        'Box'
    """
    base = jnp.linspace(1.0, -1.0, dim)
    means = jnp.stack([base, -base, base, -base])
    e12 = jnp.zeros(dim).at[0].set(1.0).at[1].set(1.0)  # e_1 + e_2
    problem = Problem(
        domain=sets.Box(-jnp.ones(dim), jnp.ones(dim)),
        loss=L.Linear(),
        loss_data=Seq.Switching(means, jnp.asarray([2500, 5000, 7500]), 0.5),
        constraint=C.MultiLinear(),
        constraint_data=Seq.Fixed((jnp.stack([e12, -e12]), jnp.ones(2))),
    )
    return problem


def logistic_ball(dim: int = 20) -> Problem:
    """Online logistic regression: (wₜ, yₜ) from a noisy linear classifier.

    ‖x‖₂ ≤ 5 as X and ‖x‖₂² ≤ 4 (a second norm bound, ``constraints.Ball``).

    Args:
        dim: the dimension d.

    Returns:
        The ``Problem``.

    Example:
        >>> from jaxbco import problems
        >>> type(problems.logistic_ball(4).loss).__name__
        'Logistic'
    """
    F = _float()
    w_true = jnp.ones(dim) * 3.0 / np.sqrt(dim)  # XLA's division: not NumPy's to the bit
    problem = Problem(
        domain=sets.L2Ball(np.zeros(dim, F), 5.0),
        loss=L.Logistic(),
        loss_data=Seq.Classification(w_true, 0.5),
        constraint=C.Ball(),
        constraint_data=Seq.Fixed((np.zeros(dim, F), np.asarray(4.0, F))),
    )
    return problem


def portfolio_simplex(dim: int = 10) -> Problem:
    """A synthetic simplex instance: fₜ = ‖x − θₜ‖₂² on the probability simplex.

    θₜ ~ U[0, 2/d] coordinate-wise (θₜ,₁ ~ U[0.3, 0.6]), with a concentration cap
    x₁ + x₂ ≤ 0.1.

    Args:
        dim: the number of assets d ≥ 2.

    Returns:
        The ``Problem``.

    Example:
        >>> from jaxbco import problems
        >>> type(problems.portfolio_simplex(4).domain).__name__
        'Simplex'
    """
    F = _float()
    e, low, high = np.zeros(dim, F), np.zeros(dim, F), np.full(dim, 2.0 / dim, F)
    e[:2], low[0], high[0] = 1.0, 0.3, 0.6
    problem = Problem(
        domain=sets.Simplex(dim),
        loss=L.Quadratic(),
        loss_data=Seq.IIDUniform(low, high),
        constraint=C.Linear(),
        constraint_data=Seq.Fixed((e, np.asarray(0.1, F))),
    )
    return problem
