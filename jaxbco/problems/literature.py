"""The published instances: the examples of Yu & Neely (2020), Hutchinson & Alizadeh (2025)
and the online logistic regression of the literature, and the portfolio-selection builders on
the published price data (``jaxbco.data.portfolio``)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbco import constraints as C
from jaxbco import losses as L
from jaxbco import published, sets
from jaxbco import sequences as Seq
from jaxbco.data import portfolio
from jaxbco.problem import Problem


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
