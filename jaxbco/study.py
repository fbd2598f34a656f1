"""Studies from the command line: ``jaxbco sweep --config study.toml`` and the long-run options
(``--chunk``, ``--resume``, ``--quiet``, several hosts) that ``run`` and ``sweep`` share.

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

import argparse
import dataclasses
import json
import os
import time
import tomllib

STATE = "state.npz"
KEYS = {"problem": str, "dim": int, "horizon": int, "seeds": int, "algorithm": str,
        "dtype": str, "key": int, "checkpoints": int, "hyper": dict, "grid": dict}
REQUIRED = ("problem", "horizon", "seeds")


def add_long_run_arguments(p: argparse.ArgumentParser) -> None:
    """--chunk, --resume, --quiet and the multi-host options."""
    p.add_argument("--chunk", type=int, default=None,
                   help="rounds per compiled chunk (default about T/100); state saved after each")
    p.add_argument("--resume", action="store_true",
                   help="continue the interrupted run whose state is in OUT/state.npz")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--coordinator", default=None,
                   help="HOST:PORT of process 0, for a run over several hosts (jax.distributed)")
    p.add_argument("--num-processes", type=int, default=None, help="hosts in a multi-host run")
    p.add_argument("--process-id", type=int, default=None, help="this host's index, 0..N-1")


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
    import equinox as eqx
    import numpy as np

    from jaxbco import problems
    from jaxbco.algorithms import ALGORITHMS
    from jaxbco.compare import _default_hyper, _make_algorithm

    name = cfg.get("algorithm", "rectified-bco")
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; choose one of: {', '.join(ALGORITHMS)}")
    problem, strongly = problems.make(cfg["problem"], cfg.get("dim"), horizon=cfg["horizon"])
    algorithm = _make_algorithm(name, strongly)
    hyper = _default_hyper(algorithm, problem, cfg["horizon"], strongly)
    fields = [f.name for f in dataclasses.fields(hyper)]
    grid = cfg.get("grid", {})
    for k in list(cfg.get("hyper", {})) + list(grid):
        if k not in fields:
            raise ValueError(f"{name} has no hyperparameter {k!r}; its hyperparameters are {fields}")
    values = {k: np.asarray(v, np.float64) for k, v in cfg.get("hyper", {}).items()}
    if grid:
        mesh = np.meshgrid(*[np.asarray(v, np.float64) for v in grid.values()], indexing="ij")
        values.update({k: m.reshape(-1) for k, m in zip(grid, mesh)})
    if values:
        hyper = eqx.tree_at(lambda h: [getattr(h, k) for k in values], hyper, list(values.values()))
        hyper = type(hyper)(**{f: getattr(hyper, f) for f in fields})  # re-run range checks
    return problem, algorithm, hyper, grid


def add_sweep_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("sweep", help="a grid of hyperparameters x seeds from a study file (TOML)")
    p.add_argument("--config", required=True, help="study file (TOML); see `jaxbco.study`")
    p.add_argument("--out", default="jaxbco-sweep", help="output folder")
    add_long_run_arguments(p)
    p.set_defaults(func=cmd_sweep)
    return p


def cmd_sweep(args) -> int:
    index, count = init_hosts(args)
    cfg = load_config(args.config)
    dtype = cfg.get("dtype", "float32")
    if dtype not in ("float32", "float64"):
        raise ValueError(f"study file {args.config!r}: dtype must be 'float32' or 'float64'; got {dtype!r}")
    import jax

    if dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    import numpy as np

    from jaxbco import _checks, devices, plotting, results, simulate
    from jaxbco._io import writable_dir

    out = writable_dir(args.out)
    results_file, state = output_names(out, index, count)
    state = resume_path(state, args.resume)
    problem, algorithm, hyper, grid = build(cfg)
    horizon, n_ck = cfg["horizon"], cfg.get("checkpoints", 100)
    if n_ck < 2:
        raise ValueError(f"study file {args.config!r}: checkpoints must be an integer >= 2")
    ids = devices.host_share(np.arange(_checks.check_positive_int("seeds", cfg["seeds"])))
    start = time.perf_counter()
    res = simulate.sweep(problem, horizon, hyper, seeds=ids, key=cfg.get("key", 0),
                         algorithm=algorithm, checkpoints=simulate.log_checkpoints(horizon, n_ck),
                         dtype=dtype, chunk=args.chunk, progress=not args.quiet, resume=state)
    name = cfg.get("algorithm", "rectified-bco")
    ds = results.to_dataset(res, grid_axes=grid or None, config=dict(cfg, study_file=args.config),
                            algorithm=name)
    results.save(ds, results_file)
    os.remove(state)
    table = results.summary_table(ds)
    figs = plotting.plot_dataset(ds, os.path.join(out, os.path.basename(results_file)[:-3]),
                                 title=f"{cfg['problem']}: {name}, {res.seed_ids.size} seeds, T={horizon}")
    print(f"jaxbco sweep: {cfg['problem']}, {name}, grid {dict((k, len(v)) for k, v in grid.items())}, "
          f"{res.seed_ids.size} seeds, T = {horizon}, {time.perf_counter() - start:.1f} s")
    print(table.to_string(index=False))
    print(f"wrote {results_file}, " + ", ".join(figs))
    with open(os.path.join(out, f"summary{host_tag(index, count)}.json"), "w") as fh:
        json.dump(json.loads(table.to_json(orient="records")), fh, indent=2)
    return 0
