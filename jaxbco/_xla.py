"""How jaxbco's programs are compiled: XLA options (CPU backend) and loop unrolling (at the end).

jaxlib 0.10's CPU compiler hands reductions to YNNPACK ("ynn" fusions).  jaxbco switches them
off on the CPU, for every program:

    {"xla_cpu_experimental_ynn_fusion_type": ""}

as ``compiler_options`` (``sweep`` passes them; for ``make_run``'s function use
``jax.jit(fn, compiler_options=fn.compiler_options)``).  Two reasons (benchmarks/NOTES.md):
  * correctness: with them on, a seed's result is not bitwise independent of its batch at
    large batches (seed 5 alone vs in a batch of 4208: regret differs by 7e-14 in float64,
    x* by 1.5e-8 in float32, quadratic-ball, Dual); with them off it is (tested);
  * speed: in loops nested in the round loop (the subgradient steps, the dual solvers'
    Newton and bracket iterations, the comparator's FISTA) they are 1.9-8.8x slower; only the
    closed-form rounds were faster with them (by 30% under vmap, 18% seeds-minor).
``JAXBCO_YNN=on`` keeps XLA's default (faster closed-form rounds, batch independence only up
to a few dozen seeds); ``off`` (the default) or ``auto`` switch them off.  On other backends,
or with a jaxlib that does not know the option, the options are empty.
"""

from __future__ import annotations

import functools
import os

import jax
import jax.numpy as jnp

ENV = "JAXBCO_YNN"
YNN_OFF = (("xla_cpu_experimental_ynn_fusion_type", ""),)


@functools.lru_cache(maxsize=None)
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
    choice = os.environ.get(ENV, "off")
    if choice not in ("auto", "on", "off"):
        raise ValueError(f"{ENV} must be one of auto, on, off; got {choice!r}")
    if choice == "on" or jax.default_backend() != "cpu":
        return ()
    return YNN_OFF if _supported(YNN_OFF) else ()


# Loop unrolling.  ``JAXBCO_SCAN_UNROLL`` (rounds per iteration of the round scan and the
# comparator's scans) and ``JAXBCO_INNER_UNROLL`` (the subgradient solver's K steps; 0 =
# fully) are read when a program is traced; they change how the loops are compiled, not what
# they compute (results agree to float32 round-off).  Both default to 1 (rolled) everywhere;
# measured (benchmarks/RESULTS.md, GPU section; NVIDIA H100, d = 10, float32):
#   inner steps, K = 20 subgradient, fully unrolled (JAXBCO_INNER_UNROLL=0): run 2.32 s ->
#     0.94-0.97 s for 1e4 seeds x 1e4 rounds (compile 2.3 -> 3.1-4.4 s), 0.51 s -> 0.079 s
#     for 4096 x 2000 but with compile 2.4 s -> 23-28 s at 4096 and 16384 seeds (3.0 s at
#     1024): so not the default; worth it for repeated calls of one compiled program.
#   rounds, Dual solver (JAXBCO_SCAN_UNROLL=4 / 8 / 16): run 0.45 s -> 0.30 / 0.26 / 0.25 s,
#     compile 3.1 s -> 7.3 / 12.1 / 27.8 s.  No gain for the rolled subgradient solver.
#   CPU (2-core EPYC): unrolled K steps ran 8x slower, unrolled rounds no faster.
SCAN_UNROLL_ENV = "JAXBCO_SCAN_UNROLL"
INNER_UNROLL_ENV = "JAXBCO_INNER_UNROLL"


def _unroll(env: str) -> int:
    raw = os.environ.get(env)
    if raw is None:
        return 1
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"{env} must be an integer >= 0 (0: unroll fully where allowed); got {raw!r}")
    return value


def scan_unroll() -> int:
    """Rounds per iteration of the round scan (``lax.scan``'s ``unroll``), >= 1."""
    return max(1, _unroll(SCAN_UNROLL_ENV))


def inner_unroll(steps: int) -> int:
    """``unroll`` for a fixed-length inner loop of ``steps`` iterations (0 in the env: all)."""
    value = _unroll(INNER_UNROLL_ENV)
    return max(1, steps) if value == 0 else max(1, min(value, steps))
