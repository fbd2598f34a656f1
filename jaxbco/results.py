"""Results as a labelled dataset (xarray), saved as netCDF (HDF5, engine ``h5netcdf``).

``to_dataset(result, grid_axes=...)`` turns a ``Result`` into an ``xarray.Dataset`` with named
dimensions (each swept hyperparameter, or ``setting``; ``seed``; checkpoint ``round``; ``dim``
for points), the curves regret, hard_violation, soft_violation, lam, loss, the ``failed`` flags,
and provenance attributes (configuration, package/JAX versions, PRNG implementation, devices).
``save`` writes it atomically, ``load`` reads it back in one call, ``to_frame`` gives a tidy
pandas table, ``summary_table`` the final-round means with 95% intervals, and ``combine`` puts
several algorithms' datasets along an ``algorithm`` dimension.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform

import numpy as np

from jaxbco._machine import cpu_name

FORMAT = "jaxbco-results"
FORMAT_VERSION = 1
CURVES = ("regret", "hard_violation", "soft_violation", "lam", "loss")
RESERVED_DIMS = ("algorithm", "setting", "seed", "round", "dim")

DESCRIPTIONS = {
    "regret": ("regret R_t", "sum_{s<=t} f_s(x_s) - f_s(x*)"),
    "hard_violation": ("hard violation V_t", "sum_{s<=t} [g_s(x_s)]_+"),
    "soft_violation": ("soft violation", "sum_{s<=t} g_s(x_s)"),
    "lam": ("penalty lambda_t", "lambda_t at round t"),
    "loss": ("loss f_t(x_t)", "f_t(x_t) at round t"),
    "failed": ("failed", "the run went non-finite (curves NaN from failed_round on)"),
    "failed_round": ("failed round", "first non-finite round (0: never failed)"),
    "x_star": ("comparator x*", "best fixed feasible point in hindsight"),
    "x_final": ("final decision x_{T+1}", "decision after the last round"),
    "decisions": ("decision x_t", "played point at the checkpoint rounds"),
}


# ---------------------------------------------------------------------------------------------
# Building a dataset.

def _hyper_fields(hyper) -> dict:
    """name -> 1-D numpy array (G,) for every array field of a Hyper-like dataclass."""
    if hyper is None:
        return {}
    out = {}
    for f in dataclasses.fields(hyper):
        v = getattr(hyper, f.name)
        if v is None or isinstance(v, (str, bool)):
            continue
        try:
            arr = np.asarray(v)
        except Exception:  # noqa: BLE001 - a non-array field
            continue
        if arr.dtype.kind in "fiu" and arr.ndim <= 1:
            out[f.name] = np.atleast_1d(arr)
    return out


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if hasattr(obj, "__array__"):
        return np.asarray(obj).tolist()
    return str(obj)


def _version(dist: str, fallback: str = "unknown") -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return fallback


def provenance() -> dict:
    """netCDF-safe attributes describing the software and machine of this process."""
    import jax

    import jaxbco

    try:
        devices = str(jax.devices())
    except RuntimeError as err:  # no backend
        devices = f"unavailable ({err})"
    return {
        "jaxbco_version": _version("jaxbco", getattr(jaxbco, "__version__", "unknown")),
        "jax_version": jax.__version__,
        "jaxlib_version": _version("jaxlib"),
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        "prng_impl": str(jax.config.jax_default_prng_impl),
        "x64_enabled": int(bool(jax.config.jax_enable_x64)),
        "backend": jax.default_backend(),
        "devices": devices,
        "platform": platform.platform(),
        "cpu": cpu_name(),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def _lead(a, n_lead: int):
    """Give ``a`` the (G, S) leading axes it lacks (``run``: none, (S, ...) results: G)."""
    a = np.asarray(a)
    while a.ndim < n_lead:
        a = a[None]
    return a


def to_dataset(result, *, grid_axes: dict | None = None, config: dict | None = None,
               algorithm: str = "rectified-bco"):
    """A ``Result`` as an ``xarray.Dataset``.

    Dimensions: one per name of ``grid_axes`` (name -> values, first name slowest, as
    ``jaxbco.grid`` flattens; their product must be the number of settings G) or else
    ``setting`` (with each hyperparameter field as a coordinate along it); ``seed``
    (coordinate: the seed ids); ``round`` (the checkpoint rounds); ``dim`` for points.
    Hyperparameter fields that were not swept become scalar coordinates (or coordinates on the
    grid dimensions where they vary).  ``config``: a JSON-able dict (problem, solver, ...)
    stored as the attribute ``config_json`` (read it back with ``config_of``), its top-level
    numbers and strings also as ``config_<key>`` attributes.
    """
    import xarray as xr

    regret = np.asarray(result.regret)
    if regret.ndim not in (1, 2, 3):
        raise ValueError(f"result curves must have shape (K,), (S, K) or (G, S, K); got {regret.shape}")
    lead = 3 - regret.ndim  # missing leading axes
    curves = {m: _lead(getattr(result, m), 3) for m in CURVES}
    n_grid, n_seeds, n_rounds = curves["regret"].shape
    failed = _lead(result.failed, 2).astype(bool)
    failed_round = _lead(result.failed_round, 2).astype(np.int32)
    x_star = np.asarray(result.x_star)
    x_star = x_star[None] if x_star.ndim == 1 else x_star
    x_final = _lead(result.x_final, 3) if lead else np.asarray(result.x_final)
    decisions = getattr(result, "decisions", None)
    if decisions is not None:
        decisions = _lead(decisions, 4)
    rounds = np.asarray(result.rounds).astype(np.int64)
    seed_ids = np.atleast_1d(np.asarray(result.seed_ids)).astype(np.int64)
    if rounds.shape != (n_rounds,) or seed_ids.shape != (n_seeds,):
        raise ValueError(f"rounds {rounds.shape} and seed_ids {seed_ids.shape} do not match the "
                         f"curves' shape {(n_grid, n_seeds, n_rounds)}")

    hyper = {k: np.broadcast_to(v, (n_grid,)) if v.size in (1, n_grid) else v
             for k, v in _hyper_fields(getattr(result, "hyper", None)).items()}
    bad = [k for k, v in hyper.items() if v.shape != (n_grid,)]
    if bad:
        raise ValueError(f"hyperparameter fields {bad} do not have one value per setting (G = {n_grid})")

    coords: dict = {"seed": ("seed", seed_ids), "round": ("round", rounds)}
    if grid_axes:
        names = list(grid_axes)
        clash = [n for n in names if n in RESERVED_DIMS]
        if clash:
            raise ValueError(f"grid_axes names {clash} clash with the dimensions {RESERVED_DIMS}")
        values = {n: np.atleast_1d(np.asarray(grid_axes[n])) for n in names}
        shape = tuple(values[n].size for n in names)
        if int(np.prod(shape)) != n_grid:
            raise ValueError(f"grid_axes {dict(zip(names, shape))} give {int(np.prod(shape))} "
                             f"settings but the result has G = {n_grid}")
        mesh = np.meshgrid(*[values[n] for n in names], indexing="ij")
        for n, m in zip(names, mesh):
            if n in hyper and not np.allclose(hyper[n], m.reshape(-1).astype(hyper[n].dtype),
                                               rtol=1e-6, atol=0, equal_nan=True):
                raise ValueError(f"grid_axes[{n!r}] does not match the result's hyperparameters in "
                                 f"jaxbco.grid order (first name slowest); give the same values "
                                 f"and order as the grid(...) call")
        grid_dims = tuple(names)
        for n in names:
            coords[n] = (n, values[n])
        for k, v in hyper.items():
            if k in names:
                continue
            if np.all(v == v[0]):
                coords[k] = ((), v[0])
            else:
                coords[k] = (grid_dims, v.reshape(shape))
    else:
        grid_dims, shape = ("setting",), (n_grid,)
        coords["setting"] = ("setting", np.arange(n_grid))
        for k, v in hyper.items():
            if k in RESERVED_DIMS:
                continue
            coords[k] = ("setting", v)

    gs = grid_dims + ("seed",)
    data = {m: (gs + ("round",), curves[m].reshape(shape + (n_seeds, n_rounds))) for m in CURVES}
    data["failed"] = (gs, failed.reshape(shape + (n_seeds,)))
    data["failed_round"] = (gs, failed_round.reshape(shape + (n_seeds,)))
    data["x_star"] = (("seed", "dim"), x_star)
    data["x_final"] = (gs + ("dim",), x_final.reshape(shape + (n_seeds, -1)))
    if decisions is not None:
        data["decisions"] = (gs + ("round", "dim"), decisions.reshape(shape + decisions.shape[2:]))

    attrs = {"format": FORMAT, "format_version": FORMAT_VERSION, "algorithm": str(algorithm),
             "horizon": int(result.horizon), "dtype": str(result.dtype),
             "wall_s": float(result.wall_s), **provenance()}
    config = {} if config is None else dict(config)
    attrs["config_json"] = json.dumps(_jsonable(config), sort_keys=True)
    for k, v in config.items():
        if isinstance(v, (str, int, float, np.integer, np.floating)) and not isinstance(v, bool):
            attrs[f"config_{k}"] = v.item() if isinstance(v, np.generic) else v
        elif isinstance(v, (bool, np.bool_)):
            attrs[f"config_{k}"] = int(v)
    ds = xr.Dataset(data, coords=coords, attrs=attrs)
    for name, (long, desc) in DESCRIPTIONS.items():
        if name in ds:
            ds[name].attrs.update(long_name=long, description=desc)
    return ds


# ---------------------------------------------------------------------------------------------
# Reading and writing.

def _grid_dims(ds) -> tuple:
    return tuple(d for d in ds["failed"].dims if d != "seed")


def save(ds, path) -> str:
    """Write ``ds`` to ``path`` (netCDF4/HDF5 via h5netcdf, compressed), atomically: a
    temporary file beside it is renamed over ``path`` only once complete."""
    import xarray as xr

    if not isinstance(ds, xr.Dataset):
        raise ValueError(f"save expects an xarray.Dataset (from jaxbco.results.to_dataset); got {type(ds).__name__}")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"cannot save results to {path!r}: folder {folder!r} does not exist")
    encoding = {v: {"zlib": True, "complevel": 4} for v in ds.data_vars
                if ds[v].ndim > 0 and ds[v].dtype.kind in "fiub"}
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        ds.to_netcdf(tmp, engine="h5netcdf", encoding=encoding)
        os.replace(tmp, path)
    except ImportError as err:
        raise ValueError(f"cannot write netCDF: {err} (pip install h5py h5netcdf)") from None
    except OSError as err:
        raise ValueError(f"cannot write results to {path!r} ({err.strerror or err}); choose "
                         f"another path") from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def load(path):
    """Read a results file written by ``save`` (or a folder holding ``results.nc``) into memory.

    ValueError (one line) if the file is missing, unreadable or not a jaxbco results file.
    """
    import xarray as xr

    path = os.fspath(path)
    if os.path.isdir(path):
        inner = os.path.join(path, "results.nc")
        if not os.path.isfile(inner):
            raise ValueError(f"folder {path!r} has no results.nc; give a results file written by "
                             f"jaxbco (e.g. jaxbco-results/results.nc)")
        path = inner
    if not os.path.exists(path):
        raise ValueError(f"results file {path!r} does not exist; give the path of a .nc file "
                         f"written by jaxbco (or a folder holding results.nc)")
    try:
        ds = xr.load_dataset(path, engine="h5netcdf")
    except ImportError as err:
        raise ValueError(f"cannot read netCDF: {err} (pip install h5py h5netcdf)") from None
    except Exception as err:  # noqa: BLE001 - any reader failure means "not a results file"
        why = " ".join(str(err).split())[:200] or type(err).__name__
        raise ValueError(f"{path!r} is not a jaxbco results file: it cannot be read as netCDF "
                         f"({why}); expected a .nc file written by jaxbco") from None
    if ds.attrs.get("format") != FORMAT:
        raise ValueError(f"{path!r} is a netCDF file but not a jaxbco results file (attribute "
                         f"format = {ds.attrs.get('format')!r}, expected {FORMAT!r})")
    missing = [v for v in CURVES + ("failed",) if v not in ds]
    if missing:
        raise ValueError(f"{path!r} is not a complete jaxbco results file: variables {missing} "
                         f"are missing")
    ds.attrs = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in ds.attrs.items()}
    for v in ("failed",):
        if ds[v].dtype != bool:
            ds[v] = ds[v].astype(bool)
    ds.encoding.pop("source", None)
    return ds


def config_of(ds) -> dict:
    """The ``config`` dict given to ``to_dataset`` (parsed from the ``config_json`` attribute)."""
    text = ds.attrs.get("config_json")
    return {} if text is None else json.loads(text)


# ---------------------------------------------------------------------------------------------
# Tables.

def to_frame(ds):
    """A tidy ``pandas.DataFrame``: one row per (algorithm, grid point, seed, round) with the
    curves, ``failed``, ``failed_round`` and the hyperparameter values as columns."""
    keep = [v for v in CURVES + ("failed", "failed_round") if v in ds]
    sub = ds[keep]
    order = [d for d in sub["regret"].dims]
    frame = sub.to_dataframe(dim_order=order).reset_index()
    return frame


def _interval(values) -> tuple:
    from jaxbco.summary import interval

    iv = interval(values)
    return iv["mean"], iv["ci95"][0], iv["ci95"][1]


def summary_table(ds):
    """One row per (algorithm, grid point): R_T/T, hard V_T and soft V_T at the last round,
    mean and 95% confidence interval of the mean over seeds (failed seeds excluded)."""
    import pandas as pd

    T = float(ds["round"].values[-1])  # the last checkpoint (T with log_checkpoints): R_t/t there
    dims = _grid_dims(ds)
    shape = tuple(ds.sizes[d] for d in dims)
    last = ds.isel(round=-1)
    rows = []
    for idx in np.ndindex(*shape):
        sel = dict(zip(dims, idx))
        point = last.isel(sel)
        ok = ~np.asarray(point["failed"].values, bool)
        row = {d: point[d].values.item() for d in dims}
        for name, coord in point.coords.items():
            if name not in row and name not in ("seed", "round") and coord.ndim == 0:
                row[name] = coord.values.item()
        row.update(seeds=int(ok.size), failed=int((~ok).sum()))
        for key, vals in (("regret_over_T", point["regret"].values / T),
                          ("hard_violation", point["hard_violation"].values),
                          ("soft_violation", point["soft_violation"].values)):
            m, lo, hi = _interval(np.asarray(vals, np.float64)[ok])
            row.update({f"{key}_mean": m, f"{key}_ci_lo": lo, f"{key}_ci_hi": hi})
        rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# Several algorithms.

def combine(datasets: dict):
    """Datasets of several algorithms (name -> Dataset, same seeds, rounds and grid
    dimensions) as one Dataset with a leading ``algorithm`` dimension.  Hyperparameter
    coordinates an algorithm lacks are NaN; per-run attributes (wall_s, config) move to
    variables/``config_json`` keyed by algorithm."""
    import pandas as pd
    import xarray as xr

    if not datasets:
        raise ValueError("combine needs at least one dataset")
    names = [str(n) for n in datasets]
    dss = list(datasets.values())
    dims0 = _grid_dims(dss[0])
    for n, ds in zip(names, dss):
        if "algorithm" in ds.dims:
            raise ValueError(f"dataset {n!r} already has an algorithm dimension")
        if _grid_dims(ds) != dims0:
            raise ValueError(f"combine needs the same grid dimensions in every dataset; "
                             f"{names[0]!r} has {dims0}, {n!r} has {_grid_dims(ds)}")
        for d in ("seed", "round") + dims0:
            if not np.array_equal(ds[d].values, dss[0][d].values):
                raise ValueError(f"combine needs equal {d!r} coordinates; {names[0]!r} and {n!r} differ")
    extra = set()
    for ds in dss:
        extra |= {c for c in ds.coords if c not in ds.dims}
    fixed = []
    for ds in dss:
        ds = ds.copy()
        for c in extra:
            if c in ds.coords:
                ds = ds.assign_coords({c: ds[c].astype(np.float64).broadcast_like(ds["failed"].isel(seed=0, drop=True))})
            else:
                ds = ds.assign_coords({c: xr.full_like(ds["failed"].isel(seed=0, drop=True), np.nan, np.float64)})
        ds = ds.assign(wall_s=((), float(ds.attrs.get("wall_s", np.nan))))
        fixed.append(ds)
    out = xr.concat(fixed, dim=pd.Index(names, name="algorithm"), data_vars="all", coords="all",
                    compat="equals", join="exact", combine_attrs="drop_conflicts")
    out["wall_s"].attrs.update(long_name="wall time (s)", description="compile + run of the sweep")
    configs = {n: config_of(ds) for n, ds in zip(names, dss)}
    if len({json.dumps(c, sort_keys=True) for c in configs.values()}) > 1:
        out.attrs["config_json"] = json.dumps({"per_algorithm": configs}, sort_keys=True)
    out.attrs.pop("wall_s", None)
    out.attrs["algorithm"] = ",".join(names)
    return out


def algorithms_of(ds) -> list:
    """The algorithm names of a dataset (its ``algorithm`` coordinate or attribute)."""
    if "algorithm" in ds.dims:
        return [str(a) for a in ds["algorithm"].values]
    return [str(ds.attrs.get("algorithm", "rectified-bco"))]


def merge_seeds(parts) -> "xr.Dataset":
    """Join results of disjoint seed blocks (e.g. the hosts of a multi-host run) along ``seed``.

    ``parts``: datasets or paths.  ValueError when the parts come from different studies
    (configurations differ) or share a seed."""
    import xarray as xr

    dss = [p if isinstance(p, xr.Dataset) else load(p) for p in parts]
    if not dss:
        raise ValueError("merge_seeds needs at least one results file")
    configs = {d.attrs.get("config_json") for d in dss}
    if len(configs) > 1:
        raise ValueError("these results files come from different studies (their configurations "
                         "differ); merge only the parts of one study")
    seeds = np.concatenate([d["seed"].values for d in dss])
    if np.unique(seeds).size != seeds.size:
        raise ValueError("these results files share seeds; merge only disjoint blocks")
    merged = xr.concat(dss, dim="seed", data_vars="minimal", coords="minimal",
                       compat="override", combine_attrs="override")
    merged = merged.sortby("seed")
    merged.attrs["wall_s"] = float(max(d.attrs.get("wall_s", 0.0) for d in dss))
    return merged
