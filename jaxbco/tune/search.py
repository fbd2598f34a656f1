"""Grid and random search over the same box in z (the baselines of gradient tuning): each is
one compiled call over all settings x training seeds; the best setting is evaluated on the
held-out seeds.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks
from jaxbco.tune.objective import Evaluation, _Context, _evaluation, heldout_ids, training_ids


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """What ``grid_search`` and ``random_search`` return.

    Attributes:
        Z: (G, k) the settings in z.
        values: name -> (G,) their values.
        train: (G,) J on the training seeds.
        best: the index of the lowest J.
        hyper: that setting (validated).
        heldout: its ``Evaluation`` on the held-out seeds (None when heldout=None).
        runs: G × seeds full runs.
        eval_runs: the runs of the held-out evaluation.
        wall_s: the one call over all settings, compile included.
        compile_s: the compile seconds within ``wall_s``.
        on_edge: the free hyperparameters whose best value lies on the edge of the search box
            (each with an ``EdgeWarning``).

    Example:
        >>> from jaxbco import problems, tune
        >>> res = tune.random_search(problems.make("quadratic-ball", 3), 50, free=("c",),
        ...                          samples=3, seeds=2, heldout=2)
        >>> res.values["c"].shape, res.train.shape, 0 <= res.best < 3
        ((3,), (3,), True)
        >>> float(res.hyper.c) == float(res.values["c"][res.best]), res.heldout.failed
        (True, 0)
    """

    Z: np.ndarray
    values: dict
    train: np.ndarray
    best: int
    hyper: Any
    heldout: Evaluation | None
    runs: int
    eval_runs: int
    wall_s: float
    compile_s: float
    on_edge: tuple = ()


class EdgeWarning(UserWarning):
    """The best setting of a search lies on the edge of its box (within ``EDGE`` of its width from
    a side): the optimum may lie outside it.

    Example:
        >>> import warnings
        >>> from jaxbco.tune.search import EdgeWarning
        >>> issubclass(EdgeWarning, UserWarning)   # a search's ``on_edge`` names the same
        True
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("error", EdgeWarning)   # make it an exception in this block
        ...     warnings.warn("c: the best value lies on the box's edge", EdgeWarning)
        Traceback (most recent call last):
        jaxbco.tune.search.EdgeWarning: c: the best value lies on the box's edge
    """


#: A coordinate within this fraction of the box's width from a side counts as on the edge
#: (a grid's outer points are exactly on it; a random search's best rarely is).
EDGE = 0.05


def _edges(ctx: _Context, z, box) -> tuple:
    """Names of the free hyperparameters whose ``z`` lies on the edge of ``box``, each with a
    one-line ``EdgeWarning``."""
    lo, hi = (np.asarray(b, np.float64) for b in box)
    width = hi - lo
    out = []
    value = ctx.space.decode(jnp.asarray(z, ctx.dtype))
    for i, name in enumerate(ctx.space.names):
        side = (
            "lower"
            if z[i] <= lo[i] + EDGE * width[i]
            else "upper"
            if z[i] >= hi[i] - EDGE * width[i]
            else None
        )
        if side is None:
            continue
        out.append(name)
        warnings.warn(
            f"the best {name} = {float(getattr(value, name)):.4g} lies on the {side} "
            f"edge of the search box: the optimum may lie outside it (widen "
            f"bounds={{{name!r}: (lo, hi)}} where {name}'s range allows)",
            EdgeWarning,
            stacklevel=4,
        )
    return tuple(out)


def _search(ctx: _Context, points, seeds: int, heldout: int | None) -> SearchResult:
    if heldout is not None:
        heldout = checks.check_positive_int(
            "heldout (the held-out seeds the best setting is judged on; None skips them)", heldout
        )
    """``points``: (Z, box) from ``_grid_points`` or ``_random_points``."""
    Z, box = points
    seeds = checks.check_positive_int("seeds", seeds)
    hyper = ctx.grid_of(Z)
    ids = jnp.asarray(training_ids(0, seeds, False), jnp.uint32)
    start = time.perf_counter()
    compiled = ctx._run.lower(hyper, ids).compile()
    compile_s = time.perf_counter() - start
    r, v, failed = jax.device_get(compiled(hyper, ids))
    wall = time.perf_counter() - start
    J = np.asarray(
        [_evaluation(r[i], v[i], failed[i], ctx.kappa, ctx.horizon).J for i in range(len(r))]
    )
    best = int(np.argmin(J))
    h = ctx.finalize(ctx.space.decode(jnp.asarray(Z[best], ctx.dtype)))
    ev = ctx.evaluate(ctx.stack([h]), heldout_ids(heldout))[0] if heldout is not None else None
    vals = jax.device_get(
        jax.vmap(lambda z: {n: getattr(ctx.space.decode(z), n) for n in ctx.space.names})(
            jnp.asarray(Z, ctx.dtype)
        )
    )
    return SearchResult(
        Z=np.asarray(Z),
        values={n: np.asarray(vals[n]) for n in ctx.space.names},
        train=J,
        best=best,
        hyper=h,
        heldout=ev,
        runs=len(Z) * seeds,
        eval_runs=heldout or 0,
        wall_s=wall,
        compile_s=compile_s,
        on_edge=_edges(ctx, np.asarray(Z[best], np.float64), box) if len(Z) > 1 else (),
    )


def _grid_points(ctx, points, bounds):
    points = checks.check_positive_int("points", points)
    lo, hi = ctx.space.box(bounds)
    axes = [np.linspace(a, b, points) for a, b in zip(lo, hi)]
    return np.stack([m.reshape(-1) for m in np.meshgrid(*axes, indexing="ij")], axis=-1), (lo, hi)


def _random_points(ctx, samples, bounds, search_key):
    samples = checks.check_positive_int("samples", samples)
    lo, hi = ctx.space.box(bounds)
    u = np.asarray(
        jax.random.uniform(jax.random.key(search_key), (samples, ctx.space.k)), np.float64
    )
    return lo + (hi - lo) * u, (lo, hi)


def grid_search(
    problem,
    horizon: int,
    *,
    algorithm=None,
    init=None,
    free=("c", "eps", "alpha_scale"),
    transforms=None,
    bounds: dict | None = None,
    points: int = 5,
    kappa: float = 1.0,
    seeds: int = 64,
    heldout: int = 64,
    key=0,
    dtype="float32",
) -> SearchResult:
    """Grid search: ``points`` values per free hyperparameter, evenly spaced in z over the search
    box, pointsᵏ settings × ``seeds`` training seeds in one compiled call; the best setting
    (lowest training J) is evaluated on the held-out seeds.

    Args:
        problem: the problem.
        horizon: the number of rounds T.
        algorithm: the algorithm (default ``RectifiedBCO()``).
        init: the hyperparameters the fixed ones are taken from (default: the algorithm's
            ``default_hyper``).
        free: the names of the hyperparameters searched.
        transforms: name -> ``Transform`` replacing the default map between z and the value.
        bounds: name -> (lo, hi) in value units (default: each ``Transform``'s box).
        points: values per free hyperparameter.
        kappa: κ ≥ 0 in J = R_T/T + κ·V_T/T.
        seeds: the training seeds.
        heldout: the held-out seeds the best setting is judged on (None skips them).
        key: the master key.
        dtype: "float32" or "float64".

    Returns:
        The ``SearchResult``.

    Raises:
        ValueError: an input out of range or an unknown free name.

    Example:
        >>> from jaxbco import problems, tune
        >>> res = tune.grid_search(problems.make("quadratic-ball", 3), 50, free=("c",), points=3,
        ...                        seeds=2, heldout=2)
        >>> res.Z.shape, res.runs   # 3 settings × 2 seeds
        ((3, 1), 6)
    """
    ctx = _Context(
        problem,
        horizon,
        algorithm=algorithm,
        init=init,
        free=free,
        transforms=transforms,
        kappa=kappa,
        key=key,
        dtype=dtype,
    )
    return _search(ctx, _grid_points(ctx, points, bounds), seeds, heldout)


def random_search(
    problem,
    horizon: int,
    *,
    algorithm=None,
    init=None,
    free=("c", "eps", "alpha_scale"),
    transforms=None,
    bounds: dict | None = None,
    samples: int = 125,
    kappa: float = 1.0,
    seeds: int = 64,
    heldout: int = 64,
    key=0,
    search_key: int = 1,
    dtype="float32",
) -> SearchResult:
    """Random search: ``samples`` settings drawn uniformly in z over the same box as
    ``grid_search``, × ``seeds`` training seeds in one compiled call; the best setting (lowest
    training J) is evaluated on the held-out seeds.

    Args:
        problem: the problem.
        horizon: the number of rounds T.
        algorithm: the algorithm (default ``RectifiedBCO()``).
        init: the hyperparameters the fixed ones are taken from (default: the algorithm's
            ``default_hyper``).
        free: the names of the hyperparameters searched.
        transforms: name -> ``Transform`` replacing the default map between z and the value.
        bounds: name -> (lo, hi) in value units (default: each ``Transform``'s box).
        samples: the number of settings drawn.
        kappa: κ ≥ 0 in J = R_T/T + κ·V_T/T.
        seeds: the training seeds.
        heldout: the held-out seeds the best setting is judged on (None skips them).
        key: the master key of the runs.
        search_key: the seed of the draw of the settings.
        dtype: "float32" or "float64".

    Returns:
        The ``SearchResult``.

    Raises:
        ValueError: an input out of range or an unknown free name.

    Example:
        >>> from jaxbco import problems, tune
        >>> res = tune.random_search(problems.make("quadratic-ball", 3), 50, free=("c",),
        ...                          samples=3, seeds=2, heldout=2)
        >>> res.Z.shape, res.runs
        ((3, 1), 6)
    """
    ctx = _Context(
        problem,
        horizon,
        algorithm=algorithm,
        init=init,
        free=free,
        transforms=transforms,
        kappa=kappa,
        key=key,
        dtype=dtype,
    )
    return _search(ctx, _random_points(ctx, samples, bounds, search_key), seeds, heldout)
