"""Standalone reproduction (JAX only, no jaxbco): XLA:CPU crashes the process, instead of raising
an error, when the process's memory-map table is full (``vm.max_map_count``, 65,530 by default).

Why it matters here (project issue 42 item 5): every kernel of a compiled CPU program is loaded
into its own three anonymous mappings (code r-x, constants r--, data rw-, one to three pages
each), which stay while the executable is alive, i.e. while JAX's caches hold it.  One jaxbco
sweep program is ~370 kernels, ~1,100 mappings; tests/test_constraint_scale.py alone reaches
~10,700.  A pytest worker that has compiled most of the suite without ever dropping its caches
reaches the limit; the next compile then fails inside LLVM's JIT memory manager:

    E... execution_engine.cc:54] LLVM compilation error: Cannot allocate memory
    (once per kernel that fails), then either
    E... contiguous_section_memory_manager.cc:148] Failed to satisfy suballocation request for 2338
    LLVM ERROR: Unable to allocate section memory!
    Fatal Python error: Aborted                         (SIGABRT, exit 134; this script)
or
    Fatal Python error: Segmentation fault              (SIGSEGV, exit 139; a jaxbco sweep)
with Python's stack at jax/_src/compiler.py, line 353, in backend_compile_and_load
(jax/jaxlib 0.10.2, CPU, Linux x86-64).  pytest-xdist shows only that the worker crashed: the
log lines go to the worker's stderr.

The default mode fills the map table with ``mprotect``-split pages (ctypes, a second), leaving
``--leave`` free entries, then compiles one program of ``--steps`` kernels: a few seconds.
``--natural`` instead keeps compiling distinct programs (and keeping them, as the jit caches
do) until the limit is crossed: no ctypes, but ~15 minutes on 2 cores.

    python benchmarks/xla_abort_repro.py              # crashes (SIGABRT, exit 134)
    python benchmarks/xla_abort_repro.py --clear      # jax.clear_caches() first: completes
    python benchmarks/xla_abort_repro.py --natural    # the same crash, by compiling alone

Expected for an upstream report (openxla/xla): a Python exception (XlaRuntimeError
RESOURCE_EXHAUSTED) from ``compile()``, not a segfault; and perhaps fewer mappings per kernel.
"""

from __future__ import annotations

import argparse
import ctypes
import faulthandler
import os
import time

import jax
import jax.numpy as jnp


def n_maps() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def max_map_count() -> int:
    with open("/proc/sys/vm/max_map_count") as f:
        return int(f.read())


def fill_map_table(leave: int) -> None:
    """Use all but ``leave`` of the process's memory-map entries: one anonymous region whose
    every other page is made PROT_NONE, so that each page is its own mapping."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    page = os.sysconf("SC_PAGE_SIZE")
    pages = max_map_count() - n_maps() - leave
    prot_read, map_private_anonymous = 1, 0x22
    base = libc.mmap(None, pages * page, prot_read, map_private_anonymous, -1, 0)
    assert base not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
    for i in range(0, pages, 2):
        assert libc.mprotect(base + i * page, page, 0) == 0, os.strerror(ctypes.get_errno())


def many_kernels(steps: int, seed: float):
    """A program of about ``steps`` CPU kernels (a reduction between elementwise ops keeps each
    step its own fusion)."""

    def f(x):
        for k in range(steps):
            x = jnp.sin(x * (k + seed)) + jnp.max(x) * x[::-1]
        return x

    return f


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leave", type=int, default=200, help="free map entries left")
    parser.add_argument("--steps", type=int, default=100, help="kernels in the compiled program")
    parser.add_argument("--clear", action="store_true", help="jax.clear_caches() before compiling")
    parser.add_argument("--natural", action="store_true", help="reach the limit by compiling only")
    args = parser.parse_args()
    faulthandler.enable()
    print(jax.__version__, jax.default_backend(), "vm.max_map_count", max_map_count(), flush=True)
    x = jnp.ones((64,))
    kept = []
    if args.natural:
        t0 = time.time()
        for i in range(10**6):  # ~3 mappings per kernel, kept alive as the jit caches keep them
            kept.append(jax.jit(many_kernels(args.steps, 0.5 + i)).lower(x).compile())
            print(f"program {i}: {n_maps()} mappings, {time.time() - t0:.0f} s", flush=True)
    before = n_maps()
    kept.append(jax.jit(many_kernels(args.steps, 0.5)).lower(x).compile())
    print(f"one program of {args.steps} kernels: +{n_maps() - before} mappings", flush=True)
    fill_map_table(args.leave)
    if args.clear:
        jax.clear_caches()
        kept.clear()  # what the caches held
    print(f"map table: {n_maps()} of {max_map_count()}; compiling", flush=True)
    kept.append(jax.jit(many_kernels(args.steps, 1.5)).lower(x).compile())
    print(f"compiled: {n_maps()} mappings (no crash)", flush=True)


if __name__ == "__main__":
    main()
