"""How jaxbco's programs are compiled: XLA options (CPU backend) and loop unrolling (at the end).

jaxlib 0.10's CPU compiler hands reductions to YNNPACK ("ynn" fusions).  In a loop nested in
the round loop (the subgradient solver's K steps, the dual solvers' Newton and bracket
iterations, the comparator's FISTA) those calls are slow: with them switched off the
subgradient solver ran 2.6x faster and the polyhedral, box, smooth and logistic problems
1.9-8.8x faster; only a loop-free round (the closed-form ball n halfspace prox with a
quadratic or linear loss) is ~30% faster with them on (benchmarks/NOTES.md).  So each
top-level program gets

    {}                                               if it has no such inner loop,
    {"xla_cpu_experimental_ynn_fusion_type": ""}     otherwise,

as ``compiler_options`` (``sweep`` chooses for its comparator pass and its rounds separately;
for ``make_run``'s function use ``jax.jit(fn, compiler_options=fn.compiler_options)``).
Results agree to float32 round-off either way (reductions are summed in another order); a
seed's result stays bitwise independent of its batch under both.  ``JAXBCO_YNN=on|off|auto``
(default auto) overrides the choice.  On other backends, or with a jaxlib that does not
know the option, the options are empty.
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


def round_loop_free(problem, algorithm) -> bool:
    """Whether a round's update has no inner loop: the Dual solver's (or a baseline's
    projection's) closed form on a ball with one halfspace or one ball constraint."""
    from jaxbco.sets import L2Ball
    from jaxbco.solvers import Dual

    solver = getattr(algorithm, "solver", Dual())
    return (isinstance(solver, Dual) and isinstance(problem.domain, L2Ball)
            and solver.path(problem.domain, problem.constraint).startswith("closed form"))


def comparator_loop_free(problem) -> bool:
    """Whether x* has a closed form (quadratic or linear loss: a projection of a sufficient
    statistic) on a ball with one halfspace; other losses run FISTA."""
    from jaxbco import losses

    return (isinstance(problem.loss, (losses.Quadratic, losses.Linear))
            and round_loop_free(problem, None))


def options(problem, algorithm, *, comparator: bool = True, part: str = "run",
            minor: bool | None = None) -> tuple:
    """The compiler options, a hashable tuple of (name, value) pairs (``dict(...)`` of it is
    what ``jax.jit`` takes), for ``part`` = "run" (the whole run in one program), "start"
    (the comparator pass and initial state) or "advance" (the rounds).  ``comparator``: whether
    a comparator pre-pass runs; ``minor``: whether the rounds run seeds-minor (default:
    ``jaxbco._minor.applies``), where YNNPACK's reductions are the faster choice even with an
    inner loop (measured 2.5x for ``Subgradient(20)``, 5x for the closed form)."""
    choice = os.environ.get(ENV, "auto")
    if choice not in ("auto", "on", "off"):
        raise ValueError(f"{ENV} must be one of auto, on, off; got {choice!r}")
    if choice == "on" or jax.default_backend() != "cpu":
        return ()
    if choice == "auto":
        from jaxbco import _minor

        minor = _minor.applies(problem, algorithm) if minor is None else minor
        rounds = minor or round_loop_free(problem, algorithm)
        start = not comparator or comparator_loop_free(problem)
        free = {"run": rounds and start, "start": start, "advance": rounds}[part]
        if free:
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
