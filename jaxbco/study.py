"""Study files and long runs: what ``jaxbco sweep --config study.toml`` reads and builds, and
the multi-host and resume helpers that ``run`` and ``sweep`` share (``jaxbco.cli.sweep``).

A study file (TOML)::

    problem = "quadratic-ball"      # a name from jaxbco.problems.PROBLEMS
    dim = 10                        # optional: the problem's own dimension by default
    horizon = 10000
    seeds = 1000
    algorithm = "rectified-bco"     # a name from jaxbco.algorithms.ALGORITHMS
    dtype = "float32"               # or "float64"
    key = 0                         # master PRNG seed
    checkpoints = 100               # about this many log-spaced rounds are recorded

    [hyper]                         # fixed values replacing the algorithm's defaults
    eta_scale = 2.0

    [grid]                          # swept values: every combination x every seed
    c = [0.5, 0.6, 0.75]
    eps = [0.05, 0.1, 0.5]

The result is ``OUT/results.nc`` (``jaxbco.results.load``) with one dimension per swept name,
a summary table and a figure.  The state after every chunk is kept in ``OUT/state.npz``
(written atomically); ``--resume`` continues an interrupted study from it, bitwise as if it had
never stopped.  Several hosts: start the same command on each with ``--coordinator HOST:PORT
--num-processes N --process-id I``; each host runs its block of the seeds on its local devices
and writes ``results.hostI-of-N.nc``; ``jaxbco.results.merge_seeds`` joins them.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib

STATE = "state.npz"
KEYS = {"problem": str, "dim": int, "horizon": int, "seeds": int, "algorithm": str,
        "dtype": str, "key": int, "checkpoints": int, "hyper": dict, "grid": dict}
REQUIRED = ("problem", "horizon", "seeds")


def init_hosts(args) -> tuple[int, int]:
    """``jax.distributed.initialize`` when --coordinator is given: (process index, count).

    Must run before anything touches a JAX backend."""
    given = [args.coordinator, args.num_processes, args.process_id]
    if all(v is None for v in given):
        return 0, 1
    if any(v is None for v in given):
        raise ValueError("a multi-host run needs all of --coordinator HOST:PORT, --num-processes N "
                         "and --process-id I")
    if args.num_processes < 1 or not 0 <= args.process_id < args.num_processes:
        raise ValueError(f"--process-id must lie in [0, {args.num_processes - 1}] and "
                         f"--num-processes must be >= 1")
    import jax

    jax.distributed.initialize(coordinator_address=args.coordinator,
                               num_processes=args.num_processes, process_id=args.process_id)
    return args.process_id, args.num_processes


def host_tag(index: int, count: int) -> str:
    """'' on one host, '.hostI-of-N' in a multi-host run (each host writes its own files)."""
    return "" if count == 1 else f".host{index}-of-{count}"


def output_names(out: str, index: int, count: int) -> tuple[str, str]:
    """(results file, state file) of this host."""
    tag = host_tag(index, count)
    return os.path.join(out, f"results{tag}.nc"), os.path.join(out, f"state{tag}.npz")


def resume_path(state: str, resume: bool) -> str:
    """The state file to pass to ``sweep``; refuses to overwrite an unfinished run's state."""
    if os.path.exists(state) and not resume:
        raise ValueError(f"{state} holds the state of an unfinished run; continue it with --resume, "
                         f"or delete it (or choose another --out) to start afresh")
    return state


def load_config(path: str) -> dict:
    """Read and check a study file; ValueError naming the file, the key and what is allowed."""
    try:
        with open(path, "rb") as fh:
            cfg = tomllib.load(fh)
    except FileNotFoundError:
        raise ValueError(f"study file {path!r} does not exist") from None
    except OSError as err:
        raise ValueError(f"study file {path!r} cannot be read ({err.strerror})") from None
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
    for k, v in cfg.get("hyper", {}).items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"study file {path!r}: [hyper] {k} must be a number; got {v!r}")
    for k, v in cfg.get("grid", {}).items():
        if (not isinstance(v, list) or not v
                or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in v)):
            raise ValueError(f"study file {path!r}: [grid] {k} must be a non-empty list of numbers; "
                             f"got {v!r}")
    both = sorted(set(cfg.get("hyper", {})) & set(cfg.get("grid", {})))
    if both:
        raise ValueError(f"study file {path!r}: {both} appear in both [hyper] and [grid]; keep one")
    return cfg


def build(cfg: dict):
    """(problem, algorithm, hyper with a flattened grid axis, grid axes) of a study."""
    import numpy as np

    from jaxbco import hyper as H
    from jaxbco import problems
    from jaxbco.algorithms import ALGORITHMS
    from jaxbco.compare import default_hyper, make_algorithm

    name = cfg.get("algorithm", "rectified-bco")
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; choose one of: {', '.join(ALGORITHMS)}")
    problem = problems.make(cfg["problem"], cfg.get("dim"), horizon=cfg["horizon"])
    algorithm = make_algorithm(name, problem)
    hyper = default_hyper(algorithm, problem, cfg["horizon"])
    fields = [f.name for f in dataclasses.fields(hyper)]
    grid = cfg.get("grid", {})
    for k in list(cfg.get("hyper", {})) + list(grid):
        if k not in fields:
            raise ValueError(f"{name} has no hyperparameter {k!r}; its hyperparameters are {fields}")
    fixed = {k: np.asarray(v, np.float64) for k, v in cfg.get("hyper", {}).items()}
    if fixed:
        hyper = H.with_values(hyper, **fixed)
    if grid:
        hyper = H.grid_of(hyper, **grid)
    return problem, algorithm, hyper, grid
