"""The fused round-loop kernel (``jaxbco.fused``) against the scan engine, on one device.

    python -m benchmarks.kernel --out DIR [--quick] [--steps agree,headline,variants,seeds,big]

Steps (each prints JSON lines, also appended to DIR/kernel.jsonl):
  agree     kernel vs scan engine curves on this device (quadratic-ball, time-varying-ball,
            simplex-quadratic, logistic-ball; 1024 seeds x 2000 rounds): the largest
            |difference| relative to the curve's scale;
  coverage  every named problem x registered algorithm: the back-end selected on this device
            and, off the fused kernel, why (nothing runs);
  headline  1e4 seeds x 1e4 rounds x d = 10, Dual, quadratic-ball: compile and run time of the
            kernel (``make_run(kernel=Config(...))`` under ``jax.jit``) and of the scan engine;
  variants  the headline with other launch choices (seeds per program x warps, ``--configs``);
  family    with the fastest choice: fixed loss data (no theta draws: the generator's share),
            time-varying-ball and a box with a time-varying halfspace (x* by a pre-pass; also
            with the scan engine), strongly-convex-ball;
  seeds     throughput (seed-rounds/s) from 1e3 to 1e6 seeds at T = 1000 (10 checkpoints);
  big       1e5 seeds x 1e5 rounds;
  float64   the headline in float64, kernel and scan engine (last: it enables jax_enable_x64);
  certificate  the cost of the prox step's certificate in the kernel: the first two launch
            choices at 1e4 x 1e4 and at 1e6 seeds x 1e3, with it and with it stubbed out
            (zeros; a measurement only, never a user's configuration).
``--quick`` shrinks every size (a dry run on a CPU, in Pallas' interpreter).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import time
import traceback

import jax
import jax.numpy as jnp
import numpy as np


def _device() -> str:
    d = jax.devices()[0]
    return f"{d.platform}:{getattr(d, 'device_kind', '?')}"


def _emit(out, rec):
    rec.update(device=_device(), jax=jax.__version__)
    line = json.dumps(rec)
    print(line, flush=True)
    with open(os.path.join(out, "kernel.jsonl"), "a") as fh:
        fh.write(line + "\n")


def _box(dim: int = 10):
    """A box [-1, 1]^d with quadratic losses and one time-varying halfspace (the kernel's
    1-D dual path): theta_t ~ N(0.8, 0.2^2 I), g_t = <1/sqrt(d), x> - 0.3 - s_t, s_t ~ U[0, 0.2]."""
    from jaxbco import constraints, losses, sequences, sets
    from jaxbco.problem import Problem

    a = jnp.ones(dim) / np.sqrt(dim)
    return Problem(
        sets.Box(-jnp.ones(dim), jnp.ones(dim)),
        losses.Quadratic(),
        sequences.IIDNormal(jnp.full(dim, 0.8), 0.2),
        constraints.Shifted(constraints.Linear()),
        sequences.Slackened((a, jnp.asarray(0.3)), 0.0, 0.2),
    )


def _problem(fixed_theta: bool = False, name: str = "quadratic-ball", dim: int = 10):
    from jaxbco import problems, sequences

    p = _box(dim) if name == "box-time-varying" else problems.make(name, dim)
    if fixed_theta:
        p = type(p)(
            p.domain,
            p.loss,
            sequences.Fixed(p.loss_data.mean),
            p.constraint,
            p.constraint_data,
            p.x1,
            p.strongly_convex,
        )
    return p


def timed(
    problem,
    seeds: int,
    horizon: int,
    kernel,
    checkpoints: int = 100,
    repeats: int = 3,
    dtype: str = "float32",
):
    """compile_s and the median run_s of ``make_run`` under ``jax.jit`` (AOT compiled)."""
    from jaxbco import simulate
    from jaxbco.algorithms import RectifiedBCO
    from jaxbco.hyper import theorem_defaults

    fn = simulate.make_run(
        problem,
        horizon,
        algorithm=RectifiedBCO(strongly_convex=problem.strongly_convex),
        checkpoints=simulate.log_checkpoints(horizon, checkpoints),
        kernel=kernel,
        dtype=dtype,
    )
    hyper = theorem_defaults(problem.domain, horizon)
    key, ids = jax.random.key(0), jnp.arange(seeds)
    jitted = jax.jit(fn, compiler_options=fn.compiler_options or None)
    t0 = time.perf_counter()
    compiled = jitted.lower(key, hyper, ids).compile()
    compile_s = time.perf_counter() - t0
    out = jax.block_until_ready(compiled(key, hyper, ids))
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = jax.block_until_ready(compiled(key, hyper, ids))
        runs.append(time.perf_counter() - t0)
    run_s = statistics.median(runs)
    return dict(
        seeds=seeds,
        horizon=horizon,
        dim=problem.dim,
        dtype=dtype,
        compile_s=round(compile_s, 3),
        run_s=round(run_s, 5),
        runs_s=[round(r, 5) for r in runs],
        seed_rounds_per_s=seeds * horizon / run_s,
        regret_T_mean=float(np.nanmean(np.asarray(out["regret"])[..., -1])),
        failed=int(np.sum(np.asarray(out["failed"]))),
    )


def _kernel_label(kernel):
    from jaxbco.fused import Config

    if isinstance(kernel, Config):
        extra = (" prefetch" if kernel.prefetch else "") + (
            f" unroll={kernel.unroll}" if kernel.unroll != 1 else ""
        )
        return f"kernel B={kernel.block} warps={kernel.warps}{extra}"
    return {False: "scan", True: "kernel"}.get(kernel, str(kernel))


def step_agree(out, quick):
    from jaxbco import problems, simulate

    S, T = (64, 100) if quick else (1024, 2000)
    for name in ("quadratic-ball", "time-varying-ball", "simplex-quadratic", "logistic-ball"):
        p = problems.make(name)
        kw = dict(seeds=S, key=1, checkpoints=simulate.log_checkpoints(T, 30))
        a = simulate.sweep(p, T, kernel=False, **kw)
        b = simulate.sweep(p, T, kernel=_best(), **kw)
        rel = {
            m: float(
                np.max(np.abs(getattr(a, m) - getattr(b, m)))
                / max(1e-30, float(np.max(np.abs(getattr(a, m)))))
            )
            for m in ("regret", "hard_violation", "soft_violation", "lam", "loss", "x_final")
        }
        _emit(
            out,
            dict(
                step="agree",
                problem=name,
                engine=_kernel_label(_best()),
                seeds=S,
                horizon=T,
                max_rel_diff=rel,
                failed=[int(a.failed.sum()), int(b.failed.sum())],
            ),
        )


def step_coverage(out, quick):
    """Every named problem x every registered algorithm: the back-end ``sweep`` selects on this
    device's platform and, off the fused kernel, the reason (``backends.select``); nothing runs."""
    from jaxbco import backends, compare, problems
    from jaxbco.algorithms import registry

    names = problems.names()
    for name in names[:3] if quick else names:
        problem = problems.make(name, horizon=100)
        for alg in registry.names():
            try:
                algorithm = compare.make_algorithm(alg, problem)
            except ValueError as exc:  # the algorithm does not take this problem
                rec = dict(engine="-", reason=f"algorithm not applicable: {exc}"[:200])
            else:
                chosen = backends.select(problem, algorithm, platform=jax.default_backend())
                rec = dict(engine=chosen.engine, reason=chosen.reason)
            _emit(out, dict(step="coverage", problem=name, algorithm=alg, **rec))


def step_headline(out, quick, configs):
    S, T = (256, 200) if quick else (10_000, 10_000)
    p = _problem()
    for kernel in [False] + configs:
        rec = timed(p, S, T, kernel)
        if kernel is not False:
            _note(kernel, rec)
        _emit(
            out,
            dict(step="headline", problem="quadratic-ball", engine=_kernel_label(kernel), **rec),
        )


BEST = {}  # the fastest launch choice seen by this process at the headline size


def _note(kernel, rec):
    if not BEST or rec["run_s"] < BEST["run_s"]:
        BEST.update(run_s=rec["run_s"], kernel=kernel)
    return rec


def _best():
    from jaxbco.fused import Config

    return BEST.get("kernel", Config())


def step_variants(out, quick, configs):
    S, T = (256, 200) if quick else (10_000, 10_000)
    for kernel in configs:
        _emit(
            out,
            dict(
                step="variants",
                problem="quadratic-ball",
                engine=_kernel_label(kernel),
                **_note(kernel, timed(_problem(), S, T, kernel)),
            ),
        )


def step_family(out, quick):
    S, T = (256, 200) if quick else (10_000, 10_000)
    best = _best()
    _emit(
        out,
        dict(
            step="family",
            problem="quadratic-ball, fixed theta",
            engine=_kernel_label(best),
            **timed(_problem(fixed_theta=True), S, T, best),
        ),
    )
    for name in (
        "time-varying-ball",
        "strongly-convex-ball",
        "box-time-varying",
        "simplex-quadratic",
    ):
        _emit(
            out,
            dict(
                step="family",
                problem=name,
                engine=_kernel_label(best),
                **timed(_problem(name=name), S, T, best),
            ),
        )
    for name in ("time-varying-ball", "box-time-varying"):
        _emit(
            out,
            dict(
                step="family",
                problem=name,
                engine="scan",
                **timed(_problem(name=name), S, T, False),
            ),
        )


def step_float64(out, quick):
    """Last: it turns on jax_enable_x64 for the rest of the process."""
    S, T = (64, 50) if quick else (10_000, 10_000)
    jax.config.update("jax_enable_x64", True)
    for kernel in (_best(), False):
        _emit(
            out,
            dict(
                step="float64",
                problem="quadratic-ball",
                engine=_kernel_label(kernel),
                **timed(_problem(), S, T, kernel, dtype="float64"),
            ),
        )


def step_seeds(out, quick):
    """Seeds 1e3 .. 1e6 at T = 1000 with the headline's fastest launch; from 1e5 seeds also
    with one thread per seed (128 x 4, 256 x 8, 64 x 2: 128 x 4 led there on the H200)."""
    from jaxbco.fused import Config

    T = 50 if quick else 1000
    best = _best()
    wide = [c for c in (Config(128, 4), Config(256, 8), Config(64, 2)) if c != best]
    for S in (64, 256) if quick else (1_000, 10_000, 100_000, 1_000_000):
        for kernel in [best] + (wide if S >= (256 if quick else 100_000) else []):
            _emit(
                out,
                dict(
                    step="seeds",
                    problem="quadratic-ball",
                    engine=_kernel_label(kernel),
                    **timed(_problem(), S, T, kernel, checkpoints=10, repeats=2),
                ),
            )


def step_big(out, quick):
    S, T = (128, 300) if quick else (100_000, 100_000)
    best = _best()
    _emit(
        out,
        dict(
            step="big",
            problem="quadratic-ball",
            engine=_kernel_label(best),
            **timed(_problem(), S, T, best, checkpoints=100, repeats=1),
        ),
    )


@contextlib.contextmanager
def _no_certificate():
    """Algorithm 1's prox certificate replaced by zeros while a program is traced (its cost
    measured by difference; ``jaxbco.solvers.gap``)."""
    from jaxbco.algorithms import rectified_bco

    real = rectified_bco.certificate
    rectified_bco.certificate = lambda *args, **kw: jnp.zeros_like(args[7][0])
    try:
        yield
    finally:
        rectified_bco.certificate = real


def step_certificate(out, quick, configs):
    sizes = [(256, 200), (1024, 50)] if quick else [(10_000, 10_000), (1_000_000, 1_000)]
    for kernel in configs[:2]:
        for S, T in sizes:
            for with_cert in (True, False):
                with contextlib.nullcontext() if with_cert else _no_certificate():
                    rec = timed(_problem(), S, T, kernel, checkpoints=10, repeats=3)
                _emit(
                    out,
                    dict(
                        step="certificate",
                        problem="quadratic-ball",
                        engine=_kernel_label(kernel),
                        certificate=with_cert,
                        **rec,
                    ),
                )


def _parse_config(text: str):
    """'BxW' plus optional ':p1' / ':p0' (prefetch on / off) and ':uK' (K rounds per loop
    iteration)."""
    from jaxbco.fused import Config

    head, *opts = text.split(":")
    block, warps = (int(v) for v in head.split("x"))
    kw = {}
    for o in opts:
        if o in ("p0", "p1"):
            kw["prefetch"] = o == "p1"
        elif o.startswith("u"):
            kw["unroll"] = int(o[1:])
    return Config(block=block, warps=warps, **kw)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--steps", default="agree,headline,variants,family,seeds,big,float64")
    ap.add_argument(
        "--configs",
        default="32x4,128x4,8x1,16x1,8x2,128x8,64x4,32x4:p1",
        help="launch choices BxW[:p1 prefetch][:uK unroll] (seeds per program x "
        "warps); the first is the headline's, the rest the variants'",
    )
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    import warnings

    from jaxbco.fused import KernelWarning

    warnings.simplefilter("error", KernelWarning)  # a fallback to the scan engine is a failure here
    configs = [_parse_config(c) for c in args.configs.split(",")]
    steps = args.steps.split(",")
    print("devices", jax.devices(), "jax", jax.__version__, flush=True)
    table = {
        "agree": lambda: step_agree(args.out, args.quick),
        "coverage": lambda: step_coverage(args.out, args.quick),
        "headline": lambda: step_headline(args.out, args.quick, configs[:1]),
        "variants": lambda: step_variants(args.out, args.quick, configs[1:]),
        "family": lambda: step_family(args.out, args.quick),
        "float64": lambda: step_float64(args.out, args.quick),
        "seeds": lambda: step_seeds(args.out, args.quick),
        "big": lambda: step_big(args.out, args.quick),
        "certificate": lambda: step_certificate(args.out, args.quick, configs),
    }
    rc = 0
    for name in steps:
        t0 = time.perf_counter()
        try:
            table[name]()
        except Exception:  # keep going: one failed step must not cost the others (device time)
            rc = 1
            text = traceback.format_exc()
            with open(os.path.join(args.out, f"error-{name}.txt"), "w") as fh:
                fh.write(text)
            print(f"# step {name} FAILED:\n{text[:2500]}\n...\n{text[-2500:]}", flush=True)
        print(f"# step {name}: {time.perf_counter() - t0:.1f} s", flush=True)
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
