"""Reading and writing results files (netCDF4/HDF5 through ``h5netcdf``)."""

from __future__ import annotations

import json
import os

import numpy as np

from jaxbco.results.dataset import CURVES, FORMAT


def save(ds, path) -> str:
    """Write a results Dataset to a netCDF4/HDF5 file (h5netcdf, compressed), atomically: a
    temporary file beside it is renamed over ``path`` only once complete.

    Args:
        ds: a Dataset of ``to_dataset`` (or ``combine``).
        path: the file to write.

    Returns:
        ``path``.

    Raises:
        ValueError: ``ds`` is not a Dataset, the folder does not exist, or the file cannot be
            written.

    Example:
        >>> import os, tempfile
        >>> import jaxbco
        >>> from jaxbco import problems, results
        >>> res = jaxbco.sweep(problems.make("quadratic-ball", 3), 100, seeds=2, checkpoints=[100])
        >>> path = os.path.join(tempfile.mkdtemp(), "results.nc")
        >>> results.save(results.to_dataset(res), path) == path
        True
        >>> dict(results.load(path)["regret"].sizes)
        {'setting': 1, 'seed': 2, 'round': 1}
    """
    import xarray as xr

    if not isinstance(ds, xr.Dataset):
        raise ValueError(
            f"save expects an xarray.Dataset (from jaxbco.results.to_dataset); got {type(ds).__name__}"
        )
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"cannot save results to {path!r}: folder {folder!r} does not exist")
    encoding = {
        v: {"zlib": True, "complevel": 4}
        for v in ds.data_vars
        if ds[v].ndim > 0 and ds[v].dtype.kind in "fiub"
    }
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        ds.to_netcdf(tmp, engine="h5netcdf", encoding=encoding)
        os.replace(tmp, path)
    except ImportError as err:
        raise ValueError(f"cannot write netCDF: {err} (pip install h5py h5netcdf)") from None
    except OSError as err:
        raise ValueError(
            f"cannot write results to {path!r} ({err.strerror or err}); choose another path"
        ) from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def load(path):
    """Read a results file written by ``save`` into memory.

    Args:
        path: the file, or a folder holding ``results.nc``.

    Returns:
        The ``xarray.Dataset``.

    Raises:
        ValueError: (one line) the file is missing, unreadable or not a jaxbco results file.

    Example:
        >>> from jaxbco import results
        >>> results.load("no-such-file.nc")
        Traceback (most recent call last):
        ...
        ValueError: results file 'no-such-file.nc' does not exist; ...
    """
    import xarray as xr

    path = os.fspath(path)
    if os.path.isdir(path):
        inner = os.path.join(path, "results.nc")
        if not os.path.isfile(inner):
            raise ValueError(
                f"folder {path!r} has no results.nc; give a results file written by "
                f"jaxbco (e.g. jaxbco-results/results.nc)"
            )
        path = inner
    if not os.path.exists(path):
        raise ValueError(
            f"results file {path!r} does not exist; give the path of a .nc file "
            f"written by jaxbco (or a folder holding results.nc)"
        )
    try:
        ds = xr.load_dataset(path, engine="h5netcdf")
    except ImportError as err:
        raise ValueError(f"cannot read netCDF: {err} (pip install h5py h5netcdf)") from None
    except Exception as err:  # noqa: BLE001 - any reader failure means "not a results file"
        why = " ".join(str(err).split())[:200] or type(err).__name__
        raise ValueError(
            f"{path!r} is not a jaxbco results file: it cannot be read as netCDF "
            f"({why}); expected a .nc file written by jaxbco"
        ) from None
    if ds.attrs.get("format") != FORMAT:
        raise ValueError(
            f"{path!r} is a netCDF file but not a jaxbco results file (attribute "
            f"format = {ds.attrs.get('format')!r}, expected {FORMAT!r})"
        )
    missing = [v for v in CURVES + ("failed",) if v not in ds]
    if missing:
        raise ValueError(
            f"{path!r} is not a complete jaxbco results file: variables {missing} are missing"
        )
    ds.attrs = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in ds.attrs.items()}
    for v in ("failed",):
        if ds[v].dtype != bool:
            ds[v] = ds[v].astype(bool)
    ds.encoding.pop("source", None)
    return ds


def config_of(ds) -> dict:
    """The ``config`` dict given to ``to_dataset``, parsed from the ``config_json`` attribute.

    Args:
        ds: a results Dataset.

    Returns:
        The dict ({} when none was stored).

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems, results
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> res = jaxbco.sweep(problem, 20, seeds=2, checkpoints=[20])
        >>> ds = results.to_dataset(res, config={"problem": "quadratic-ball", "dim": 2})
        >>> results.config_of(ds)
        {'dim': 2, 'problem': 'quadratic-ball'}
    """
    text = ds.attrs.get("config_json")
    return {} if text is None else json.loads(text)
