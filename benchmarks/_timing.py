"""Shared by the benchmarks: compile a ``make_run`` function once, with its XLA options."""

from __future__ import annotations

import time

import jax


def compile_run(fn, key, hyper, ids):
    """(compiled, compile_s) for ``make_run``'s ``fn(key, hyper, ids)``, compiled ahead of
    time with ``fn.compiler_options`` (see ``jaxbco._src.xla``), then called once as a warm-up
    (its output returned third)."""
    jitted = jax.jit(fn, compiler_options=fn.compiler_options or None)
    t0 = time.perf_counter()
    compiled = jitted.lower(key, hyper, ids).compile()
    compile_s = time.perf_counter() - t0
    return compiled, compile_s, jax.block_until_ready(compiled(key, hyper, ids))
