"""Exponents across horizons: every algorithm at a ladder of horizons T, R_T and V_T fitted
as C·Tᵃ with bootstrap intervals (``fits.exponent_across_horizons``), next to the theory.

The theorems' step sizes depend on T, so "R_T = O(Tᵃ)" compares runs of different lengths:
each T here is its own compiled ``sweep`` with the algorithm's ``default_hyper`` for that T
and one checkpoint (T), the same seeds at every T.  A slope fitted within one run mixes the
warm-up into the fit (``compare``'s in-run slope over [T/10, T] is labelled as such).
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from jaxbco import problems, simulate
from jaxbco._src import checks
from jaxbco._src.xla import release_compiled
from jaxbco.algorithms import display_name, registry
from jaxbco.compare.driver import default_hyper
from jaxbco.compare.findings import BOUNDED, MIN_R2, RESOLVED, across_horizons
from jaxbco.compare.fits import exponent_across_horizons, order_slope
from jaxbco.compare.table import Column, Table
from jaxbco.compare.theory import bound_constants, bound_curves, literature_cells


@dataclasses.dataclass
class Ladder:
    """Exponents across horizons: every algorithm's R_T and V_T fitted as C·Tᵃ over a ladder of
    horizons, next to the theory.

    Args:
        problem: the problem's name.
        seeds: the seeds run at every horizon.
        horizons: the horizons T, increasing.
        rows: one dict per algorithm: {"algorithm", "regret", "hard_violation",
            "soft_violation" (each a fit as ``fits.exponent_across_horizons`` returns it),
            "wall_s"}.
        theory: rectified-bco's exponents and orders (Hikima, Thms. 1-4).
        wall_s: the seconds the whole ladder took.

    Example:
        >>> from jaxbco.compare import ladder
        >>> lad = ladder("quadratic-ball", 2, [10, 20], dim=2, algorithms=["rectified-bco"],
        ...              resamples=50)
        >>> lad.horizons, [row["algorithm"] for row in lad.rows]
        ([10, 20], ['rectified-bco'])
    """

    problem: str
    seeds: int
    horizons: list
    rows: list
    theory: dict
    wall_s: float = 0.0


def ladder(
    problem_name: str,
    seeds: int,
    horizons,
    *,
    dim: int | None = None,
    algorithms=None,
    dtype: str = "float32",
    key: int = 0,
    resamples: int = 1000,
) -> Ladder:
    """Run each algorithm at every horizon of a ladder and fit the exponents of R_T and V_T across
    horizons.

    The step sizes depend on T, so "R_T = O(Tᵃ)" compares runs of different lengths: each T is
    its own compiled ``sweep`` with the algorithm's ``default_hyper`` for that T and one
    checkpoint (T), on the same seeds.  Not for portfolio problems (their regret is against an
    offline optimum computed per horizon by ``compare``).  JAX's compilation caches are emptied
    after each algorithm.

    Args:
        problem_name: a registered problem name or a ``module:Name`` spec.
        seeds: the number of seeds at every horizon.
        horizons: at least 2 increasing horizons.
        dim: the problem's dimension (None: its default).
        algorithms: the algorithms to run (None: every registered one).
        dtype: "float32" or "float64".
        key: the master PRNG seed.
        resamples: bootstrap resamples of the exponents' 95% intervals.

    Returns:
        The ``Ladder``.

    Raises:
        ValueError: fewer than 2 or non-increasing horizons, seeds out of range, or a
            portfolio problem.

    Example:
        >>> from jaxbco.compare import ladder
        >>> lad = ladder("quadratic-ball", 4, [50, 100], dim=3, algorithms=["rectified-bco"],
        ...              resamples=20)
        >>> lad.horizons, sorted(lad.rows[0]["regret"])[:2]
        ([50, 100], ['ci95', 'exponent'])
    """
    horizons = [checks.check_positive_int("horizons", T) for T in horizons]
    if len(horizons) < 2 or any(b <= a for a, b in zip(horizons, horizons[1:])):
        raise ValueError(f"horizons must be at least 2 increasing integers; got {horizons}")
    seeds = checks.check_positive_int("seeds", seeds)
    chosen = registry.resolve(algorithms)
    start = time.perf_counter()
    T_max = horizons[-1]
    problem = problems.make(problem_name, dim, T_max)
    if problem.loss.wealth:
        raise ValueError(
            f"problem {problem_name!r}: the horizon ladder does not run portfolio "
            f"problems (use jaxbco compare)"
        )
    rect = registry.reference().build(problem)  # the theorems' algorithm
    k = bound_constants(problem, T_max, hyper=default_hyper(rect, problem, T_max))
    b = bound_curves(k, np.asarray(horizons))
    theory = {
        "regret": b["regret_exponent"],
        "hard_violation": b["violation_exponent"],
        "regret_order": b["regret_order"],
        "violation_order": b["violation_order"],
    }
    by_T = [problems.make(problem_name, dim, T) for T in horizons]
    # Where the problem does not depend on T, every T runs the same compiled chunk of
    # gcd(horizons) rounds (only shapes are static; chunked runs are bitwise the same).
    step = math.gcd(*horizons)
    chunk = step if step >= 50 and all(_same(p, problem) for p in by_T) else None
    rows = []
    optima = {}  # x* per rung, solved by the first algorithm and handed to the others
    for record in chosen:
        name, algorithm = record.name, record.build(problem)
        finals = {"regret": [], "hard_violation": [], "soft_violation": []}
        t0 = time.perf_counter()
        for T, prob_T in zip(horizons, by_T):
            res = simulate.sweep(
                prob_T,
                T,
                default_hyper(algorithm, prob_T, T),
                seeds=seeds,
                key=key,
                algorithm=algorithm,
                checkpoints=np.asarray([T]),
                dtype=dtype,
                progress=False,
                chunk=chunk,
                optimum=optima.get(T),
            )
            optima[T] = res.optimum
            ok = ~np.asarray(res.failed[0])
            for m in finals:
                v = np.asarray(getattr(res, m)[0, :, -1], np.float64)
                finals[m].append(np.where(ok, v, np.nan))
        release_compiled()  # this algorithm's programs are not reused (memory mappings)
        row = {"algorithm": name, "wall_s": time.perf_counter() - t0}
        for m, v in finals.items():
            row[m] = dict(
                exponent_across_horizons(horizons, np.asarray(v), resamples=resamples),
                horizons=list(horizons),
            )
        rows.append(row)
    return Ladder(
        problem=problem_name,
        seeds=seeds,
        horizons=horizons,
        rows=rows,
        theory=theory,
        wall_s=time.perf_counter() - start,
    )


def _same(a, b) -> bool:
    """Whether two problems are the same pytree with equal leaves."""
    import jax

    la, ta = jax.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    return ta == tb and all(
        np.shape(x) == np.shape(y) and np.array_equal(np.asarray(x), np.asarray(y))
        for x, y in zip(la, lb)
    )


def ladder_table(lad: Ladder) -> Table:
    """The exponents across horizons next to the theory, one row per algorithm: each an
    exponent with its 95% interval, or the finding that replaces it (``findings.across_horizons``:
    bounded, changes sign, ≤ 0, unresolved, no power law).

    Args:
        lad: the ladder.

    Returns:
        The ``Table`` (``.markdown()``, ``.latex()``).
    """
    cols = [
        Column("algorithm", "Algorithm", "l"),
        Column("R_T exponent", "$R_T$ exponent", "l"),
        Column("theory (regret)", "Theory (regret)", "l"),
        Column("hard V_T exponent", "$V_T^{\\mathrm{hard}}$ exponent", "l"),
        Column("soft V_T exponent", "$V_T^{\\mathrm{soft}}$ exponent", "l"),
        Column("theory (violation)", "Theory (violation)", "l"),
    ]
    rows = []
    for r in lad.rows:
        if r["algorithm"] == registry.reference().name:
            tr = f"{lad.theory['regret_order']} (exponent {lad.theory['regret']:g})"
            tv = f"{lad.theory['violation_order']} (exponent {lad.theory['hard_violation']:g})"
        else:
            tr, tv = literature_cells(r["algorithm"])
        rows.append(
            [display_name(r["algorithm"])]
            + [across_horizons(r[m]).text() for m in ("regret",)]
            + [tr]
            + [across_horizons(r[m]).text() for m in ("hard_violation", "soft_violation")]
            + [tv]
        )
    return Table(cols, rows)


_METRIC_WORDS = {"regret": "regret", "hard_violation": "hard-violation"}
_ORDER_KEYS = {"regret": "regret_order", "hard_violation": "violation_order"}


def theory_findings(lad: Ladder) -> list:
    """Sentences for the page where an exponent of the theorems' algorithm (rectified-bco)
    lies outside the theorem's: its 95% interval wholly above the bound's exponent, or wholly
    below it (with what may explain each), whatever the table cell prints (an interval wider
    than ±``RESOLVED`` is "unresolved" there, yet may exclude the theorem's value); then the
    baselines' exponents wholly above their sources' and any wholly above 1.

    Args:
        lad: the ladder.

    Returns:
        One sentence per such exponent (none where every interval contains the theorem's).

    Example:
        >>> lad = Ladder("p", 10, [100, 200], [{"algorithm": "rectified-bco",
        ...     "regret": {"exponent": 0.5, "ci95": [0.45, 0.55], "means": [1, 2]},
        ...     "hard_violation": {"exponent": 0.89, "ci95": [0.51, 1.27], "means": [1, 2]},
        ...     "soft_violation": {"exponent": 0.1, "ci95": [0, 0.2], "means": [1, 2]}}],
        ...     {"regret": 0.5, "hard_violation": 0.0})
        >>> theory_findings(lad)[0][:60]
        "rectified-bco's hard-violation exponent, 0.89 [0.51, 1.27], "
    """
    name = registry.reference().name
    out = []
    for r in (r for r in lad.rows if r["algorithm"] == name):
        for metric, words in _METRIC_WORDS.items():
            bound = lad.theory.get(metric)
            fit = r.get(metric)
            if bound is None or _interval(fit) is None:
                continue
            order = str(lad.theory.get(_ORDER_KEYS[metric], ""))
            bound = round(order_slope(order, bound, lad.horizons), 2)
            if "log" in order:  # a logarithm's slope over these horizons, not its exponent
                order_said = f"{bound:g} ({order}'s log-log slope over these horizons)"
            else:
                order_said = f"{bound:g}"
            a, (lo, hi) = float(fit["exponent"]), (float(v) for v in fit["ci95"])
            if not (np.isfinite(lo) and np.isfinite(hi)) or np.any(np.asarray(fit["means"]) <= 0):
                continue
            head = f"{name}'s {words} exponent, {a:.2f} [{lo:.2f}, {hi:.2f}], "
            if lo > bound:
                out.append(
                    head + f"lies above the theorem's {order_said} on this ladder: the theorem "
                    f"bounds the growth as T grows, and these horizons may be short of where "
                    f"its rate takes over (its constant dominates at small T, and the step "
                    f"sizes change with T, so each T runs a different schedule), or an "
                    f"assumption of the theorem may not hold for this problem."
                )
            elif hi < bound:
                out.append(
                    head + f"lies below the theorem's {order_said}: the bound is an upper bound, "
                    f"not tight on this problem."
                )
    return out + _baseline_findings(lad)


def _interval(fit):
    """(exponent, lo, hi) of a fit the table prints as a power law (or "unresolved", whose
    interval may still exclude a value), else None."""
    if fit is None or across_horizons(fit).kind not in ("power law", "unresolved"):
        return None
    a, (lo, hi) = float(fit["exponent"]), (float(v) for v in fit["ci95"])
    return (a, lo, hi) if np.isfinite(lo) and np.isfinite(hi) else None


def _baseline_findings(lad: Ladder) -> list:
    """Sentences on the other algorithms: exponents whose interval lies wholly above their
    source's, and exponents wholly above 1 (the mean per round grows with T)."""
    above, superlinear = [], []
    for r in lad.rows:
        name = r["algorithm"]
        stated = registry.get(name).exponents if name in registry.ALGORITHMS else {}
        for metric, words in _METRIC_WORDS.items():
            fit = _interval(r.get(metric))
            if fit is None:
                continue
            a, lo, hi = fit
            cell = f"{display_name(name)} {words} {a:.2f} [{lo:.2f}, {hi:.2f}]"
            if lo > 1.0 and name != registry.reference().name:  # the reference's: above
                superlinear.append(cell)
            elif name != registry.reference().name and metric in stated and lo > stated[metric]:
                above.append(f"{cell} against {stated[metric]:g}")
    out = []
    if above:
        out.append(
            f"Above their sources' exponents: {'; '.join(above)}. Those orders are upper bounds "
            f"under each source's assumptions (a feasible set known in advance, a fixed g, full "
            f"information, tuned constants), which this problem and the default step sizes need "
            f"not meet, and the ladder's horizons may be short of where the rates take over."
        )
    if superlinear:
        out.append(
            f"Exponents above 1: {'; '.join(superlinear)}. The mean per round grows with T: "
            f"the default step sizes are set from T, so each horizon runs its own schedule, and "
            f"here a longer one does worse per round. Per-round values are bounded, so such "
            f"growth cannot last as T grows: it is pre-asymptotic."
        )
    return out


def ladder_markdown(lad: Ladder) -> str:
    """Fitted exponents with 95% intervals next to the theory (rectified-bco: Thms. 1-4;
    baselines: the orders their sources state), with the rules that decide what is printed."""
    return "\n".join(
        [
            f"Exponents across horizons T in {lad.horizons} ({lad.seeds} seeds each, one run "
            f"per T with that T's step sizes; 95% bootstrap intervals over seeds):",
            "",
            ladder_table(lad).markdown(),
            "",
            f"An exponent is printed where every mean is positive, its interval is within "
            f'±{RESOLVED:g} (else "unresolved", with the interval) and log mean is a line in log T '
            f'(R² ≥ {MIN_R2:g}); an interval inside ±{BOUNDED:g} reads "bounded"; a mean ≤ 0 at '
            f"every T meets any upper bound; a mean that changes sign across T has no power law.",
        ]
        + ["", "Findings: " + (" ".join(theory_findings(lad)) or NOTHING_OUTSIDE)]
    )


#: The findings of a ladder whose exponents all lie within their theorem's or source's.
NOTHING_OUTSIDE = (
    "no exponent's interval lies above its theorem's or its source's, and none above 1; "
    "Algorithm 1's none below its theorem's."
)
