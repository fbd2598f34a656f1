"""Joining Datasets: several algorithms along an ``algorithm`` dimension (``combine``), disjoint
seed blocks of one study along ``seed`` (``merge_seeds``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from jaxbco.algorithms import DEFAULT
from jaxbco.results.dataset import grid_dims
from jaxbco.results.files import config_of, load

if TYPE_CHECKING:
    import xarray as xr

#: Per-run attributes that become per-algorithm variables in ``combine`` (``jaxbco.plan``).
_PER_RUN_NUMBERS = ("compile_s", "seed_rounds_per_s")
_PER_RUN_TEXT = ("engine", "engine_reason", "prox_method", "comparator_method")


def combine(datasets: dict):
    """Datasets of several algorithms as one Dataset with a leading ``algorithm`` dimension.

    Hyperparameter coordinates an algorithm lacks are NaN; per-run attributes (wall_s, the path
    and speed of the run, config) become variables (or ``config_json``) keyed by algorithm.

    Args:
        datasets: name -> Dataset, with the same seeds, rounds and grid dimensions.

    Returns:
        The combined Dataset.

    Raises:
        ValueError: no dataset, a dataset that already has an algorithm dimension, or
            datasets whose T, dtype, grid dimensions, seeds or rounds differ.

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems, results
        >>> from jaxbco.algorithms import FlaxmanBGD
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> ours = jaxbco.sweep(problem, 20, seeds=2, checkpoints=[20])
        >>> theirs = jaxbco.sweep(problem, 20, algorithm=FlaxmanBGD(), seeds=2, checkpoints=[20])
        >>> ds = results.combine({
        ...     "rectified-bco": results.to_dataset(ours),
        ...     "flaxman-bgd": results.to_dataset(theirs, algorithm="flaxman-bgd"),
        ... })
        >>> dict(ds["regret"].sizes)
        {'algorithm': 2, 'setting': 1, 'seed': 2, 'round': 1}
    """
    import pandas as pd
    import xarray as xr

    if not datasets:
        raise ValueError("combine needs at least one dataset")
    names = [str(n) for n in datasets]
    dss = list(datasets.values())
    dims0 = grid_dims(dss[0])
    for n, ds in zip(names, dss):
        if "algorithm" in ds.dims:
            raise ValueError(f"dataset {n!r} already has an algorithm dimension")
        if grid_dims(ds) != dims0:
            raise ValueError(
                f"combine needs the same grid dimensions in every dataset; "
                f"{names[0]!r} has {dims0}, {n!r} has {grid_dims(ds)}"
            )
        for k in ("horizon", "dtype"):
            if ds.attrs.get(k) != dss[0].attrs.get(k):
                raise ValueError(
                    f"combine needs one {k} in every dataset; {names[0]!r} has "
                    f"{dss[0].attrs.get(k)!r}, {n!r} has {ds.attrs.get(k)!r}"
                )
        for d in ("seed", "round") + dims0:
            if not np.array_equal(ds[d].values, dss[0][d].values):
                raise ValueError(
                    f"combine needs equal {d!r} coordinates; {names[0]!r} and {n!r} differ"
                )
    extra = set()
    for ds in dss:
        extra |= {c for c in ds.coords if c not in ds.dims}
    fixed = []
    for ds in dss:
        ds = ds.copy()
        for c in extra:
            if c in ds.coords:
                ds = ds.assign_coords(
                    {
                        c: ds[c]
                        .astype(np.float64)
                        .broadcast_like(ds["failed"].isel(seed=0, drop=True))
                    }
                )
            else:
                ds = ds.assign_coords(
                    {c: xr.full_like(ds["failed"].isel(seed=0, drop=True), np.nan, np.float64)}
                )
        ds = ds.assign(wall_s=((), float(ds.attrs.get("wall_s", np.nan))))
        ds = ds.assign({k: ((), float(ds.attrs.get(k, np.nan))) for k in _PER_RUN_NUMBERS})
        ds = ds.assign({k: ((), str(ds.attrs.get(k, ""))) for k in _PER_RUN_TEXT})
        fixed.append(ds)
    out = xr.concat(
        fixed,
        dim=pd.Index(names, name="algorithm"),
        data_vars="all",
        coords="all",
        compat="equals",
        join="exact",
        combine_attrs="drop_conflicts",
    )
    out["wall_s"].attrs.update(long_name="wall time (s)", description="compile + run of the sweep")
    configs = {n: config_of(ds) for n, ds in zip(names, dss)}
    if len({json.dumps(c, sort_keys=True) for c in configs.values()}) > 1:
        out.attrs["config_json"] = json.dumps({"per_algorithm": configs}, sort_keys=True)
    for k in ("wall_s",) + _PER_RUN_NUMBERS + _PER_RUN_TEXT:
        out.attrs.pop(k, None)
    out.attrs["algorithm"] = ",".join(names)
    return out


def algorithms_of(ds) -> list:
    """The algorithm names of a results Dataset.

    Args:
        ds: a results Dataset.

    Returns:
        Its ``algorithm`` coordinate, or its ``algorithm`` attribute as a one-element list.

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems, results
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> res = jaxbco.sweep(problem, 20, seeds=2, checkpoints=[20])
        >>> results.algorithms_of(results.to_dataset(res))
        ['rectified-bco']
    """
    if "algorithm" in ds.dims:
        return [str(a) for a in ds["algorithm"].values]
    return [str(ds.attrs.get("algorithm", DEFAULT))]


#: What every seed block of one study shares, read off a results Dataset's attributes.
_STUDY_ATTRS = ("algorithm", "horizon", "dtype")


def _differ(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def _same_study(first, other, i: int) -> None:
    """ValueError naming the first field in which part ``i`` differs from part 0: the algorithm,
    T, dtype, checkpoint rounds, grid dimensions, hyperparameter values, or any entry of the
    stored configuration (problem, key, ...)."""
    bad = lambda field, a, b: ValueError(
        f"merge_seeds: part {i} is not a seed block of part 0's study: {field} differs "
        f"({a!r} vs {b!r}); merge only the parts of one study"
    )
    for k in _STUDY_ATTRS:
        if first.attrs.get(k) != other.attrs.get(k):
            raise bad(k, first.attrs.get(k), other.attrs.get(k))
    if _differ(first["round"].values, other["round"].values):
        raise bad("the checkpoint rounds", first["round"].values, other["round"].values)
    if grid_dims(first) != grid_dims(other):
        raise bad("the grid dimensions", grid_dims(first), grid_dims(other))
    for c in sorted((set(first.coords) | set(other.coords)) - {"seed"}):
        if c not in first.coords or c not in other.coords:
            raise bad(f"hyperparameter {c!r}", c in first.coords, c in other.coords)
        if _differ(first[c].values, other[c].values):
            raise bad(f"hyperparameter {c!r}", first[c].values.tolist(), other[c].values.tolist())
    c0, c1 = config_of(first), config_of(other)
    for k in sorted(set(c0) | set(c1)):
        if c0.get(k) != c1.get(k):
            raise bad(f"the configuration's {k!r}", c0.get(k), c1.get(k))


def merge_seeds(parts) -> xr.Dataset:
    """Join the results of disjoint seed blocks of one study (e.g. the hosts of a multi-host run)
    along ``seed``.

    Args:
        parts: Datasets or paths of results files.

    Returns:
        The merged Dataset, sorted by seed (``wall_s``: the longest part's).

    Raises:
        ValueError: no part, parts of different studies (naming the first field that differs:
            algorithm, T, dtype, rounds, grid, a hyperparameter, or the stored configuration's
            problem, key, ...), or parts that share a seed.

    Example:
        >>> import jaxbco, numpy as np
        >>> from jaxbco import problems, results
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> run = lambda ids: jaxbco.sweep(problem, 20, seeds=np.array(ids), checkpoints=[20])
        >>> parts = [results.to_dataset(run(ids)) for ids in ([0, 1], [2, 3])]   # two hosts' seeds
        >>> results.merge_seeds(parts)["seed"].values.tolist()
        [0, 1, 2, 3]
    """
    import xarray as xr

    dss = [p if isinstance(p, xr.Dataset) else load(p) for p in parts]
    if not dss:
        raise ValueError("merge_seeds needs at least one results file")
    for i, d in enumerate(dss[1:], 1):
        _same_study(dss[0], d, i)
    seeds = np.concatenate([d["seed"].values for d in dss])
    if np.unique(seeds).size != seeds.size:
        raise ValueError("these results files share seeds; merge only disjoint blocks")
    merged = xr.concat(
        dss,
        dim="seed",
        data_vars="minimal",
        coords="minimal",
        compat="override",
        combine_attrs="override",
    )
    merged = merged.sortby("seed")
    merged.attrs["wall_s"] = float(max(d.attrs.get("wall_s", 0.0) for d in dss))
    return merged
