"""How jaxbco's programs are compiled: XLA options for the CPU backend.

jaxlib 0.10's CPU compiler hands reductions to YNNPACK ("ynn" fusions).  jaxbco switches them
off on the CPU for every program it compiles (``sweep``'s, ``make_run``'s):

    {"xla_cpu_experimental_ynn_fusion_type": ""}

Two reasons:
  * correctness: with them on, a seed's result is not bitwise independent of its batch at
    large batches (it differs in the last digits); with them off it is (tested);
  * speed: in loops nested in the round loop (the subgradient steps, the dual solvers'
    Newton and bracket iterations, the comparator's FISTA) they are slower; only the
    closed-form rounds are faster with them.
Batch independence is a guarantee, so the choice does not depend on the program's structure
and there is no switch.

Programs that run once per run, not once per chunk of rounds, and compute no reported number
(x*'s certificate, the input checks: ``one_shot_options``) are also compiled with XLA's
classic CPU emitters,

    {"xla_cpu_use_fusion_emitters": False}

which compile each fusion faster (x*'s certificate 20-40% less compile) and run loops slower:
the rounds' programs 11-60% (so not there; nor x*'s iterative solvers, whose x* they change
in round-off), a whole sweep at most ~3% through the certificate (benchmarks/NOTES.md).  On other backends, or with a jaxlib that does not know the option,
the options are empty.  Loop unrolling is an argument where it applies
(``Subgradient(unroll=...)``, ``sweep``/``make_run``'s ``scan_unroll``).
"""

from __future__ import annotations

import functools

import equinox as eqx
import jax
import jax.numpy as jnp

YNN_OFF = (("xla_cpu_experimental_ynn_fusion_type", ""),)
CLASSIC_EMITTERS = (("xla_cpu_use_fusion_emitters", False),)


@functools.cache
def _supported(options: tuple) -> bool:
    """Whether this jaxlib's CPU compiler accepts ``options`` (compiles a scalar add once)."""
    try:
        jax.jit(lambda x: x + 1, compiler_options=dict(options)).lower(jnp.zeros(())).compile()
    except Exception:  # an unknown option name: compile with the defaults
        return False
    return True


def options() -> tuple:
    """The compiler options, a hashable tuple of (name, value) pairs (``dict(...)`` of it is
    what ``jax.jit`` takes): YNNPACK fusions off on the CPU (see the module docstring)."""
    if jax.default_backend() != "cpu":
        return ()
    return _accepted()[0]


def one_shot_options() -> tuple:
    """``options()`` and, where this jaxlib takes it, the classic CPU emitters: for programs
    run once per run (see the module docstring)."""
    if jax.default_backend() != "cpu":
        return ()
    return _accepted()[1]


@functools.cache
def _accepted() -> tuple:
    """(``options()``, ``one_shot_options()``) on the CPU: one probe where both are taken."""
    if _supported(YNN_OFF + CLASSIC_EMITTERS):
        return YNN_OFF, YNN_OFF + CLASSIC_EMITTERS
    base = YNN_OFF if _supported(YNN_OFF) else ()
    return base, base + CLASSIC_EMITTERS if _supported(base + CLASSIC_EMITTERS) else base


def one_shot(fn):
    """``eqx.filter_jit(fn)`` compiled with ``one_shot_options()``, for a host-side check run
    once per call (validation, feasibility); the program is made at the first call, so that
    importing jaxbco starts no backend."""
    jitted = []

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if not jitted:
            options = one_shot_options()
            kw = {"compiler_options": dict(options)} if options else {}
            jitted.append(eqx.filter_jit(fn, **kw))
        return jitted[0](*args, **kwargs)

    return call


def release_compiled() -> None:
    """Drop every compiled program (``jax.clear_caches``): the drivers that compile one
    program per algorithm and horizon (``compare``, ``ladder``) call it between algorithms.
    Each CPU executable keeps its code in memory mappings (~1000 per program here: 9 algorithms
    x a 2-horizon ladder on two problems held 43,000), and a process that passes the kernel's
    ``vm.max_map_count`` (65,530 by default) fails inside LLVM ("Cannot allocate memory") and
    segfaults: ``compare --all`` did after 12 minutes."""
    jax.clear_caches()
