"""What jaxbco's programs cost to compile, and how big they are after XLA's optimisation.

Every case runs in a fresh process (nothing compiled before it, no persistent compile cache),
and JAX's ``/jax/core/compile/`` duration events are summed per program (``fun_name``):
trace (Python -> jaxpr), lower (jaxpr -> StableHLO) and compile (XLA, the backend).  Programs
of single eager operations (``jit(broadcast_in_dim)``, ...) are summed as ``eager ops``.
Cases (64 seeds x 200 rounds unless ``--seeds``/``--horizon`` say otherwise):

* ``make_run``: each named problem with the default algorithm; the compile time of
  ``make_run``'s first call (concrete inputs: what a user waits for); the optimised HLO's size
  (instructions, fusions, while loops, conditionals) of the program ``jax.jit(fn)`` compiles
  (the algorithm itself, not its ``light`` version), measured after the clock stops.
* ``sweep``: each named problem x each algorithm asked for (``--algorithms``, default the
  default algorithm): ``jaxbco.sweep``'s programs (start, advance, finish_comparator,
  final_decisions, certify_comparator), each with its compile seconds.
* ``cli``: the README's main job, a cold ``jaxbco run --no-compile-cache`` (its defaults:
  quadratic-ball, 1000 seeds x 10^4 rounds).

``--trees A B ...`` runs every case on each source tree in turn (alternated case by case, the
fairest comparison on a machine whose load drifts), importing jaxbco from that tree:

    python -m benchmarks.compile out.json --trees /work/base /work/main
    python -m benchmarks.compile out.json --cases make_run --problems quadratic-ball

Prints one JSON line per case (tree, case, problem, algorithm, programs {name: trace_s,
lower_s, compile_s, count}, total_compile_s, wall_s, sizes) and writes them all, with the
machine, to OUT.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import re
import subprocess
import sys
import tempfile
import time

from jaxbco import problems
from jaxbco.algorithms import DEFAULT

HERE = pathlib.Path(__file__).resolve()
EVENTS = {
    "/jax/core/compile/jaxpr_trace_duration": "trace_s",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower_s",
    "/jax/core/compile/backend_compile_duration": "compile_s",
}
# jitted single operations JAX dispatches eagerly (one tiny program each)
EAGER = re.compile(r"^(jit\()?[a-z_0-9]+\)?$")
PROGRAMS = (
    "start",
    "_advance",
    "advance",
    "finish_comparator",
    "final_decisions",
    "certify_comparator",
    "whole",
    "fn",
)


def _program(fun_name: str) -> str:
    name = fun_name[4:-1] if fun_name.startswith("jit(") else fun_name
    if name in PROGRAMS or not EAGER.match(fun_name):
        return name
    return "eager ops"


class Clock:
    """Compile seconds per program from JAX's duration events."""

    def __init__(self, monitoring):
        self.programs: dict[str, dict] = {}
        monitoring.register_event_duration_secs_listener(self._listen)

    def _listen(self, event, duration, **kwargs):
        field = EVENTS.get(event)
        if field is None:
            return
        p = self.programs.setdefault(
            _program(kwargs.get("fun_name", "?")),
            {"trace_s": 0.0, "lower_s": 0.0, "compile_s": 0.0, "count": 0},
        )
        p[field] += float(duration)
        p["count"] += field == "compile_s"


def hlo_size(text: str) -> dict:
    """Instructions, fusions, while loops and conditionals of an optimised HLO module."""
    lines = [ln.strip() for ln in text.splitlines()]
    instr = [ln for ln in lines if re.match(r"^(ROOT )?%\S+ = ", ln)]
    return {
        "instructions": len(instr),
        "fusions": sum(" fusion(" in ln for ln in instr),
        "whiles": sum(" while(" in ln for ln in instr),
        "conditionals": sum(" conditional(" in ln for ln in instr),
    }


def worker(case: str, problem_name: str, algorithm: str, seeds: int, horizon: int) -> dict:
    """One case in this (fresh) process."""
    import jax

    clock = Clock(jax.monitoring)
    import jax.numpy as jnp

    from jaxbco import problems, simulate
    from jaxbco.compare.driver import make_algorithm

    out = {"case": case, "problem": problem_name, "algorithm": algorithm}
    t0 = time.perf_counter()
    if case == "cli":
        from jaxbco.cli import main

        with tempfile.TemporaryDirectory() as tmp:
            code = main(["run", "--no-compile-cache", "--quiet", "--out", tmp + "/out"])
        out["exit_code"] = code
    else:
        from benchmarks.problems import CUSTOM  # a researcher's own problems, by name

        problem = CUSTOM[problem_name]() if problem_name in CUSTOM else problems.make(problem_name)
        alg = make_algorithm(algorithm, problem)
        if case == "make_run":
            fn = simulate.make_run(problem, horizon, algorithm=alg, checkpoints=[horizon])
            hyper = alg.default_hyper(problem, horizon)
            key, ids = jax.random.key(0), jnp.arange(seeds, dtype=jnp.uint32)
            jax.block_until_ready(fn(key, hyper, ids))  # the first call: what a user waits for
        else:
            simulate.sweep(problem, horizon, seeds=seeds, algorithm=alg, checkpoints=[horizon])
    out["wall_s"] = time.perf_counter() - t0
    out["programs"] = {
        k: {f: round(v, 4) if isinstance(v, float) else v for f, v in p.items()}
        for k, p in sorted(clock.programs.items())
    }
    out["total_compile_s"] = round(
        sum(p["trace_s"] + p["lower_s"] + p["compile_s"] for p in clock.programs.values()), 3
    )
    if case == "make_run":  # the program ``jax.jit(fn)`` compiles (the algorithm itself)
        jitted = jax.jit(fn, compiler_options=fn.compiler_options or None)
        out["sizes"] = {"make_run": hlo_size(jitted.lower(key, hyper, ids).compile().as_text())}
    return out


def _run_case(tree: str | None, args: tuple) -> dict:
    env = dict(os.environ)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    if tree is not None:
        env["PYTHONPATH"] = tree + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, str(HERE), "--worker", *map(str, args)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]}
    return json.loads(lines[-1])


def _machine() -> dict:
    cpu = platform.processor()
    try:
        for ln in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--trees", nargs="*", default=[None])
    ap.add_argument("--cases", nargs="*", default=["make_run", "sweep", "cli"])
    ap.add_argument("--problems", nargs="*", default=None)
    ap.add_argument("--algorithms", nargs="*", default=[DEFAULT])
    ap.add_argument("--seeds", type=int, default=64)
    ap.add_argument("--horizon", type=int, default=200)
    a = ap.parse_args(argv)
    names = a.problems or [n for n in problems.PROBLEMS if not n.startswith("portfolio:")]
    plan = []
    for case in a.cases:
        if case == "cli":
            plan.append((case, "quadratic-ball", DEFAULT))
            continue
        algs = a.algorithms if case == "sweep" else a.algorithms[:1]
        plan += [(case, n, alg) for n in names for alg in algs]
    rows = []
    for case, name, alg in plan:
        for tree in a.trees:
            row = _run_case(tree, (case, name, alg, a.seeds, a.horizon))
            row.update(tree=tree or str(HERE.parents[1]), case=case, problem=name, algorithm=alg)
            print(json.dumps(row), flush=True)
            rows.append(row)
    out = {"machine": _machine(), "seeds": a.seeds, "horizon": a.horizon, "rows": rows}
    pathlib.Path(a.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        case, name, alg, seeds, horizon = sys.argv[2:7]
        print(json.dumps(worker(case, name, alg, int(seeds), int(horizon))), flush=True)
    else:
        main()
