#!/usr/bin/env bash
# The throughput harness on a GPU machine, in one call (a lent device's time is short).
#
#   OUT=/some/dir [STEPS="kernel headline hlo workload seeds"] bash benchmarks/gpu.sh [quick]
#
# Runs from the repository root with the machine's own jax (no install: PYTHONPATH=.).
# Writes every throughput record (JSON lines, with the XLA_FLAGS variant in "env" and the unroll arguments) to
# $OUT/gpu.jsonl, the optimised HLO of the headline programs to $OUT/hlo.tgz, and prints a
# table last.  Steps, most important first, each under its own time limit:
#   0. "kernel": the fused round-loop kernel (benchmarks/kernel.py: agreement with the scan
#      engine on the device, 1e4 x 1e4 x d = 10 against the scan engine, launch variants,
#      seeds 1e3..1e6, 1e5 x 1e5), records in $OUT/kernel.jsonl;
#   1. the scan engine on the GPU target: 1e4 seeds x 1e4 rounds x d = 10, both solvers;
#   2. the issue's CPU workload (4096 x 2000) with the NumPy peers on this machine's CPU;
#   3. seeds scaling 1024 .. 262144 at T = 2000;
#   4. the optimised HLO (T = 100) for reading offline;
#   and, when STEPS names them: "problems" (benchmarks.problems on the device, every named
#   problem in one process, the fused kernel where it covers the run: $OUT/problems.jsonl),
#   "baselines" (benchmarks.problems --algorithms on quadratic-ball and logistic-ball: every
#   registered algorithm through the kernel, $OUT/baselines.jsonl),
#   "nyse" (nyse-portfolio, 1000 seeds x 5401 days: $OUT/problems.jsonl), "variants" (loop-unrolling and XLA-flag variants of step 1),
#   "tests" (the float64 reference and engine tests on the GPU), "memory" (benchmarks.memory,
#   1e4 seeds x 1e5 rounds through ``sweep``) and "cli" (the README's main job).
# "quick" shrinks every size (a dry run of the script on a CPU machine).
set -u
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
PY=${PY:-python3}
OUT=${OUT:?set OUT to a directory}
LOG="$OUT/gpu.jsonl"
STEPS=${STEPS:-kernel headline hlo workload seeds}
on() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
S=10000 T=10000 WS=4096 WT=2000 ST=2000 SEEDS="1024 4096 16384 65536 262144" LIM=120
if [ "${1:-}" = quick ]; then
  S=256 T=200 WS=256 WT=100 ST=100 SEEDS="256 1024" LIM=120
fi

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv 2>/dev/null
"$PY" - <<'EOF'
import jax, jaxlib, optax, equinox, chex, numpy
print("jax", jax.__version__, "jaxlib", jaxlib.__version__, "optax", optax.__version__,
      "equinox", equinox.__version__, "numpy", numpy.__version__, jax.devices())
EOF

bench() {  # bench LABEL ENV... -- ARGS...
  local label=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local t0=$SECONDS
  env "${envs[@]}" timeout "$LIM" "$PY" -m benchmarks.throughput --json "$@" \
    | sed -u "s/^{\"impl\"/{\"label\": \"$label\", \"impl\"/" | tee -a "$LOG"
  echo "# $label: rc ${PIPESTATUS[0]}, $((SECONDS - t0)) s" >&2
}

if on kernel; then
  t0=$SECONDS
  if [ "${1:-}" = quick ]; then KQ=--quick; else KQ=; fi
  timeout "${KLIM:-420}" "$PY" -m benchmarks.kernel --out "$OUT" $KQ ${KSTEPS:+--steps $KSTEPS} ${KCONFIGS:+--configs $KCONFIGS}
  echo "# kernel: rc $?, $((SECONDS - t0)) s" >&2
fi

if on nyse; then
  t0=$SECONDS
  if [ "${1:-}" = quick ]; then PS=16 PT=100; else PS=1000 PT=5401; fi
  timeout "${NLIM:-150}" "$PY" -m benchmarks.problems --json --one-process --seeds $PS --horizon $PT --repeats 1 \
    --problems nyse-portfolio | tee -a "$OUT/problems.jsonl"
  echo "# nyse: rc ${PIPESTATUS[0]}, $((SECONDS - t0)) s" >&2
fi

if on problems; then
  t0=$SECONDS
  if [ "${1:-}" = quick ]; then PS=64 PT=50; else PS=10000 PT=500; fi
  timeout "${PLIM:-300}" "$PY" -m benchmarks.problems --json --one-process --seeds $PS --horizon $PT \
    --repeats 2 ${PPROBLEMS:+--problems $PPROBLEMS} | tee -a "$OUT/problems.jsonl"
  echo "# problems: rc ${PIPESTATUS[0]}, $((SECONDS - t0)) s" >&2
fi

if on baselines; then
  t0=$SECONDS
  if [ "${1:-}" = quick ]; then PS=64 PT=50; else PS=10000 PT=500; fi
  timeout "${BLIM:-240}" "$PY" -m benchmarks.problems --json --one-process --algorithms --seeds $PS \
    --horizon $PT --repeats 2 --problems quadratic-ball,logistic-ball | tee -a "$OUT/baselines.jsonl"
  echo "# baselines: rc ${PIPESTATUS[0]}, $((SECONDS - t0)) s" >&2
fi

H=(--impls jaxbco --seeds "$S" --horizon "$T" --dim 10 --repeats 2)
if on headline; then
bench headline JAXBCO_NONE=1 -- "${H[@]}" --solver default
bench headline JAXBCO_NONE=1 -- "${H[@]}" --solver subgradient --inner-steps 20
fi

if on variants; then  # the loop-unrolling choices behind Subgradient(unroll) and scan_unroll
bench variants JAXBCO_NONE=1 -- "${H[@]}" --solver subgradient --inner-steps 20 --inner-unroll 0
bench variants JAXBCO_NONE=1 -- "${H[@]}" --solver subgradient --inner-steps 20 --scan-unroll 4
for u in 4 8 16; do bench variants JAXBCO_NONE=1 -- "${H[@]}" --solver default --scan-unroll $u; done
bench variants XLA_FLAGS=--xla_gpu_enable_command_buffer= -- "${H[@]}" --solver default
fi

if on tests; then
  t0=$SECONDS
  timeout 200 "$PY" -m pytest -q -p no:cacheprovider tests/test_reference_trajectory.py tests/test_engine.py \
    2>&1 | tail -25 | tee "$OUT/tests.txt"
  echo "# tests: $((SECONDS - t0)) s" >&2
fi

if on memory; then
  timeout 120 "$PY" -m benchmarks.memory --seeds "$S" --horizon $((10 * T)) --json | tee -a "$OUT/memory.jsonl"
fi

if on cli; then
  t0=$SECONDS
  timeout 120 "$PY" -m jaxbco run --out "$(mktemp -d)" 2>&1 | tail -12
  echo "# cli: $((SECONDS - t0)) s wall" >&2
fi

if on hlo; then
DUMP=$(mktemp -d)
for solver in default subgradient; do
  XLA_FLAGS="--xla_dump_to=$DUMP/$solver --xla_dump_hlo_as_text" timeout 90 "$PY" -m benchmarks.throughput \
    --json --impls jaxbco --seeds "$S" --horizon 100 --repeats 1 --solver "$solver" >/dev/null
done
tar czf "$OUT/hlo.tgz" -C "$DUMP" . && ls -la "$OUT/hlo.tgz"
fi

on workload && for solver in subgradient default; do
  bench workload JAXBCO_NONE=1 -- --impls jaxbco,numpy-vectorised,per-seed-loop --seeds "$WS" \
    --horizon "$WT" --dim 10 --inner-steps 20 --repeats 1 --loop-seeds 2 --solver "$solver"
done

on seeds && for s in $SEEDS; do
  bench seeds JAXBCO_NONE=1 -- --impls jaxbco --seeds "$s" --horizon "$ST" --dim 10 --repeats 2 \
    --solver subgradient --inner-steps 20 --checkpoints 20
done

"$PY" - "$LOG" <<'EOF'
import json, sys
import os
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"label"')] if os.path.exists(sys.argv[1]) else []
print(f"{'label':9} {'impl':17} {'solver':11} {'env':45} {'seeds':>6} {'T':>6} {'compile':>7} {'run_s':>8} {'seed-rounds/s':>13} {'dev MB':>7}")
for r in rows:
    env = " ".join([f"{k}={v}" for k, v in (r.get("env") or {}).items()]
                   + [f"{k}={r[k]}" for k in ("scan_unroll", "inner_unroll") if r.get(k, 1) != 1])
    dev = r.get("device_peak_mb")
    print(f"{r['label']:9} {r['impl']:17} {r['solver']:11} {env or '-':45} {r['seeds']:>6} {r['horizon']:>6} "
          f"{r['compile_s']:7.2f} {r['run_s']:8.3f} {r['seed_rounds_per_s']:13.3e} {dev if dev is None else round(dev)!s:>7}")
print("device:", rows[0]["device"] if rows else "?", "| cpu:", rows[0]["cpu"] if rows else "?")
EOF
