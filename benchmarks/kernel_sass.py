"""The fused kernel's machine code for a Hopper GPU, read without a GPU.

    pip install triton            # not a jaxbco dependency: this script only
    python -m benchmarks.kernel_sass --configs 32x4,128x4,8x1 [--problem quadratic-ball]

For each launch choice (seeds per program x warps): Pallas lowers the kernel to Triton IR on
this machine (``lowering_platforms=("cuda",)``), the ``triton`` package compiles that IR for
sm_90a (ptxas included), and its ``ptxas -v`` and ``cuobjdump -sass`` report registers per
thread, spills, barriers, warp shuffles and the SASS instruction mix.  One JSON line each.
Counts are static instructions of the whole kernel (the round loop is nearly all of it), per
thread; x (threads per seed) = per seed.  What the GPU then does with them (latency, issue
rate) still needs a device: benchmarks/kernel.py.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import tempfile


def triton_ir(problem_name: str, block: int, dim: int = 10) -> str:
    """The kernel's Triton IR (text) for ``problem_name``, 256 seeds, the given block."""
    import jax._src.pallas.triton.lowering as lowering
    import jax._src.pallas.triton.pallas_call_registration as registration

    from jaxbco import fused, problems

    modules = []
    original = lowering.lower_jaxpr_to_triton_module

    def spy(*args, **kwargs):
        modules.append(original(*args, **kwargs))
        return modules[-1]

    registration.lowering.lower_jaxpr_to_triton_module = spy
    try:
        fused.lower_for_cuda(
            problems.make(problem_name, dim), fused.Config(block=block), seeds=256, horizon=100
        )
    finally:
        registration.lowering.lower_jaxpr_to_triton_module = original
    found = modules[-1]
    return str(getattr(found, "module", found))


def machine_code(ir: str, warps: int) -> dict:
    """Compile Triton IR for sm_90a; registers, spills and the SASS instruction mix."""
    import triton
    from triton.backends.compiler import GPUTarget

    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "jaxbco_rounds.ttir")
        with open(src, "w") as fh:
            fh.write(ir)
        kernel = triton.compile(
            src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": 1}
        )
        ptx = os.path.join(tmp, "k.ptx")
        with open(ptx, "w") as fh:
            fh.write(kernel.asm["ptx"])
        cubin = os.path.join(tmp, "k.cubin")
        with open(cubin, "wb") as fh:
            fh.write(kernel.asm["cubin"])
        tools = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
        ptxas = next(
            os.path.join(tools, n)
            for n in ("ptxas-blackwell", "ptxas")
            if os.path.exists(os.path.join(tools, n))
        )
        report = subprocess.run(
            [ptxas, "-arch=sm_90a", "-v", ptx, "-o", os.path.join(tmp, "v.cubin")],
            capture_output=True,
            text=True,
        ).stderr
        sass = subprocess.run(
            [os.path.join(tools, "cuobjdump"), "-sass", cubin], capture_output=True, text=True
        ).stdout
    ops = collections.Counter(
        m.split(".")[0]
        for m in re.findall(
            r"^\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass, re.M
        )
    )
    regs = re.search(r"Used (\d+) registers", report)
    spill = re.search(r"(\d+) bytes spill stores", report)
    integer = sum(
        ops[k] for k in ("IADD3", "LOP3", "SHF", "IMAD", "ISETP", "LEA", "IABS", "VIADD", "SEL")
    )
    return {
        "registers": int(regs.group(1)) if regs else None,
        "spill_bytes": int(spill.group(1)) if spill else None,
        "sass_instructions": sum(ops.values()),
        "int32": integer,
        "float": sum(ops[k] for k in ("FADD", "FFMA", "FMUL", "FSETP", "FSEL", "FMNMX", "MUFU")),
        "shuffles": ops["SHFL"],
        "barriers": ops["BAR"],
        "top": ops.most_common(12),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default="32x4,128x4,8x1,16x1,16x2")
    ap.add_argument("--problem", default="quadratic-ball")
    args = ap.parse_args(argv)
    for text in args.configs.split(","):
        block, warps = (int(v) for v in text.split("x"))
        rec = {
            "problem": args.problem,
            "block": block,
            "warps": warps,
            "threads_per_seed": 32 * warps / block,
            "occupancy_warps_per_sm_by_registers": None,
        }
        rec.update(machine_code(triton_ir(args.problem, block), warps))
        if rec["registers"]:
            blocks = 65536 // (rec["registers"] * 32 * warps)  # registers per SM / per block
            rec["occupancy_warps_per_sm_by_registers"] = min(64, blocks * warps)
        print(json.dumps(rec), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
