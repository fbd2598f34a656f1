"""The offline comparator x* = argmin over x ∈ X of ∑ₜ fₜ(x) s.t. gₜ(x) ≤ 0 for all t (Eq. (1)).

A family of declared methods with one selector (lineax's pattern): each method is a final
``AbstractOfflineMethod`` (its reported ``name``, whether it runs before the compiled call,
whether x* streams from the run's sums, how it solves one seed), ``select`` picks one from the
problem's declarations, the dtype and the layout (``jaxbco.comparator.selector``'s table), and
what a run reports is the selected method's ``name``.  The region X ∩ C the methods minimise
over is ``jaxbco.offline.region``; the certificate of the result is ``jaxbco.certificate``.

Computed per seed inside the same compiled call as the run (``offline_optimum``, ``optima``),
regenerating round t's data from the round's key, so nothing of size T is stored; for a
quadratic or linear loss with a fixed constraint the run itself keeps the sums x* needs
(``streams``, ``stream_optima``), so the data are generated once.  Portfolio problems get their
seed-independent x* on the host before the call (``fixed_optimum``).

Example:
    >>> from jaxbco import comparator, problems
    >>> comparator.comparator_method(problems.make("quadratic-ball", dim=3), 100)
    'projection of the mean theta (quadratic)'
"""

from __future__ import annotations

from jaxbco._src.prng import KeyBlock
from jaxbco.comparator._base import AbstractMeanThetaMethod as AbstractMeanThetaMethod
from jaxbco.comparator._base import AbstractOfflineMethod as AbstractOfflineMethod
from jaxbco.comparator.mean_theta import BarrierEveryRound as BarrierEveryRound
from jaxbco.comparator.mean_theta import BarrierLP as BarrierLP
from jaxbco.comparator.mean_theta import BarrierRows as BarrierRows
from jaxbco.comparator.mean_theta import MeanProjection as MeanProjection
from jaxbco.comparator.mean_theta import ProximalPoint as ProximalPoint
from jaxbco.comparator.newton import NEWTON_PASSES as NEWTON_PASSES
from jaxbco.comparator.newton import ProjectedNewton as ProjectedNewton
from jaxbco.comparator.optimum import Optimum as Optimum
from jaxbco.comparator.portfolio import CRPInteriorPoint as CRPInteriorPoint
from jaxbco.comparator.selector import select as select
from jaxbco.comparator.smooth import FISTA as FISTA
from jaxbco.comparator.smooth import SmoothedAbsolute as SmoothedAbsolute
from jaxbco.comparator.streaming import stream_cuts as stream_cuts
from jaxbco.comparator.streaming import stream_star as stream_star
from jaxbco.comparator.streaming import stream_stats as stream_stats
from jaxbco.comparator.streaming import streams as streams
from jaxbco.comparator.two_paths import TwoPaths as TwoPaths
from jaxbco.offline import region


def require(problem, horizon: int, blocks: bool = False) -> AbstractOfflineMethod:
    """``select``'s method, or NotImplementedError saying why the problem has none
    (``region.unsupported``)."""
    method = select(problem, horizon, blocks=blocks)
    if method is None:
        raise NotImplementedError(region.unsupported(problem))
    return method


def check_supported(problem, horizon: int) -> None:
    """ValueError, before anything compiles, when the problem has no comparator (``select``
    finds no method; ``region.unsupported`` says why)."""
    if select(problem, horizon) is None:
        raise ValueError(f"comparator=True: {region.unsupported(problem)}")


def offline_optimum(problem, seed_key, horizon: int):
    """The comparator x* of Eq. (1) for one seed, inside the compiled call, by the selected
    method (``select``).

    Args:
        problem: the ``Problem``.
        seed_key: the seed's key (vmap over seed keys for a batch), or a ``KeyBlock`` of
            seeds with the problem laid out for blocks.
        horizon: T; round t's data are regenerated from the seed's round keys.

    Returns:
        x*, (d,) (or (d, seeds) for a ``KeyBlock``).

    Example:
        >>> import jax
        >>> from jaxbco import comparator, problems
        >>> from jaxbco.keys import seed_keys
        >>> key = seed_keys(jax.random.key(0), jax.numpy.arange(1, dtype="uint32"))[0]
        >>> comparator.offline_optimum(problems.make("quadratic-ball", dim=3), key, 50).shape
        (3,)
    """
    blocks = isinstance(seed_key, KeyBlock)
    return require(problem, horizon, blocks).solve(problem, seed_key, horizon)


def optima(problem, seed_keys, horizon: int):
    """``offline_optimum`` of every seed of a batch: the selected method's ``solve_batch`` (for
    a user's g the second path only where some seed's x* fails its certificate, ``TwoPaths``);
    each seed's x* is ``offline_optimum``'s.

    Args:
        problem: the ``Problem``.
        seed_keys: (S,) the seeds' keys (``keys.seed_keys``).
        horizon: T.

    Returns:
        x*, (S, d).

    Example:
        >>> import jax
        >>> from jaxbco import comparator, problems
        >>> from jaxbco.keys import seed_keys
        >>> keys = seed_keys(jax.random.key(0), jax.numpy.arange(2, dtype="uint32"))
        >>> comparator.optima(problems.make("logistic-ball", dim=3), keys, 50).shape
        (2, 3)
    """
    return require(problem, horizon).solve_batch(problem, seed_keys, horizon)


def stream_optima(problem, sums, horizon: int):
    """x* of every seed of a batch from its sums over all T rounds (``stream_stats``;
    ``streams(problem)`` must hold), (S, d) from sums ((S, d), (S,))."""
    return require(problem, horizon).from_sums(problem, sums, horizon)


def fixed_optimum(problem, horizon: int):
    """x* computed on the host before the compiled call, where it is the same for every seed
    (a method with ``outside``: portfolio selection's best constrained CRP).

    Args:
        problem: the ``Problem``.
        horizon: T.

    Returns:
        x*, (d,), for such a problem; None for every other problem (``offline_optimum``
        runs inside the call).

    Example:
        >>> from jaxbco import comparator, problems
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> comparator.fixed_optimum(problem, 100) is None   # x* is solved inside the call
        True
    """
    method = select(problem, horizon)
    return method.fixed(problem, horizon) if method is not None and method.outside else None


def has_comparator(problem, horizon: int) -> bool:
    """Whether x* is available (``select`` finds a method; nothing is traced)."""
    return select(problem, horizon) is not None


def comparator_method(problem, horizon: int, dtype=None) -> str:
    """How x* is found on ``problem``: the selected method's ``name``.

    Args:
        problem: the ``Problem``.
        horizon: T.
        dtype: the run's dtype (None: the problem's own).

    Returns:
        The method's name; "none" where x* cannot be computed.

    Example:
        >>> from jaxbco import comparator, problems
        >>> comparator.comparator_method(problems.make("quadratic-ball", dim=3), 100)
        'projection of the mean theta (quadratic)'
    """
    method = select(problem, horizon, dtype=dtype)
    return "none" if method is None else method.name
