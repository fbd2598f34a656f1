"""Relative objective gaps of the prox solvers against cvxpy/CLARABEL on the random battery.

    python -m benchmarks.solver_gaps [--json] [--n 24] [--seed 0]
    python -m benchmarks.solver_gaps --chains [--horizon 1000] [--chain nyse] [--json]

For each (set, constraint), dtype in {float64, float32} and solver in {Dual, Subgradient(20),
Subgradient(100)}: max and median of (P(x) - P*) / max(|P*|, 1e-12), P evaluated in float64
at the solver's answer, P* at cvxpy's.  Non-finite answers are counted (``n_nonfinite``) and
left out of max/median.  float32 runs use float32 inputs with 64-bit JAX switched off; for
them ``max_excess_over_f32_noise`` is max (P(x) - P* - 1e-4 |P*|) / N(x*), N the float32
round-off scale of P (see ``_battery.roundoff_noise``; the test allows 16).
With --chains: the warm chains of ``benchmarks/_chains.py`` instead (runs of Algorithm 1 on a
d = 6 simplex with a dense, slowly rotating P_t, and on nyse-portfolio, whose every prox step
is jaxbco's ``Dual`` in float64, every step re-solved by cvxpy): max / median relative gap,
the number over 1e-6, the largest beta/alpha, the fraction of rounds where g binds.
With --json: one JSON object per line, the first describing the machine and versions.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import platform
import sys
import time
import warnings

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

from benchmarks import _battery as B  # noqa: E402
from benchmarks import _chains  # noqa: E402
from jaxbco import solvers as S  # noqa: E402

SOLVERS = {
    "Dual": S.Dual(),
    "Subgradient20": S.Subgradient(steps=20),
    "Subgradient100": S.Subgradient(steps=100),
}
DTYPES = ("float64", "float32")


def _version(pkg):
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return None


def meta():
    return {
        "kind": "meta",
        "processor": platform.processor(),
        "machine": platform.machine(),
        "node": platform.node(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "jax_backend": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
        **{
            pkg: _version(pkg)
            for pkg in ("jax", "jaxlib", "numpy", "optax", "equinox", "cvxpy", "clarabel")
        },
    }


def _num(v):
    return None if v is None or not math.isfinite(v) else float(v)


def summarise(rows, key):
    gaps = np.array([r["gap"] for r in rows], np.float64)
    finite = np.isfinite(gaps)
    out = {**key, "n": int(gaps.size), "n_nonfinite": int((~finite).sum())}
    if finite.any():
        g = gaps[finite]
        i = int(np.argmax(np.where(finite, gaps, -np.inf)))
        out.update(
            {
                "max_rel_gap": _num(g.max()),
                "median_rel_gap": _num(float(np.median(g))),
                "n_over_1e-6": int((g > 1e-6).sum()),
                "n_over_1e-4": int((g > 1e-4).sum()),
                "worst": rows[i]["label"],
            }
        )
    else:
        out.update(max_rel_gap=None, median_rel_gap=None)
    ratios = [r["ratio"] for r in rows if r.get("ratio") is not None and math.isfinite(r["ratio"])]
    if ratios:
        out["max_excess_over_f32_noise"] = _num(max(ratios))
    return out


def run(n, seed, emit):
    all_rows = []
    for set_name in B.SETS:
        for con_name in B.ALL_CONSTRAINTS:
            insts = B.make_battery(set_name, con_name, n, seed=seed)
            refs = [B.cvx_reference(inst) for inst in insts]
            for dtype in DTYPES:
                for sname, solver in SOLVERS.items():
                    xs = B.solve_batch(solver, set_name, con_name, insts, np.dtype(dtype))
                    rows = []
                    for inst, (x_ref, p_ref), x in zip(insts, refs, xs):
                        p = B.prox_value(inst, x)
                        row = {"gap": B.rel_gap(p, p_ref), "label": inst.label()}
                        if dtype == "float32":
                            row["ratio"] = (
                                p - p_ref - 1e-4 * max(abs(p_ref), 1e-12)
                            ) / B.roundoff_noise(inst, x_ref)
                        rows.append(row)
                    key = {"set": set_name, "constraint": con_name, "dtype": dtype, "solver": sname}
                    emit({"kind": "gap", **summarise(rows, key)})
                    all_rows.extend({**r, **key} for r in rows)
    for dtype in DTYPES:
        for sname in SOLVERS:
            rows = [r for r in all_rows if r["dtype"] == dtype and r["solver"] == sname]
            emit(
                {
                    "kind": "overall",
                    **summarise(
                        rows, {"set": "all", "constraint": "all", "dtype": dtype, "solver": sname}
                    ),
                }
            )


def run_chains(horizon, emit, kinds=("drift", "nyse")):
    for kind in kinds:
        start = time.perf_counter()
        insts, answers = _chains.chain(kind, horizon)
        gaps, ratio = _chains.gaps(insts, answers)
        kkt = np.array([_chains.kkt_residual(i, x) for i, x in zip(insts, answers)])
        emit(
            {
                "kind": "chain",
                "chain": kind,
                "horizon": horizon,
                "dtype": "float64",
                "solver": "Dual",
                "max_rel_gap": _num(gaps.max()),
                "median_rel_gap": _num(float(np.median(gaps))),
                "n_over_1e-6": int((gaps > 1e-6).sum()),
                "worst_round": int(np.argmax(gaps)) + 1,
                "max_beta_over_alpha": _num(ratio.max()),
                "max_kkt_residual": _num(kkt.max()),
                "median_kkt_residual": _num(float(np.median(kkt))),
                "worst_kkt_round": int(np.argmax(kkt)) + 1,
                "binding_fraction": float(np.mean([i.active for i in insts])),
                "wall_s": round(time.perf_counter() - start, 1),
            }
        )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="one JSON object per line")
    ap.add_argument("--n", type=int, default=24, help="instances per (set, constraint)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chains", action="store_true", help="the warm chains of real runs instead")
    ap.add_argument("--horizon", type=int, default=1000, help="rounds of each chain")
    ap.add_argument("--chain", choices=["drift", "nyse"], help="only this chain")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message="Solution may be inaccurate")

    if args.json:
        emit = lambda obj: print(json.dumps(obj), flush=True)
    else:

        def emit(obj):
            if obj["kind"] in ("meta", "chain"):
                print(", ".join(f"{k}={v}" for k, v in obj.items() if k != "kind"))
                return
            fmt = lambda v: "   -    " if v is None else f"{v:9.2e}"
            print(
                f"{obj['set']:8s} {obj['constraint']:14s} {obj['dtype']:8s} "
                f"{obj['solver']:15s} max {fmt(obj['max_rel_gap'])} "
                f"median {fmt(obj['median_rel_gap'])} nonfinite {obj['n_nonfinite']}/{obj['n']}",
                flush=True,
            )

    emit(meta())
    start = time.perf_counter()
    if args.chains:
        run_chains(args.horizon, emit, (args.chain,) if args.chain else ("drift", "nyse"))
    else:
        run(args.n, args.seed, emit)
    emit(
        {"kind": "timing", "wall_s": round(time.perf_counter() - start, 1)}
    ) if args.json else print(f"wall {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
