"""Building the results Dataset: a ``Result`` as an ``xarray.Dataset`` with named dimensions,
described variables and provenance attributes (format ``FORMAT``, version ``FORMAT_VERSION``).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import platform

import numpy as np

from jaxbco._src.machine import cpu_name
from jaxbco.algorithms import DEFAULT

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


def grid_dims(ds) -> tuple:
    """The dimensions of a Dataset's grid points (every dimension of ``failed`` but ``seed``)."""
    return tuple(d for d in ds["failed"].dims if d != "seed")


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
    """netCDF-safe attributes describing the software and machine of this process.

    Returns:
        {"jaxbco_version", "jax_version", "jaxlib_version", "numpy_version",
        "python_version", "prng_impl", "x64_enabled", "backend", "devices", "platform", "cpu",
        "created"}.

    Example:
        >>> import jaxbco
        >>> from jaxbco import results
        >>> info = results.provenance()
        >>> info["jaxbco_version"] == jaxbco.__version__, "backend" in info
        (True, True)
    """
    import jax

    try:
        devices = str(jax.devices())
    except RuntimeError as err:  # no backend
        devices = f"unavailable ({err})"
    return {
        "jaxbco_version": _version("jaxbco"),
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
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def _lead(a, n_lead: int):
    """Give ``a`` the (G, S) leading axes it lacks (``run``: none, (S, ...) results: G)."""
    a = np.asarray(a)
    while a.ndim < n_lead:
        a = a[None]
    return a


def to_dataset(
    result, *, grid_axes: dict | None = None, config: dict | None = None, algorithm: str = DEFAULT
):
    """A ``Result`` as an ``xarray.Dataset`` with named dimensions, described variables and
    provenance attributes.

    Dimensions: one per name of ``grid_axes`` (or else ``setting``, with each hyperparameter
    field as a coordinate along it), ``seed`` (coordinate: the seed ids), ``round`` (the
    checkpoint rounds) and ``dim`` for points.  Variables: the curves regret, hard_violation,
    soft_violation, lam, loss; failed, failed_round, x_star, x_final (and decisions when
    recorded).  Hyperparameter fields that were not swept become scalar coordinates.
    Attributes: the format and its version, the horizon, dtype, wall time, the path and speed
    of the run, and the software and machine (``provenance``).

    Args:
        result: a ``Result`` of ``sweep`` or ``run``.
        grid_axes: name -> values of the swept hyperparameters, first name slowest as
            ``jaxbco.grid`` flattens (their product must be G).
        config: a JSON-able dict (problem, solver, ...) stored as the attribute ``config_json``
            (``config_of`` reads it back), its top-level numbers and strings also as
            ``config_KEY`` attributes.
        algorithm: the algorithm's name (the attribute ``algorithm``).

    Returns:
        The ``xarray.Dataset``.

    Raises:
        ValueError: curves of an unexpected shape, or ``grid_axes`` that do not match the
            result's settings or clash with a reserved dimension.

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems, results
        >>> problem = problems.make("quadratic-ball", 3)
        >>> hyper = jaxbco.theorem_defaults(problem.domain, 100, c=[0.5, 0.75])
        >>> res = jaxbco.sweep(problem, 100, hyper, seeds=2, checkpoints=[10, 100])
        >>> ds = results.to_dataset(res, grid_axes={"c": [0.5, 0.75]})
        >>> dict(ds["regret"].sizes)
        {'c': 2, 'seed': 2, 'round': 2}
    """
    import xarray as xr

    regret = np.asarray(result.regret)
    if regret.ndim not in (1, 2, 3):
        raise ValueError(
            f"result curves must have shape (K,), (S, K) or (G, S, K); got {regret.shape}"
        )
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
        raise ValueError(
            f"rounds {rounds.shape} and seed_ids {seed_ids.shape} do not match the "
            f"curves' shape {(n_grid, n_seeds, n_rounds)}"
        )

    hyper = {
        k: np.broadcast_to(v, (n_grid,)) if v.size in (1, n_grid) else v
        for k, v in _hyper_fields(getattr(result, "hyper", None)).items()
    }
    bad = [k for k, v in hyper.items() if v.shape != (n_grid,)]
    if bad:
        raise ValueError(
            f"hyperparameter fields {bad} do not have one value per setting (G = {n_grid})"
        )

    coords: dict = {"seed": ("seed", seed_ids), "round": ("round", rounds)}
    if grid_axes:
        names = list(grid_axes)
        clash = [n for n in names if n in RESERVED_DIMS]
        if clash:
            raise ValueError(f"grid_axes names {clash} clash with the dimensions {RESERVED_DIMS}")
        values = {n: np.atleast_1d(np.asarray(grid_axes[n])) for n in names}
        shape = tuple(values[n].size for n in names)
        if int(np.prod(shape)) != n_grid:
            raise ValueError(
                f"grid_axes {dict(zip(names, shape))} give {int(np.prod(shape))} "
                f"settings but the result has G = {n_grid}"
            )
        mesh = np.meshgrid(*[values[n] for n in names], indexing="ij")
        for n, m in zip(names, mesh):
            if n in hyper and not np.allclose(
                hyper[n], m.reshape(-1).astype(hyper[n].dtype), rtol=1e-6, atol=0, equal_nan=True
            ):
                raise ValueError(
                    f"grid_axes[{n!r}] does not match the result's hyperparameters in "
                    f"jaxbco.grid order (first name slowest); give the same values "
                    f"and order as the grid(...) call"
                )
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

    attrs = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "algorithm": str(algorithm),
        "horizon": int(result.horizon),
        "dtype": str(result.dtype),
        "wall_s": float(result.wall_s),
        # the path and speed of the run (jaxbco.plan)
        "engine": str(getattr(result, "engine", "")),
        "engine_reason": str(getattr(result, "engine_reason", "")),
        "prox_method": str(getattr(result, "prox_method", "")),
        "comparator_method": str(getattr(result, "comparator_method", "")),
        "compile_s": float(getattr(result, "compile_s", np.nan)),
        "seed_rounds_per_s": float(getattr(result, "seed_rounds_per_s", np.nan)),
        "comparator_s": float(getattr(result, "comparator_s", np.nan)),
        # 1: some round's feasibility could not be decided up front (FeasibilityWarning)
        "feasibility_undecided": int(bool(getattr(result, "feasibility_undecided", False))),
        **provenance(),
    }
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
