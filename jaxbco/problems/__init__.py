"""Named problem instances: a registry feeding the CLI, the comparisons and the tests.

Each entry of ``PROBLEMS`` (name ↦ builder) builds a ``Problem`` for a dimension d (where the
instance allows); its ``strongly_convex`` flag says whether the Theorem 3-4 schedule is the
one to run on it.  A researcher's own problem is registered the same way
(``register("my-problem", builder)``) or named on any command as ``mypkg.problems:my_problem``
(a ``Problem`` or a function returning one, taking ``dim`` and ``horizon`` if it uses them);
installed packages may publish problems by entry point (group ``jaxbco.problems``).  ``make``
resolves all of them.

Example:
    >>> from jaxbco import problems
    >>> problem = problems.make("quadratic-ball", dim=4)
    >>> problem.dim, problem.strongly_convex
    (4, False)
    >>> "hutchinson-toy" in problems.names()
    True
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from jaxbco import constraints as C
from jaxbco import losses as L
from jaxbco import published, sets
from jaxbco import sequences as Seq
from jaxbco.data import portfolio
from jaxbco.problem import Problem
from jaxbco.problems.registry import MAX_DIM as MAX_DIM
from jaxbco.problems.registry import PROBLEMS as PROBLEMS
from jaxbco.problems.registry import Record as Record
from jaxbco.problems.registry import check as check
from jaxbco.problems.registry import make as make
from jaxbco.problems.registry import names as names
from jaxbco.problems.registry import register as register
from jaxbco.problems.registry import unregister as unregister


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
    a = jnp.ones(dim) / np.sqrt(dim)
    problem = Problem(
        domain=sets.L2Ball(jnp.zeros(dim), 1.0),
        loss=L.Quadratic(),
        loss_data=Seq.IIDNormal(0.6 * a, jnp.full(dim, 0.1)),
        constraint=C.Linear(),
        constraint_data=Seq.Fixed((a, jnp.asarray(0.3))),
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
    a = jnp.ones(dim) / np.sqrt(dim)
    problem = quadratic_ball(dim)
    problem = Problem(
        problem.domain,
        problem.loss,
        problem.loss_data,
        C.Shifted(C.Linear()),
        Seq.Slackened((a, jnp.asarray(0.3)), 0.0, 0.2),
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
    w_true = jnp.ones(dim) * 3.0 / np.sqrt(dim)
    problem = Problem(
        domain=sets.L2Ball(jnp.zeros(dim), 5.0),
        loss=L.Logistic(),
        loss_data=Seq.Classification(w_true, 0.5),
        constraint=C.Ball(),
        constraint_data=Seq.Fixed((jnp.zeros(dim), jnp.asarray(4.0))),
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
    e = jnp.zeros(dim).at[0].set(1.0).at[1].set(1.0)
    problem = Problem(
        domain=sets.Simplex(dim),
        loss=L.Quadratic(),
        loss_data=Seq.IIDUniform(
            jnp.zeros(dim).at[0].set(0.3), jnp.full(dim, 2.0 / dim).at[0].set(0.6)
        ),
        constraint=C.Linear(),
        constraint_data=Seq.Fixed((e, jnp.asarray(0.1))),
    )
    return problem


def _fixed_dim(name: str, dim, required: int) -> None:
    if dim is not None and dim != required:
        raise ValueError(
            f"{name} is {required}-dimensional: dim (--dim) must be {required} or "
            f"left out; got {dim!r}"
        )


def yu_neely(dim: int | None = None, horizon: int | None = None) -> Problem:
    """Yu & Neely (2020)'s 2-D example: X = [−1, 1]², g(x) = maxᵢ (Ax − b)ᵢ, fₜ(x) = ⟨cₜ, x⟩.

    A ~ U(0, 1)^(3×2), b ~ U(0, 2)³ drawn once (NumPy seed 2020); cₜ = c1 + c2 + c3 of
    ``published.YuNeelyCost`` (T = 5000 as published; another horizon rescales the c2 windows
    and draws a permutation of that length).

    Args:
        dim: the dimension; must be 2 or None.
        horizon: the horizon T the c2 windows and signs are built for (default 5000).

    Returns:
        The ``Problem``.
    Raises:
        ValueError: if ``dim`` is given and is not 2.

    Example:
        >>> from jaxbco import problems
        >>> p = problems.yu_neely()
        >>> type(p.domain).__name__, p.dim
        ('Box', 2)
    """
    _fixed_dim("yu-neely", dim, 2)
    horizon = published.YU_NEELY_T if horizon is None else horizon
    rng = np.random.default_rng(2020)
    A = rng.uniform(0.0, 1.0, (3, 2))
    b = rng.uniform(0.0, 2.0, 3)
    return Problem(
        domain=sets.Box(-jnp.ones(2), jnp.ones(2)),
        loss=L.Linear(),
        loss_data=published.YuNeelyCost(
            jnp.asarray(published.yu_neely_signs(horizon)), published.yu_neely_windows(horizon)
        ),
        constraint=C.MultiLinear(),
        constraint_data=Seq.Fixed((jnp.asarray(A), jnp.asarray(b))),
    )


def hutchinson_toy(dim: int | None = None, horizon: int | None = None) -> Problem:
    """Hutchinson & Alizadeh (ICML 2025)'s toy: X the unit disk, fₜ = 3‖x − θₜ‖₂², θₜ ~ U(−1, 0)².

    |xᵢ| ≤ 0.5 as four linear rows (g = maxᵢ (Ax − b)ᵢ, A = [I; −I], b = 0.5).  6-strongly
    convex: run with the Theorem 3 schedule of Hikima (2023) (σ = 6).

    Args:
        dim: the dimension; must be 2 or None.
        horizon: unused (every horizon builds the same instance).

    Returns:
        The ``Problem``.
    Raises:
        ValueError: if ``dim`` is given and is not 2.

    Example:
        >>> from jaxbco import problems
        >>> p = problems.hutchinson_toy()
        >>> p.dim, p.strongly_convex
        (2, True)
    """
    _fixed_dim("hutchinson-toy", dim, 2)
    eye = jnp.eye(2)
    problem = Problem(
        domain=sets.L2Ball(jnp.zeros(2), 1.0),
        loss=L.Quadratic(scale=3.0),
        loss_data=Seq.IIDUniform(-jnp.ones(2), jnp.zeros(2)),
        constraint=C.MultiLinear(),
        constraint_data=Seq.Fixed((jnp.concatenate([eye, -eye]), jnp.full(4, 0.5))),
        strongly_convex=True,
    )
    return problem


def online_logistic(dim: int | None = None, horizon: int | None = None) -> Problem:
    """Online logistic regression with a norm constraint (the published d = 20 instance).

    T = 50000 there: X = {‖w‖₂ ≤ R₀ = 5} (L2Ball), g(w) = ‖w‖₂² − B² with B = 2
    (``constraints.Ball``), Logistic loss on the ``Classification`` stream with a true
    classifier of norm 3 (fixed random direction, NumPy seed 2018) and label noise 0.5, so
    the bound B binds.

    Args:
        dim: the dimension d (default 20).
        horizon: unused (every horizon builds the same instance).

    Returns:
        The ``Problem``.

    Example:
        >>> from jaxbco import problems
        >>> p = problems.online_logistic()
        >>> type(p.constraint).__name__, p.dim
        ('Ball', 20)
    """
    dim = 20 if dim is None else dim
    rng = np.random.default_rng(2018)
    w = rng.normal(size=dim)
    problem = Problem(
        domain=sets.L2Ball(jnp.zeros(dim), 5.0),
        loss=L.Logistic(),
        loss_data=Seq.Classification(jnp.asarray(3.0 * w / np.linalg.norm(w)), 0.5),
        constraint=C.Ball(),
        constraint_data=Seq.Fixed((jnp.zeros(dim), jnp.asarray(4.0))),
    )
    return problem


def _portfolio(name: str):
    def build(dim: int | None = None, horizon: int | None = None) -> Problem:
        return portfolio.build(name, dim=dim, horizon=horizon)

    build.__doc__ = (
        f"Portfolio selection on the {name} prices with the risk constraint "
        f"xᵀΣₜx ≤ ρ (see ``jaxbco.data.portfolio``); ``dim`` keeps the "
        f"first dim assets, ``horizon`` the first T rounds."
    )
    return build


for _name, _builder in (
    ("quadratic-ball", quadratic_ball),
    ("strongly-convex-ball", strongly_convex_ball),
    ("time-varying-ball", time_varying_ball),
    ("strongly-convex-time-varying", strongly_convex_time_varying),
):
    register(_name, _builder)
register("switching-box", switching_box, min_dim=2)
register("logistic-ball", logistic_ball)
register("simplex-quadratic", portfolio_simplex, min_dim=2)
register("yu-neely", yu_neely, takes_horizon=True, min_dim=None)
register("hutchinson-toy", hutchinson_toy, min_dim=None)
register("online-logistic", online_logistic)
register("nyse-portfolio", _portfolio("nyse_o"), takes_horizon=True, min_dim=2)
for _name in ("nyse_o", "nyse_n", "djia", "sp500", "tse", "msci"):
    register(f"portfolio:{_name}", _portfolio(_name), takes_horizon=True, min_dim=2)
