"""Where the pathwise gradient of J holds: per problem and T, the pathwise dJ/dz, central
differences and the smoothed estimate, each with its standard error over the seeds.

    python -m benchmarks.gradients OUT.jsonl [--problems quadratic-ball ...] [--horizons 100 1000]

One free hyperparameter per problem, on its log scale (z = log value): alpha_scale of
Algorithm 1 on the named problems; eta of the own Polyak algorithm and of mahdavi-pd on issue
56's non-smooth example ("nonsmooth-own", "nonsmooth-mahdavi"; ``benchmarks/_nonsmooth.py``).
At the default hyperparameters, on the same S seeds (common random numbers):

- pathwise: every seed's dL/dz by ``jax.jacfwd`` through the whole run; mean +- se;
- central difference: [L_s(z + h) - L_s(z - h)] / (2 h) per seed, h = 0.1; mean +- se;
- smoothed: ``estimators.smoothed_gradient`` with P = 8 antithetic pairs, scale 0.1;
- the check ``estimators.compare`` along e = 1 (what ``estimator="auto"`` decides).

Each line of OUT: problem, algorithm, T, seeds, the three estimates with their se, the check's
t, bound and spread ratio, its verdict, compile and run seconds, and the machine.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks import _nonsmooth
from jaxbco import problems
from jaxbco.algorithms import MahdaviPrimalDual
from jaxbco.tune import estimators
from jaxbco.tune.objective import _Context, make_objective

DEFAULT_PROBLEMS = (
    "quadratic-ball",
    "time-varying-ball",
    "switching-box",
    "logistic-ball",
    "simplex-quadratic",
    "hutchinson-toy",
    "online-logistic",
    "nonsmooth-own",
    "nonsmooth-mahdavi",
)
H = 0.1


def _case(name, horizon):
    if name == "nonsmooth-own":
        return _nonsmooth.problem(), _nonsmooth.PolyakTwoPoint(), ("eta",)
    if name == "nonsmooth-mahdavi":
        return _nonsmooth.problem(), MahdaviPrimalDual(), ("eta",)
    return problems.make(name, None, horizon), None, ("alpha_scale",)


def measure(name, horizon, seeds, pairs=8):
    """One line of the benchmark (see the module docstring)."""
    problem, algorithm, free = _case(name, horizon)
    ctx = _Context(
        problem,
        horizon,
        algorithm=algorithm,
        init=None,
        free=free,
        transforms=None,
        kappa=1.0,
        key=0,
        dtype="float32",
    )
    obj = make_objective(
        problem,
        horizon,
        ctx.space,
        algorithm=ctx.algorithm,
        kappa=1.0,
        key=ctx.master,
        comparator=ctx.comparator,
    )
    z = np.asarray(ctx.space.start(ctx.init), np.float64)
    ids = np.arange(seeds)
    t0 = time.perf_counter()
    grad = jax.jit(jax.jacfwd(obj.per_seed, has_aux=True), compiler_options=obj.compiler_options)
    grad = grad.lower(jnp.asarray(z, jnp.float32), 1.0, jnp.asarray(ids, jnp.uint32)).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    G, (_, _, failed) = jax.device_get(
        grad(jnp.asarray(z, jnp.float32), 1.0, jnp.asarray(ids, jnp.uint32))
    )
    path_s = time.perf_counter() - t0
    G, ok = np.asarray(G, np.float64)[:, 0], ~np.asarray(failed, bool)
    e = estimators.directions(np.random.default_rng(56), 1, pairs)
    t0 = time.perf_counter()
    Z = np.concatenate([[z + H], [z - H], z + H * e, z - H * e])
    evals = ctx.evaluate(ctx.grid_of(Z), ids)  # one call: the difference and the pairs
    value_s = time.perf_counter() - t0
    L = np.stack([ev.per_seed for ev in evals])
    Lok = np.isfinite(L)
    fd = (L[0] - L[1]) / (2 * H)
    keep = ok & Lok[0] & Lok[1]
    g_s, se_s = estimators.smoothed_gradient(
        L[2 : 2 + pairs], L[2 + pairs :], Lok[2 : 2 + pairs] & Lok[2 + pairs :], e, H
    )
    chk = estimators.compare(0, G[:, None], ok, L[0], L[1], Lok[0] & Lok[1], np.ones(1), H, 1)
    se = lambda x: float(np.std(x, ddof=1) / np.sqrt(x.size))
    return dict(
        problem=name,
        algorithm=type(ctx.algorithm).__name__,
        free=free[0],
        T=horizon,
        seeds=seeds,
        J=float(np.nanmean(L[:2])),
        pathwise=float(G[keep].mean()),
        pathwise_se=se(G[keep]),
        central_difference=float(fd[keep].mean()),
        central_difference_se=se(fd[keep]),
        smoothed=float(g_s[0]),
        smoothed_se=float(se_s[0]),
        pairs=pairs,
        check_t=chk.t,
        check_t_crit=chk.t_crit,
        spread_ratio=chk.spread_ratio,
        pathwise_fails_check=chk.disagree,
        compile_s=compile_s,
        pathwise_s=path_s,
        values_s=value_s,
        backend=jax.default_backend(),
        cpu=platform.processor() or platform.machine(),
        jax_version=jax.__version__,
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--problems", nargs="+", default=list(DEFAULT_PROBLEMS))
    p.add_argument("--horizons", nargs="+", type=int, default=[100, 1000])
    p.add_argument("--seeds", type=int, default=16)
    args = p.parse_args(argv)
    with open(args.out, "a") as fh:
        for name in args.problems:
            for T in args.horizons:
                rec = measure(name, T, args.seeds)
                print(json.dumps(rec), flush=True)
                fh.write(json.dumps(rec) + "\n")
                fh.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
