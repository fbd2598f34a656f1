"""The comparison study: every algorithm of ``ALGORITHMS`` on one problem, against theory.

``compare(problem_name, seeds, horizon)`` runs each algorithm with its documented
``default_hyper`` as ONE compiled ``sweep`` call (all seeds together; the time reported is
compile + run; x* is solved and certified by the first run and handed to the others,
``comparator.Optimum``), and returns a ``Comparison``: R_T/T, hard V_T = ∑ₜ [gₜ(xₜ)]₊, soft
V_T = ∑ₜ gₜ(xₜ) (mean with a 95% bootstrap interval of the mean over seeds), the final wealth
∏ₜ ⟨rₜ, xₜ⟩ on portfolio problems, wall times, the theorem bounds of rectified-bco
(``theory``) and the log-log slopes of the mean curves within the run over t ∈ [T/10, T]
(``fits``; exponents across horizons: ``ladder``).  With
``out`` it writes the table (Markdown and JSON) and a figure (``report.write``).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from jaxbco import plan, problems, simulate
from jaxbco._src.xla import release_compiled
from jaxbco.algorithms import registry
from jaxbco.compare.comparison import LADDER_SEEDS, Comparison  # noqa: F401 (LADDER_SEEDS: re-exported)
from jaxbco.compare.fits import fit_exponent
from jaxbco.compare.report import write
from jaxbco.compare.theory import bound_constants, bound_curves
from jaxbco.data import portfolio as pf
from jaxbco.summary import checked, interval, prox_uncertified, uncertified

# Presets of the results page (docs/results.md): 1000 seeds at the published horizons
# (Yu & Neely: T = 5000; Hutchinson & Alizadeh: T = 2000; online logistic regression: 10^4),
# and a ladder of horizons (LADDER_SEEDS each) for the exponents across T; nyse-portfolio at 1000
# seeds over all 5401 days.
PRESETS = {
    "yu-neely": dict(seeds=1000, horizon=5000, ladder=[625, 1250, 2500, 5000]),
    "hutchinson-toy": dict(seeds=1000, horizon=2000, ladder=[250, 500, 1000, 2000]),
    "online-logistic": dict(seeds=1000, horizon=10000, ladder=[1250, 2500, 5000, 10000]),
    "strongly-convex-time-varying": dict(
        seeds=1000,
        horizon=2000,  # Theorem 4's setting
        ladder=[250, 500, 1000, 2000],
    ),
    "nyse-portfolio": dict(seeds=1000, horizon=5401),
    # the other real-data sets over their whole length (horizon None: the data's)
    **{
        f"portfolio:{name}": dict(seeds=256, horizon=None)
        for name in ("djia", "msci", "sp500", "tse", "nyse_n")
    },
}


#: Evenly spaced checkpoint days added on portfolio problems (besides the log-spaced ones), so
#: wealth and violation are curves on a linear day axis, not a few points after day 2000.
DAY_CHECKPOINTS = 200


def study_checkpoints(horizon: int, count: int, *, days: bool = False) -> np.ndarray:
    """The study's checkpoint rounds: about ``count`` log-spaced rounds, and on a portfolio
    (``days``) ``DAY_CHECKPOINTS`` evenly spaced days besides, since wealth and violation
    accrue by calendar day and are drawn on a linear day axis.

    Args:
        horizon: the number of rounds T.
        count: about this many log-spaced rounds.
        days: add the evenly spaced days.

    Returns:
        The rounds, increasing, from 1 to T.

    Example:
        >>> gaps = np.diff(study_checkpoints(5401, 60, days=True))
        >>> int(gaps.max()) <= 5401 // DAY_CHECKPOINTS + 1
        True
    """
    cps = simulate.log_checkpoints(horizon, count)
    if days:
        cps = np.union1d(cps, np.rint(np.linspace(1, horizon, DAY_CHECKPOINTS)).astype(np.int64))
    return cps


def make_algorithm(name, problem):
    """The algorithm ``name`` names, built for the problem.

    Args:
        name: a registered name, a ``module:Name`` spec, a class or an instance
            (``jaxbco.algorithms.get``).
        problem: the problem (its ``strongly_convex`` flag picks the schedule where the
            algorithm has one).

    Returns:
        The algorithm instance.

    Example:
        >>> from jaxbco import problems
        >>> from jaxbco.compare import make_algorithm
        >>> type(make_algorithm("rectified-bco", problems.make("quadratic-ball", 3))).__name__
        'RectifiedBCO'
    """
    return registry.get(name).build(problem)


def default_hyper(algorithm, problem, horizon):
    """The algorithm's documented default hyperparameters for a problem and horizon.

    They take the problem's constants (F, G, D and, on a strongly convex problem, σ = the
    loss's modulus: Thms. 3-4, αₜ = σt).

    Args:
        algorithm: the algorithm.
        problem: the problem.
        horizon: the number of rounds T.

    Returns:
        The algorithm's hyperparameter Module (``Hyper`` for ``RectifiedBCO``).

    Example:
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import MahdaviPrimalDual, RectifiedBCO
        >>> from jaxbco.compare import default_hyper
        >>> problem = problems.make("strongly-convex-ball", dim=2)
        >>> float(default_hyper(RectifiedBCO(), problem, 100).sigma)   # the loss's modulus
        2.0
        >>> type(default_hyper(MahdaviPrimalDual(), problem, 100)).__name__
        'MahdaviHyper'
    """
    return algorithm.default_hyper(problem, horizon)


def compare(
    problem_name,
    seeds: int,
    horizon: int | None = None,
    *,
    dim: int | None = None,
    algorithms=None,
    out: str | None = None,
    dtype: str = "float32",
    key: int = 0,
    checkpoints: int = 60,
    verbose: bool = False,
    progress: bool | None = None,
    name: str | None = None,
) -> Comparison:
    """Run every algorithm (or those named) on one problem and set the results against theory.

    Each algorithm runs with its ``default_hyper`` as one compiled ``sweep`` over all seeds
    (the time reported is compile + run).  Per algorithm: R_T/T, hard V_T = ∑ₜ [gₜ(xₜ)]₊ and
    soft V_T = ∑ₜ gₜ(xₜ) (means with 95% bootstrap intervals over seeds), the log-log slopes of
    the mean curves over t ∈ [T/10, T], the wall times, and on portfolio problems the final
    wealth ∏ₜ ⟨rₜ, xₜ⟩; for rectified-bco the bounds of Hikima, Thms. 1-4
    (``theory``).  Portfolio problems run with ``comparator=False`` and get regret against the
    risk-constrained best constant-rebalanced portfolio.  When done it empties JAX's
    compilation caches (compiled programs hold memory mappings).

    Args:
        problem_name: a registered problem name, a ``module:Name`` spec or a ``Problem``
            (``jaxbco.problems.make``).
        seeds: the number of seeds S.
        horizon: the number of rounds T (None: the problem's own length for portfolio data,
            else 5000).
        dim: the problem's dimension (None: its default).
        algorithms: names, ``module:Name`` specs, classes or instances (None: every registered
            algorithm).
        out: a folder to write the table (Markdown and JSON) and the figure to (None: none).
        dtype: "float32" or "float64".
        key: the master PRNG seed.
        checkpoints: about this many log-spaced checkpoint rounds (portfolio problems add
            ``DAY_CHECKPOINTS`` evenly spaced days).
        verbose: print each algorithm's path before and its time after it runs (stderr).
        progress: as ``sweep``'s ``progress``.
        name: the title of tables and figures (default: the spec, or "own problem" for a
            ``Problem``).

    Returns:
        The ``Comparison``: one row per algorithm, the mean curves, the theory's constants and
        bounds.

    Raises:
        ValueError: an unknown problem or algorithm, or an input out of range.

    Example:
        >>> from jaxbco.compare import compare
        >>> res = compare("quadratic-ball", 4, 100, dim=3, algorithms=["rectified-bco"],
        ...               checkpoints=10)
        >>> [row["algorithm"] for row in res.rows], res.rows[0]["failed_seeds"]
        (['rectified-bco'], 0)
    """
    start_all = time.perf_counter()
    chosen = registry.resolve(algorithms)
    names = [r.name for r in chosen]
    problem = problems.make(problem_name, dim, horizon)
    if name is None:
        name = problem_name if isinstance(problem_name, str) else "own problem"
    problem_name = name
    portfolio = problem.loss.wealth
    if horizon is None:
        horizon = pf.problem_arrays(problem)[0].shape[0] if portfolio else 5000
    cps = study_checkpoints(horizon, checkpoints, days=portfolio)
    rectified = registry.reference().build(problem)  # the theorems' algorithm
    consts = bound_constants(problem, horizon, hyper=default_hyper(rectified, problem, horizon))
    bounds = bound_curves(consts, cps)
    fit_lo, fit_hi = max(10.0, horizon / 10.0), float(horizon)  # within-run slope: [T/10, T]

    x_star, comp_info, offset, base_loss, wealth_ref = None, None, None, None, None
    if portfolio:
        x_star, comp_info = pf.comparator(problem, horizon)
        x1 = np.asarray(problem.initial_point(), np.float64)
        offset = pf.regret_offset(problem, cps, x1, x_star)
        R, _ = pf.problem_arrays(problem, horizon)
        base_loss = np.cumsum(-np.log(R @ x1))[cps - 1]  # sum_{s<=t} f_s(x_1)
        wealth_ref = pf.wealth_baselines(problem, horizon, x_star)

    rows, curves = [], {}
    if verbose:  # the path of every algorithm, before anything runs
        width = max(map(len, names))
        print(f"  {problem_name}: back-end | prox | comparator", file=sys.stderr, flush=True)
        for record in chosen:
            path = plan.before(problem, record.build(problem), horizon, dtype=dtype)
            print(
                f"    {record.name:<{width}}  {plan.engine_text(path)} | {path.prox} | "
                f"{path.comparator} ({path.comparator_cost or 'no x*'})",
                file=sys.stderr,
                flush=True,
            )
    optimum = None  # x*, solved by the first run and handed to every other one
    for record in chosen:
        alg = record.name
        algorithm = record.build(problem)
        hyper = default_hyper(algorithm, problem, horizon)
        t0 = time.perf_counter()
        res = simulate.sweep(
            problem,
            horizon,
            hyper,
            seeds=seeds,
            key=key,
            algorithm=algorithm,
            checkpoints=cps,
            dtype=dtype,
            comparator=not portfolio,
            progress=progress,
            optimum=optimum,
        )
        optimum = res.optimum
        wall = time.perf_counter() - t0
        ok = ~np.asarray(res.failed[0])
        regret = np.asarray(res.regret[0], np.float64)
        curve = {
            "regret": regret,
            "hard_violation": np.asarray(res.hard_violation[0], np.float64),
            "soft_violation": np.asarray(res.soft_violation[0], np.float64),
        }
        row = {
            "algorithm": alg,
            "wall_s": wall,
            "failed_seeds": int((~ok).sum()),
            "x_star_uncertified_seeds": uncertified(res),
            "prox_uncertified_seeds": prox_uncertified(res),
            "x_star_checked": checked(res, "x_star_certificate"),
            "prox_checked": checked(res, "prox_certificate"),
            "engine": res.engine,
            "engine_reason": res.engine_reason,
            "prox_method": res.prox_method,
            "compile_s": res.compile_s,
            "seed_rounds_per_s": res.seed_rounds_per_s,
            "comparator_s": res.comparator_s,
        }
        if portfolio:
            # engine regret is against x_1: sum f(x_t) = R_t + sum f(x_1); shift to x*.
            curve["wealth"] = np.exp(-(regret + base_loss))
            curve["regret"] = regret + offset
            row["final_wealth"] = interval(curve["wealth"][ok, -1])
        row["regret_over_T"] = interval(curve["regret"][ok, -1] / horizon)
        row["hard_violation"] = interval(curve["hard_violation"][ok, -1])
        row["soft_violation"] = interval(curve["soft_violation"][ok, -1])
        mean = lambda a: np.nanmean(a[ok], axis=0) if ok.any() else np.full(len(cps), np.nan)
        row["regret_exponent"] = fit_exponent(cps, mean(curve["regret"]), fit_lo, fit_hi)
        row["violation_exponent"] = fit_exponent(cps, mean(curve["hard_violation"]), fit_lo, fit_hi)
        rows.append(row)
        curves[alg] = curve
        if verbose:
            print(
                f"  {problem_name}: {alg} done in {wall:.1f} s, {res.seed_rounds_per_s:.3g} "
                f"seed-rounds/s (compile {res.compile_s:.1f} s and x* {res.comparator_s:.1f} s "
                f"excluded)",
                file=sys.stderr,
                flush=True,
            )

    result = Comparison(
        problem=problem_name,
        seeds=int(seeds),
        horizon=int(horizon),
        dim=problem.dim,
        dtype=str(dtype),
        rounds=cps,
        rows=rows,
        curves=curves,
        constants=consts,
        bounds=bounds,
        fit_range=(fit_lo, fit_hi),
        wealth_baselines=wealth_ref,
        comparator_info=comp_info,
    )
    if portfolio:
        result.comparator_info = dict(comp_info, x_star=np.asarray(x_star).tolist())
    result.wall_s = time.perf_counter() - start_all
    release_compiled()  # not reused by another problem's comparison (memory mappings)
    if out is not None:
        write(result, out)
    return result
