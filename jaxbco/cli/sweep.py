"""``jaxbco sweep --config study.toml``: a grid of hyperparameters x seeds from a study file
(``jaxbco.study``), and the long-run options (``--chunk``, ``--resume``, ``--quiet``, several
hosts) that ``run`` and ``sweep`` share."""

from __future__ import annotations

import argparse
import json
import os
import time

from jaxbco.study import host_tag, init_hosts, load_config, output_names, resume_path


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


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``jaxbco sweep`` on the CLI's subparsers."""
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
    from jaxbco.study import build

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
