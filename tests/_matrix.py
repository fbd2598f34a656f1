"""Every named problem x every registered algorithm, end to end, as users run them (the
matrix's code; tests/test_matrix_{1,2,3,4}.py each run a quarter of the problems, so that
pytest-xdist's file-by-file distribution spreads them over the workers).

For each pair: float32 with 64-bit JAX off (the users' default) on the back-end the declarations
choose. For the pairs of ``BACKEND_PAIRS`` also float64 on every back-end the pair can take on a
CPU (the seeds-minor back-end where its components declare ``blocks``, and always the vmap
back-end: the same classes re-declared as undeclared subclasses, ``plain``). Asserted: the
back-end taken is the one the declarations choose; the curves, x* and x_T are finite and no seed
is flagged ``failed``; x* and x_T lie in X; hard violation never decreases; a seed alone equals
its run in the batch, bitwise; the two back-ends agree to float64 round-off (1e-10 relative).
``BACKEND_PAIRS`` covers every problem and every algorithm (Algorithm 1 on all twelve problems,
each other algorithm on one): the 108 pairs on both back-ends in both dtypes would be 432
programs.  The other 88 pairs, float32 only, are marked ``matrix`` (``-m "not matrix"`` leaves
them out); every run takes them (the whole matrix ~990 s on one core, benchmarks/NOTES.md).

Two settings x 3 seeds x T = 200 rounds: a short run at which every default schedule is
admissible on every named problem (at T = 30 Flaxman's delta = r T^(-1/4) shrinks the simplex
past its halfspace) and every path is taken (x*, the prox or projection, the multipliers, the
checkpoints' bookkeeping).  The fused kernel needs a GPU (tests/test_fused.py interprets it).
"""

import dataclasses
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import backends, problems, simulate
from jaxbco._src.xla import release_compiled
from jaxbco.algorithms import ALGORITHMS
from jaxbco.compare.driver import make_algorithm

T = 200
SEEDS = np.arange(3)
CHECKPOINTS = np.asarray([1, 7, 50, T])
#: Every named problem: the portfolios by one of them (they differ only in their data).
NAMED = [n for n in problems.PROBLEMS if not n.startswith("portfolio:")] + ["portfolio:djia"]
CURVES = simulate.METRICS + ("x_star", "x_final")


@functools.cache
def _problem(name):
    return problems.make(name, horizon=T)


def _plain(algorithm):
    """The same algorithm under a subclass that declares nothing: the vmap back-end."""
    cls = type(algorithm)
    plain = type("Plain" + cls.__name__, (cls,), {})
    return plain(
        **{f.name: getattr(algorithm, f.name) for f in dataclasses.fields(algorithm) if f.init}
    )


def _run(problem, algorithm, dtype, seeds=SEEDS):
    hyper = algorithm.default_hyper(problem, T)
    hyper = jax.tree_util.tree_map(
        lambda v: jnp.stack([jnp.asarray(v), 1.1 * jnp.asarray(v)]), hyper
    )
    return simulate.sweep(
        problem, T, hyper, seeds=seeds, algorithm=algorithm, dtype=dtype, checkpoints=CHECKPOINTS
    )


def _seed(res, metric, i):
    """Seed i's values: curves (G, S, K) and x_final (G, S, d) on axis -2, x* (S, d) on 0."""
    v = np.asarray(getattr(res, metric))
    return v[i] if metric == "x_star" else v[..., i, :]


def _finite(res, what):
    assert not np.any(res.failed), f"{what}: failed seeds {np.argwhere(res.failed).tolist()}"
    chex.assert_tree_all_finite(
        {m: np.asarray(getattr(res, m)) for m in CURVES}, custom_message=what
    )  # a failure names the curve
    assert np.all(np.diff(res.hard_violation, axis=-1) >= 0), f"{what}: hard violation decreases"


def _in_set(problem, res, what):
    """x_T and x* lie in X: their distance to their projection onto X (in the problem's
    float32) is at most 1e-5 (1 + diam X)."""
    domain = problem.domain
    tol = 1e-5 * (1.0 + float(domain.diameter()))
    for m in ("x_final", "x_star"):
        x = np.asarray(getattr(res, m), np.float32).reshape(-1, problem.dim)
        gap = float(np.max(np.abs(np.asarray(jax.vmap(domain.project)(jnp.asarray(x))) - x)))
        assert gap <= tol, f"{what}: {m} is {gap:.3g} outside X"


def _agree64(a, b, what):
    """float64: the back-ends equal to round-off, |a - b| <= 1e-11 scale + 1e-10 |b| with scale
    = max(1, max |b|) per metric (a curve near zero held to its run's round-off)."""
    for m in CURVES:
        x, y = np.asarray(getattr(a, m), float), np.asarray(getattr(b, m), float)
        scale = max(1.0, float(np.max(np.abs(y))))
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-11 * scale, err_msg=f"{what}: {m}")


#: The pairs whose back-ends are compared in float64 (module docstring): Algorithm 1 on every
#: named problem, and each other algorithm on one (two on each of NAMED's first four).
_OTHERS = [a for a in ALGORITHMS if a != "rectified-bco"]
BACKEND_PAIRS = frozenset(
    [(p, "rectified-bco") for p in NAMED]
    + [(p, _OTHERS[2 * i + k]) for i, p in enumerate(NAMED[: len(_OTHERS) // 2]) for k in (0, 1)]
)

_CURRENT = [None]


def _release_between_problems(name):
    """Drop the compiled programs when the problem changes: each CPU executable holds ~1000
    memory mappings (``jaxbco._src.xla.release_compiled``), and this module compiles ~430."""
    if _CURRENT[0] != name:
        release_compiled()
        _CURRENT[0] = name


def _runs(name, alg_name, dtype, every_backend):
    """{back-end: Result} of the pair in ``dtype`` on the back-end chosen (``every_backend``:
    on every back-end it can take); a seed alone equals its run in the batch, bitwise (the same
    compiled program)."""
    problem = _problem(name)
    algorithm = make_algorithm(alg_name, problem)
    taken, _ = backends.choose(problem, algorithm)
    plain = _plain(algorithm)
    assert backends.choose(problem, plain)[0] == backends.VMAP
    results = {}
    both = every_backend and taken != backends.VMAP
    for alg in [algorithm, plain] if both else [algorithm]:
        res = _run(problem, alg, dtype)
        assert res.engine == backends.choose(problem, alg)[0]
        what = f"{name} x {alg_name} ({dtype}, {res.engine})"
        _finite(res, what)
        _in_set(problem, res, what)
        results[res.engine] = res
        if res.engine == backends.SEEDS_MINOR:  # the same compiled program, one seed alone
            alone = _run(problem, alg, dtype, seeds=SEEDS[1:2])
            chex.assert_trees_all_equal(  # bitwise; a failure names the curve
                {m: _seed(alone, m, 0) for m in CURVES},
                {m: _seed(res, m, 1) for m in CURVES},
                custom_message=f"{name} x {alg_name} ({dtype}): seed 1 alone vs in its batch",
            )
    return results


#: The problems of each test file, balanced by their measured cost (~500 s each on one core);
#: a named problem listed in none runs in part 4.
PARTS = {
    1: ("logistic-ball", "switching-box", "quadratic-ball"),
    2: ("online-logistic", "nyse-portfolio", "strongly-convex-ball"),
    3: ("hutchinson-toy", "time-varying-ball", "simplex-quadratic"),
    4: ("yu-neely", "strongly-convex-time-varying", "portfolio:djia"),
}


def part_problems(part: int) -> list:
    listed = {p for names in PARTS.values() for p in names}
    return list(PARTS[part]) + ([p for p in NAMED if p not in listed] if part == 4 else [])


def make_test(part: int):
    """The test of one part: each of its problems x every registered algorithm."""
    pairs = [
        pytest.param(
            p,
            a,
            id=f"{p}-{a}",
            marks=() if (p, a) in BACKEND_PAIRS else pytest.mark.matrix,
        )
        for p in part_problems(part)
        for a in ALGORITHMS
    ]

    @pytest.mark.slow
    @pytest.mark.parametrize("name,alg_name", pairs)
    def test_pair(name, alg_name):
        """float32 with 64-bit JAX off (what a user's first run does), then (BACKEND_PAIRS)
        float64 on both back-ends."""
        check_pair(name, alg_name)

    return test_pair


def check_pair(name, alg_name):
    _release_between_problems(name)
    assert not jax.config.jax_enable_x64
    _runs(name, alg_name, "float32", every_backend=False)
    if (name, alg_name) not in BACKEND_PAIRS:
        return
    with jax.enable_x64(True):
        r64 = _runs(name, alg_name, "float64", every_backend=True)
    if len(r64) == 2:
        minor, vmap = backends.SEEDS_MINOR, backends.VMAP
        _agree64(r64[minor], r64[vmap], f"{name} x {alg_name} (float64): seeds-minor vs vmap")
