"""Study files: ``load_config`` reads and checks one (TOML; the keys are described in
``jaxbco.study``'s docstring), ``build`` turns it into the problem, algorithm and
hyperparameters that ``jaxbco sweep --config`` runs."""

from __future__ import annotations

import dataclasses
import tomllib

from jaxbco import hyper as H
from jaxbco import problems
from jaxbco._src.limits import MAX_DIM, MAX_HORIZON, MAX_KEY, MAX_SEEDS
from jaxbco.algorithms import DEFAULT, registry
from jaxbco.compare import default_hyper

KEYS = {
    "problem": str,
    "dim": int,
    "horizon": int,
    "seeds": int,
    "algorithm": str,
    "dtype": str,
    "key": int,
    "checkpoints": int,
    "hyper": dict,
    "grid": dict,
}
REQUIRED = ("problem", "horizon", "seeds")


def load_config(path: str) -> dict:
    """Read and check a study file (TOML; its keys: see ``jaxbco.study``).

    Args:
        path: the study file.

    Returns:
        The study as a dict (problem, horizon, seeds and the optional keys, [hyper], [grid]).

    Raises:
        ValueError: the file is missing, unreadable or not TOML, or a key is unknown, missing,
            of the wrong type or out of range; the message names the file, the key and what is
            allowed.

    Example:
        >>> import os, tempfile
        >>> from jaxbco import study
        >>> path = os.path.join(tempfile.mkdtemp(), "study.toml")
        >>> with open(path, "w") as f:
        ...     for line in ('problem = "quadratic-ball"', "horizon = 1000", "seeds = 8",
        ...                  "[grid]", "c = [0.5, 0.75]"):
        ...         print(line, file=f)
        >>> config = study.load_config(path)
        >>> config["problem"], config["horizon"], config["grid"]
        ('quadratic-ball', 1000, {'c': [0.5, 0.75]})
    """
    try:
        with open(path, encoding="utf-8-sig") as fh:  # a byte-order mark is not TOML's
            cfg = tomllib.loads(fh.read())
    except FileNotFoundError:
        raise ValueError(f"study file {path!r} does not exist") from None
    except OSError as err:
        raise ValueError(f"study file {path!r} cannot be read ({err.strerror})") from None
    except UnicodeDecodeError:
        raise ValueError(f"study file {path!r} is not a text (UTF-8) file") from None
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"study file {path!r} is not valid TOML: {err}") from None
    unknown = sorted(set(cfg) - set(KEYS))
    if unknown:
        raise ValueError(f"study file {path!r}: unknown key(s) {unknown}; allowed: {sorted(KEYS)}")
    missing = [k for k in REQUIRED if k not in cfg]
    if missing:
        raise ValueError(f"study file {path!r}: missing required key(s) {missing}")
    for k, v in cfg.items():
        want = KEYS[k]
        if not isinstance(v, want) or (want is int and isinstance(v, bool)):
            raise ValueError(f"study file {path!r}: {k} must be a {want.__name__}; got {v!r}")
    ranges = {
        "horizon": (1, MAX_HORIZON, "2^31 - 2"),
        "seeds": (1, MAX_SEEDS, "2^32"),
        "dim": (1, MAX_DIM, str(MAX_DIM)),
        "key": (0, MAX_KEY, "2^32 - 1"),
        "checkpoints": (2, MAX_HORIZON, "2^31 - 2"),
    }
    for k, (low, high, shown) in ranges.items():
        if k in cfg and not low <= cfg[k] <= high:
            raise ValueError(
                f"study file {path!r}: {k} must be an integer in [{low}, {shown}]; got {cfg[k]!r}"
            )
    if cfg.get("dtype", "float32") not in ("float32", "float64"):
        raise ValueError(
            f"study file {path!r}: dtype must be 'float32' or 'float64'; got {cfg['dtype']!r}"
        )
    finite = lambda x: x == x and abs(x) != float("inf")
    for k, v in cfg.get("hyper", {}).items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not finite(v):
            raise ValueError(f"study file {path!r}: [hyper] {k} must be a finite number; got {v!r}")
    for k, v in cfg.get("grid", {}).items():
        if (
            not isinstance(v, list)
            or not v
            or any(
                isinstance(x, bool) or not isinstance(x, (int, float)) or not finite(x) for x in v
            )
        ):
            raise ValueError(
                f"study file {path!r}: [grid] {k} must be a non-empty list of finite "
                f"numbers; got {v!r}"
            )
    both = sorted(set(cfg.get("hyper", {})) & set(cfg.get("grid", {})))
    if both:
        raise ValueError(f"study file {path!r}: {both} appear in both [hyper] and [grid]; keep one")
    return cfg


def build(cfg: dict):
    """The problem, algorithm and hyperparameters a study runs.

    The algorithm's ``default_hyper`` for the problem and horizon, with the fixed ``[hyper]``
    values replacing the defaults and the ``[grid]`` values swept (``grid_of``: first name
    slowest).

    Args:
        cfg: a study as ``load_config`` returns it.

    Returns:
        (problem, algorithm, hyper with a flattened grid axis, grid axes as name -> values).

    Raises:
        ValueError: a [hyper] or [grid] name that is not a hyperparameter of the algorithm.

    Example:
        >>> from jaxbco import study
        >>> cfg = {"problem": "quadratic-ball", "dim": 3, "horizon": 100, "seeds": 4,
        ...        "grid": {"c": [0.5, 0.75]}}
        >>> problem, algorithm, hyper, axes = study.build(cfg)
        >>> problem.dim, hyper.c.tolist(), axes
        (3, [0.5, 0.75], {'c': [0.5, 0.75]})
    """
    import numpy as np

    record = registry.get(cfg.get("algorithm", DEFAULT))
    name = record.name
    problem = problems.make(cfg["problem"], cfg.get("dim"), horizon=cfg["horizon"])
    algorithm = record.build(problem)
    hyper = default_hyper(algorithm, problem, cfg["horizon"])
    fields = [f.name for f in dataclasses.fields(hyper)]
    grid = cfg.get("grid", {})
    for k in list(cfg.get("hyper", {})) + list(grid):
        if k not in fields:
            raise ValueError(
                f"{name} has no hyperparameter {k!r}; its hyperparameters are {fields}"
            )
    fixed = {k: np.asarray(v, np.float64) for k, v in cfg.get("hyper", {}).items()}
    if fixed:
        hyper = H.with_values(hyper, **fixed)
    if grid:
        hyper = H.grid_of(hyper, **grid)
    return problem, algorithm, hyper, grid
