"""``jaxbco sweep --config study.toml``: a grid of hyperparameters x seeds from a study file
(``jaxbco.study``), and the long-run options (``--chunk``, ``--resume``, ``--quiet``, several
hosts) that ``run`` and ``sweep`` share."""

from __future__ import annotations

import argparse
import json
import os

from jaxbco import plan, results, simulate
from jaxbco._src.output_folders import writable_dir, write_json
from jaxbco.algorithms import DEFAULT, registry
from jaxbco.cli.options import MAX_HORIZON, check_memory, integer
from jaxbco.runner import devices
from jaxbco.study import Staging, build, host_tag, init_hosts, load_config, prepare_output


def add_long_run_arguments(p: argparse.ArgumentParser) -> None:
    """--chunk, --resume, --overwrite, --quiet and the multi-host options."""
    p.add_argument(
        "--chunk",
        type=integer(1, MAX_HORIZON),
        default=None,
        help="rounds per compiled chunk (default about T/100); state saved after each",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the interrupted run whose state is in OUT/state.npz",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the results of an earlier study in OUT (once the new one is "
        "complete); without it such an OUT is refused",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--no-kernel",
        action="store_true",
        help="run the scan engine even on a GPU (by default a GPU runs the fused "
        "round-loop kernel where it covers the run, jaxbco.fused)",
    )
    p.add_argument(
        "--coordinator",
        default=None,
        help="HOST:PORT of process 0, for a run over several hosts (jax.distributed)",
    )
    p.add_argument(
        "--num-processes", type=integer(1, 2**16), default=None, help="hosts in a multi-host run"
    )
    p.add_argument(
        "--process-id", type=integer(0, 2**16), default=None, help="this host's index, 0..N-1"
    )
    p.add_argument(
        "--connect-timeout",
        type=integer(1, 86_400),
        default=300,
        help="seconds to wait for the other hosts",
    )


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``jaxbco sweep`` on the CLI's subparsers."""
    p = sub.add_parser("sweep", help="a grid of hyperparameters x seeds from a study file (TOML)")
    p.add_argument("--config", required=True, help="study file (TOML); see `jaxbco.study`")
    p.add_argument("--out", default="jaxbco-sweep", help="output folder")
    add_long_run_arguments(p)
    p.set_defaults(func=cmd_sweep)
    return p


def cmd_sweep(args) -> int:
    cfg = load_config(args.config)  # a bad study file is refused before any host connects
    index, count = init_hosts(args)
    dtype = cfg.get("dtype", "float32")
    import jax

    if dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    import numpy as np

    from jaxbco import plotting  # matplotlib: only when the command runs (CLI start-up)

    try:  # before the folder is touched; a value out of range names the study file
        problem, algorithm, hyper, grid = build(cfg)
    except ValueError as err:
        raise ValueError(f"study file {args.config!r}: {err}") from None
    out = writable_dir(args.out)
    results_file, state = prepare_output(
        out, index, count, resume=args.resume, overwrite=args.overwrite
    )
    horizon, n_ck = cfg["horizon"], cfg.get("checkpoints", 100)
    settings = int(np.prod([len(v) for v in grid.values()])) if grid else 1
    check_memory(
        f"study file {args.config!r}",
        settings,
        cfg["seeds"],
        min(n_ck, horizon),
        problem.dim,
        np.dtype(dtype).itemsize,
    )
    ids = devices.host_share(np.arange(cfg["seeds"]))
    chunk = None if args.chunk is None else min(args.chunk, horizon)
    kernel = False if args.no_kernel else None
    name = registry.get(cfg.get("algorithm", DEFAULT)).name
    print(
        f"jaxbco sweep: {cfg['problem']}, {name}, {settings} settings x {cfg['seeds']} seeds, "
        f"T = {horizon}, {dtype}, {jax.default_backend()}",
        flush=True,
    )
    for label, value in plan.lines(
        plan.before(problem, algorithm, horizon, kernel=kernel, dtype=dtype)
    ):
        print(f"  {label:<11} {value}", flush=True)
    res = simulate.sweep(
        problem,
        horizon,
        hyper,
        seeds=ids,
        key=cfg.get("key", 0),
        algorithm=algorithm,
        checkpoints=simulate.log_checkpoints(horizon, n_ck),
        dtype=dtype,
        chunk=chunk,
        progress=not args.quiet,
        resume=state,
        kernel=kernel,
    )
    ds = results.to_dataset(
        res, grid_axes=grid or None, config=dict(cfg, study_file=args.config), algorithm=name
    )
    table = results.summary_table(ds)
    tag = host_tag(index, count)
    ds.attrs["figure_title"] = (
        f"{cfg['problem']}: {name}, {res.seed_ids.size} seeds, "
        f"T = {horizon}, {dtype}"
    )  # `jaxbco plot` redraws this figure
    with Staging(out, index, count) as stage:
        results.save(ds, stage.path(os.path.basename(results_file)))
        plotting.plot_dataset(ds, stage.path(os.path.basename(results_file)[:-3]))
        write_json(stage.path(f"summary{tag}.json"), json.loads(table.to_json(orient="records")))
        files = stage.commit()
    os.remove(state)
    print(
        f"jaxbco sweep: {cfg['problem']}, {name}, grid {dict((k, len(v)) for k, v in grid.items())}, "
        f"{res.seed_ids.size} seeds, T = {horizon}, {res.wall_s:.1f} s"
        f"{' (all sessions)' if args.resume else ''} on the {res.engine} back-end, "
        f"{res.seed_rounds_per_s:.3g} seed-rounds/s (compile {res.compile_s:.1f} s and x* "
        f"{res.comparator_s:.1f} s excluded)"
    )
    print(table.to_string(index=False))
    print("wrote " + ", ".join(files))
    return 0
