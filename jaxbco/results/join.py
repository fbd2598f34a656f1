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
            datasets whose grid dimensions, seeds or rounds differ.
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
    """
    if "algorithm" in ds.dims:
        return [str(a) for a in ds["algorithm"].values]
    return [str(ds.attrs.get("algorithm", DEFAULT))]


def merge_seeds(parts) -> xr.Dataset:
    """Join the results of disjoint seed blocks of one study (e.g. the hosts of a multi-host run)
    along ``seed``.

    Args:
        parts: Datasets or paths of results files.

    Returns:
        The merged Dataset, sorted by seed (``wall_s``: the longest part's).

    Raises:
        ValueError: no part, parts of different studies (their configurations differ), or
            parts that share a seed.
    """
    import xarray as xr

    dss = [p if isinstance(p, xr.Dataset) else load(p) for p in parts]
    if not dss:
        raise ValueError("merge_seeds needs at least one results file")
    configs = {d.attrs.get("config_json") for d in dss}
    if len(configs) > 1:
        raise ValueError(
            "these results files come from different studies (their configurations "
            "differ); merge only the parts of one study"
        )
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
