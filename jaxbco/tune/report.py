"""The comparison of tuning methods on the same held-out seeds (defaults, grid search, random
search, gradient tuning), paired differences of J and its Markdown table.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from jaxbco.algorithms import registry
from jaxbco.tune.gradient import _tune
from jaxbco.tune.objective import Evaluation, _Context, heldout_ids
from jaxbco.tune.search import _grid_points, _random_points, _search


class Row(NamedTuple):
    """One method: its held-out Evaluation, full runs and wall time (compile included;
    ``compile_s`` of it) of its search, and the free values it chose."""

    method: str
    heldout: Evaluation
    runs: int
    wall_s: float
    values: dict
    compile_s: float = 0.0


def compare_methods(
    problem,
    horizon: int,
    *,
    algorithm=None,
    init=None,
    free=("c", "eps", "alpha_scale"),
    transforms=None,
    bounds=None,
    kappa: float = 1.0,
    heldout: int = 256,
    search_seeds: int = 64,
    points: int = 5,
    samples: int | None = None,
    search_key: int = 1,
    key=0,
    dtype="float32",
    **tune_kwargs,
) -> list[Row]:
    """The tuning methods compared on the same held-out seeds: the defaults, grid search, random
    search and gradient tuning.

    The four settings are evaluated together in one call on ``heldout`` held-out seeds; each
    search runs on ``search_seeds`` training seeds.

    Args:
        problem: the problem.
        horizon: the number of rounds T.
        algorithm: the algorithm (default ``RectifiedBCO()``).
        init: the starting hyperparameters (default: the algorithm's ``default_hyper``).
        free: the names of the hyperparameters tuned.
        transforms: name -> ``Transform`` replacing the default map between z and the value.
        bounds: name -> (lo, hi), the search box in value units.
        kappa: κ ≥ 0 in J = R_T/T + κ·V_T/T.
        heldout: the held-out seeds.
        search_seeds: the training seeds of the grid and random searches.
        points: grid values per free hyperparameter.
        samples: random-search settings (default: as many as the grid).
        search_key: the seed of the random search's draw.
        key: the master key.
        dtype: "float32" or "float64".
        **tune_kwargs: options of ``tune`` (steps, seeds, mode, fresh_seeds, optimizer,
            smoothing, ...).

    Returns:
        One ``Row`` per method: its held-out ``Evaluation``, the full runs and wall time
        (compile included) of its search, and the values it chose.

    Example:
        >>> from jaxbco import problems, tune
        >>> rows = tune.compare_methods(problems.make("quadratic-ball", 3), 20, free=("c",),
        ...                             heldout=2, search_seeds=2, points=2, steps=1, seeds=2)
        >>> [row.method for row in rows]
        ['theorem defaults', 'grid search (2 settings)', 'random search (2 settings)',
         'gradient tuning (forward, 1 steps, pathwise)']
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
    grid = _search(ctx, _grid_points(ctx, points, bounds), search_seeds, None)
    rand = _search(
        ctx, _random_points(ctx, samples or len(grid.Z), bounds, search_key), search_seeds, None
    )
    tuned = _tune(problem, horizon, heldout=None, context=ctx, **tune_kwargs)
    start = ctx.finalize(ctx.init)
    hypers = [start, grid.hyper, rand.hyper, tuned.hyper]
    evals = ctx.evaluate(ctx.stack(hypers), heldout_ids(heldout))
    names = (
        "theorem defaults" if isinstance(ctx.algorithm, registry.reference().cls) else "defaults",
        f"grid search ({len(grid.Z)} settings)",
        f"random search ({len(rand.Z)} settings)",
        f"gradient tuning ({tuned.mode}, {tuned.steps} steps, {tuned.estimator_used})"
        + (
            " - worse than the defaults, which tune() would return"
            if evals[3].J > evals[0].J
            else ""
        ),
    )
    runs = (0, grid.runs, rand.runs, tuned.runs)
    walls = (0.0, grid.wall_s, rand.wall_s, tuned.wall_s)
    compiles = (0.0, grid.compile_s, rand.compile_s, tuned.compile_s)
    return [
        Row(n, e, r, w, ctx.space.values(h), c)
        for n, e, r, w, h, c in zip(names, evals, runs, walls, hypers, compiles)
    ]


def paired_difference(a: Evaluation, b: Evaluation) -> tuple[float, float]:
    """The mean and standard error of J_a − J_b over the held-out seeds both kept.

    Paired: the same seeds, so the difference is far less noisy than either J.

    Args:
        a: the first ``Evaluation``.
        b: the second, on the same seeds.

    Returns:
        (mean, standard error); NaNs with fewer than two seeds both kept.

    Example:
        >>> import numpy as np
        >>> from jaxbco.tune import Evaluation, paired_difference
        >>> a = Evaluation(2.0, 0.0, 0.0, 0, 0.0, np.array([1.0, 2.0, 3.0]))
        >>> b = Evaluation(1.0, 0.0, 0.0, 0, 0.0, np.array([0.0, 1.0, 2.0]))
        >>> paired_difference(a, b)
        (1.0, 0.0)
    """
    d = a.per_seed - b.per_seed
    d = d[np.isfinite(d)]
    if d.size < 2:
        return float("nan"), float("nan")
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size))


def format_table(rows: list[Row], heldout: int, reference: int | None = None) -> str:
    """Markdown table; ``reference``: the row index that a paired J difference is taken to."""
    names = list(rows[0].values)
    ref = f" | J - J({rows[reference].method.split(' (')[0]})" if reference is not None else ""
    head = (
        f"| method | J (held-out, {heldout} seeds) +- se{ref} | R_T/T | V_T | failed | full runs"
        f" | wall s (compile) | " + " | ".join(names) + " |"
    )
    lines = [head, "|" + " --- |" * (7 + (reference is not None) + len(names))]
    for row in rows:
        e = row.heldout
        vals = " | ".join(f"{row.values[n]:.4g}" for n in names)
        diff = ""
        if reference is not None:
            m, se = paired_difference(e, rows[reference].heldout)
            diff = f" | {m:+.3g} +- {se:.2g}" if np.isfinite(m) and m != 0.0 else " | 0"
        lines.append(
            f"| {row.method} | {e.J:.5g} +- {e.se:.2g}{diff} | {e.regret:.5g} | "
            f"{e.violation:.4g} | {e.failed} | {row.runs} | {row.wall_s:.1f} "
            f"({row.compile_s:.1f}) | {vals} |"
        )
    return "\n".join(lines)
