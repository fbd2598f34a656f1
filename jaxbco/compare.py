"""The comparison study: every algorithm of ``ALGORITHMS`` on one problem, against theory.

``compare(problem_name, seeds, horizon)`` runs each algorithm with its documented
``default_hyper`` as ONE compiled ``sweep`` call (all seeds together; the time reported is
compile + run), and returns a table of R_T / T, hard V_T = sum_t [g_t(x_t)]_+, soft
V_T = sum_t g_t(x_t) (mean with a 95% confidence interval of the mean over seeds), the final
wealth prod_t <r_t, x_t> on portfolio problems, and wall times.  With ``out`` it writes the
table (Markdown and JSON) and a figure (regret and hard violation vs t, log axes, mean with a
2.5-97.5% quantile band, one colour per algorithm, the theorem bounds of rectified-bco dashed).

Theory (Hikima et al., Thms. 1-4) for rectified-bco with its defaults c = 1/2, eps = 0.1,
delta = 1/T (alpha_t = t^c, or sigma t when strongly convex; gamma_t = t^(c+eps), eta_t = t^c):

    Thm. 1 (convex, fixed g)   R_T <= (9F^2d^2/(4(1-c)) + D^2/2 + 2F) T^max(c,1-c)
                               V_T <= 27F^2d^2/4 + 3FdD(1+eps)/eps + D^2
    Thm. 2 (convex, varying g) V_T <= ((27F^2d^2 + G^2)/4 + 3FdD(8 + 1/eps) + 2D^2) T^(1-c/2)
                               (its regret: Thm. 1's, whose proof never uses a fixed g)
    Thm. 3 (strongly, fixed)   R_T <= (9F^2d^2/(4 sigma) + 2F)(1 + log T)
                               V_T <= 27F^2d^2/(4 sigma) + 3FdD(1+eps)/eps
    Thm. 4 (strongly, varying) V_T <= (27F^2d^2/(4 sigma) + G^2/4 + 3FdD(1 + 1/eps + 4/sigma)
                                      + D^2) sqrt(T (1 + log T))

F, G are estimated from the problem (``bound_constants``): the maximum over the rounds of the
loss's and constraint's ``lipschitz`` bounds on a ball about 0 that contains X (data of seeds
0-3; exact for replayed data), or of sampled gradient norms at points of X when a family has
no bound; D = diameter of X; d = the estimator's dimension (X's affine hull).  The log-log
slopes of the mean curves over t in [T/100, T] are fitted and printed next to these orders.

CLI: ``jaxbco compare --problem NAME --seeds N --horizon T [--out DIR] [--dtype float64]``;
``python -m jaxbco.compare --all --out docs/`` regenerates docs/results.md (every preset of
``STUDY`` at the sizes given there).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time

import numpy as np

# Presets of the results page (docs/results.md) and their sizes on a shared 2-core CPU: 16
# seeds (the engine pads to 16 anyway); horizons cut so the page builds in about ten minutes.
# The smooth-constraint presets are short because the Dual solver's smooth path (30 root x 60
# inner steps a round) costs ~0.3 s a round there even at 16 seeds.
STUDY = {
    "yu-neely": dict(seeds=16, horizon=2000),
    "hutchinson-toy": dict(seeds=16, horizon=2000),
    "online-logistic": dict(seeds=16, horizon=100),
    "nyse-portfolio": dict(seeds=16, horizon=250),
}

# Orders the baselines' sources state (exponent of T; see each algorithm's docstring).
LITERATURE = {
    "rectified-bco": ("Thms. 1-4 (this paper)", ""),
    "flaxman-bgd": ("T^(3/4)", "none (projects onto a known set)"),
    "agarwal-2pt": ("T^(1/2) (log T if strongly convex)", "none (projects onto a known set)"),
    "mahdavi-pd": ("T^(1/2)", "soft T^(3/4)"),
    "recoo": ("T^(1/2) (log T) [full information]", "hard T^(3/4) (sqrt(T log T))"),
    "yuan-lamperski": ("T^max(c,1-c) [full information]", "hard T^(1-c/2)"),
    "yu-neely": ("T^(1/2) [full information]", "soft O(1), fixed g"),
}


# ---------------------------------------------------------------------------------------------
# Theory: constants and bound curves.

def outer_radius(domain) -> float:
    """max_{x in X} ||x||: the radius of a ball about 0 containing X (for ``lipschitz``)."""
    from jaxbco import sets

    if isinstance(domain, sets.L2Ball):
        return float(np.linalg.norm(np.asarray(domain.center)) + float(domain.radius))
    if isinstance(domain, sets.Box):
        return float(np.linalg.norm(np.maximum(np.abs(np.asarray(domain.lower)),
                                               np.abs(np.asarray(domain.upper)))))
    if isinstance(domain, sets.Simplex):
        return float(domain.total)
    c, _ = domain.inscribed_ball()
    return float(np.linalg.norm(np.asarray(c)) + float(domain.diameter()))


def _round_data(seq, horizon, stream, seeds):
    """The data of rounds 1..T (at most 20000 evenly spaced ones) for seeds 0..seeds-1, with
    the engine's keys (stream 0: loss, 2: constraint); leading axis seeds x rounds."""
    import jax
    import jax.numpy as jnp

    from jaxbco.keys import round_keys, seed_keys
    from jaxbco.sequences import Fixed, Replay

    if isinstance(seq, Fixed):
        return jax.tree_util.tree_map(lambda v: v[None], seq.value)
    if isinstance(seq, Replay):
        return jax.tree_util.tree_map(lambda v: v[:horizon], seq.values)
    ts = np.unique(np.linspace(1, horizon, min(horizon, 20000)).astype(np.int32))
    keys = seed_keys(jax.random.key(0), jnp.arange(seeds))

    def one(k, t):
        return seq.sample(round_keys(k, t)[stream], t)

    data = jax.vmap(lambda k: jax.vmap(lambda t: one(k, t))(jnp.asarray(ts)))(keys)
    return jax.tree_util.tree_map(lambda v: v.reshape((-1,) + v.shape[2:]), data)


def _sampled_gradient_norm(fn, data, domain, n_points=64):
    """max ||grad_x fn(x, data_i)|| over points of X (projected Gaussians) and the data."""
    import jax
    import jax.numpy as jnp

    c, _ = domain.inscribed_ball()
    z = jax.random.normal(jax.random.key(1), (n_points, c.shape[0]), c.dtype)
    pts = jax.vmap(domain.project)(c + float(domain.diameter()) * z)
    grad = jax.grad(fn)
    norms = jax.vmap(lambda d: jax.vmap(lambda x: jnp.linalg.norm(grad(x, d)))(pts))(data)
    return float(jnp.max(norms))


def bound_constants(problem, horizon: int, *, strongly_convex: bool, hyper=None, seeds: int = 4):
    """F, G, D, d, sigma, c, eps of Theorems 1-4 for ``problem`` (see the module docstring)."""
    import jax

    radius = outer_radius(problem.domain)
    theta = _round_data(problem.loss_data, horizon, 0, seeds)
    phi = _round_data(problem.constraint_data, horizon, 2, seeds)
    try:
        F = float(np.max(jax.vmap(lambda th: problem.loss.lipschitz(th, radius))(theta)))
        f_how = "loss.lipschitz"
    except NotImplementedError:
        F = _sampled_gradient_norm(problem.loss.value, theta, problem.domain)
        f_how = "sampled gradients"
    try:
        G = float(np.max(jax.vmap(lambda p: problem.constraint.lipschitz(p, radius))(phi)))
        g_how = "constraint.lipschitz"
    except NotImplementedError:
        G = _sampled_gradient_norm(problem.constraint.value, phi, problem.domain)
        g_how = "sampled gradients"
    c = float(np.asarray(getattr(hyper, "c", 0.5)).ravel()[0])
    eps = float(np.asarray(getattr(hyper, "eps", 0.1)).ravel()[0])
    sigma = float(np.asarray(getattr(hyper, "sigma", 1.0)).ravel()[0]) if strongly_convex else None
    from jaxbco.sequences import Fixed

    return dict(F=F, G=G, D=float(problem.domain.diameter()), d=int(problem.domain.hull_dim),
                sigma=sigma, c=c, eps=eps, fixed_g=isinstance(problem.constraint_data, Fixed),
                strongly_convex=strongly_convex, radius=radius, F_from=f_how, G_from=g_how)


def theorem(k: dict) -> str:
    """Which of Theorems 1-4 covers rectified-bco on this problem."""
    return {(False, True): "Thm. 1", (False, False): "Thm. 2", (True, True): "Thm. 3",
            (True, False): "Thm. 4"}[(k["strongly_convex"], k["fixed_g"])]


def bound_curves(k: dict, t) -> dict:
    """The theorem's bounds on R_t and hard V_t at rounds t (see the module docstring), with
    their orders: {"regret", "hard_violation", "regret_order", "violation_order",
    "regret_exponent", "violation_exponent", "label"}."""
    t = np.asarray(t, np.float64)
    F, G, D, d, c, eps, s = k["F"], k["G"], k["D"], k["d"], k["c"], k["eps"], k["sigma"]
    name = theorem(k)
    if k["strongly_convex"]:
        regret = (9 * F**2 * d**2 / (4 * s) + 2 * F) * (1 + np.log(t))  # Thm. 3
        r_order, r_exp = "log T", 0.0
    else:
        regret = (9 * F**2 * d**2 / (4 * (1 - c)) + D**2 / 2 + 2 * F) * t ** max(c, 1 - c)  # Thm. 1
        r_order, r_exp = f"T^{max(c, 1 - c):g}", max(c, 1 - c)
    if name == "Thm. 1":
        viol = np.full_like(t, 27 * F**2 * d**2 / 4 + 3 * F * d * D * (1 + eps) / eps + D**2)
        v_order, v_exp = "O(1)", 0.0
    elif name == "Thm. 2":
        viol = ((27 * F**2 * d**2 + G**2) / 4 + 3 * F * d * D * (8 + 1 / eps) + 2 * D**2) * t ** (1 - c / 2)
        v_order, v_exp = f"T^{1 - c / 2:g}", 1 - c / 2
    elif name == "Thm. 3":
        viol = np.full_like(t, 27 * F**2 * d**2 / (4 * s) + 3 * F * d * D * (1 + eps) / eps)
        v_order, v_exp = "O(1)", 0.0
    else:
        viol = ((27 * F**2 * d**2 / (4 * s) + G**2 / 4 + 3 * F * d * D * (1 + 1 / eps + 4 / s)
                 + D**2) * np.sqrt(t * (1 + np.log(t))))
        v_order, v_exp = "sqrt(T log T)", 0.5
    return dict(regret=regret, hard_violation=viol, regret_order=r_order, violation_order=v_order,
                regret_exponent=r_exp, violation_exponent=v_exp, label=f"{name} bound (rectified-bco)")


def fit_exponent(t, y, lo: float, hi: float) -> float:
    """Least-squares slope of log y on log t over the rounds in [lo, hi] where y > 0 (NaN if
    fewer than three such rounds)."""
    t, y = np.asarray(t, np.float64), np.asarray(y, np.float64)
    keep = (t >= lo) & (t <= hi) & np.isfinite(y) & (y > 0)
    if keep.sum() < 3:
        return float("nan")
    return float(np.polyfit(np.log(t[keep]), np.log(y[keep]), 1)[0])


# ---------------------------------------------------------------------------------------------
# The study.

@dataclasses.dataclass
class Comparison:
    """What ``compare`` returns: one row per algorithm (``rows``), the curves at ``rounds``
    (name -> {"regret", "hard_violation", "soft_violation", ["wealth"]}, each (S, K)), the
    theory (``constants``, ``bounds``), portfolio extras (``wealth_baselines``, ``x_star``)
    and the files written."""

    problem: str
    seeds: int
    horizon: int
    dim: int
    dtype: str
    rounds: np.ndarray
    rows: list
    curves: dict
    constants: dict
    bounds: dict
    fit_range: tuple
    wealth_baselines: dict | None = None
    comparator_info: dict | None = None
    wall_s: float = 0.0
    files: list = dataclasses.field(default_factory=list)


def _make_algorithm(name: str, strongly_convex: bool):
    from jaxbco.algorithms import ALGORITHMS

    cls = ALGORITHMS[name]
    fields = {f.name for f in dataclasses.fields(cls)}
    return cls(strongly_convex=strongly_convex) if "strongly_convex" in fields else cls()


def _default_hyper(algorithm, problem, horizon, strongly_convex):
    """The algorithm's documented defaults; with the strongly convex schedule, sigma = the
    loss's modulus (Thms. 3-4: alpha_t = sigma t)."""
    import equinox as eqx

    hyper = algorithm.default_hyper(problem, horizon)
    sigma = float(problem.loss.strong_convexity())
    if strongly_convex and sigma > 0 and hasattr(hyper, "sigma") and hasattr(hyper, "alpha_scale"):
        hyper = eqx.tree_at(lambda h: h.sigma, hyper, np.asarray(sigma, np.float64))
    return hyper


def compare(problem_name: str, seeds: int, horizon: int | None = None, *, dim: int | None = None,
            algorithms=None, out: str | None = None, dtype: str = "float32", key: int = 0,
            checkpoints: int = 60, verbose: bool = False,
            progress: bool | None = None) -> Comparison:
    """Run every algorithm (or those named in ``algorithms``) on one registered problem.

    ``horizon`` None: the problem's own length (portfolio data) or 5000.  Portfolio problems
    run with ``comparator=False`` and get regret against the risk-constrained best CRP x*
    from ``jaxbco.data.portfolio.comparator`` (see ``regret_offset``).
    """
    from jaxbco import problems, simulate
    from jaxbco.algorithms import ALGORITHMS
    from jaxbco.data import portfolio as pf
    from jaxbco.losses import LogWealth
    from jaxbco.summary import interval

    start_all = time.perf_counter()
    names = list(ALGORITHMS) if algorithms is None else list(algorithms)
    unknown = [a for a in names if a not in ALGORITHMS]
    if unknown or not names:
        raise ValueError(f"unknown algorithm(s) {unknown}; choose from: {', '.join(ALGORITHMS)}")
    problem, strongly = problems.make(problem_name, dim, horizon)
    portfolio = isinstance(problem.loss, LogWealth)
    if horizon is None:
        horizon = pf.problem_arrays(problem)[0].shape[0] if portfolio else 5000
    cps = simulate.log_checkpoints(horizon, checkpoints)
    rectified = _make_algorithm("rectified-bco", strongly)
    consts = bound_constants(problem, horizon, strongly_convex=strongly,
                             hyper=_default_hyper(rectified, problem, horizon, strongly))
    bounds = bound_curves(consts, cps)
    fit_lo, fit_hi = max(10.0, horizon / 100.0), float(horizon)

    x_star, comp_info, offset, base_loss, wealth_ref = None, None, None, None, None
    if portfolio:
        x_star, comp_info = pf.comparator(problem, horizon)
        x1 = np.asarray(problem.initial_point(), np.float64)
        offset = pf.regret_offset(problem, cps, x1, x_star)
        R, _ = pf.problem_arrays(problem, horizon)
        base_loss = np.cumsum(-np.log(R @ x1))[cps - 1]  # sum_{s<=t} f_s(x_1)
        wealth_ref = pf.wealth_baselines(problem, horizon, x_star)

    rows, curves = [], {}
    for name in names:
        algorithm = _make_algorithm(name, strongly)
        hyper = _default_hyper(algorithm, problem, horizon, strongly)
        t0 = time.perf_counter()
        res = simulate.sweep(problem, horizon, hyper, seeds=seeds, key=key, algorithm=algorithm,
                             checkpoints=cps, dtype=dtype, comparator=not portfolio,
                             progress=progress)
        wall = time.perf_counter() - t0
        ok = ~np.asarray(res.failed[0])
        regret = np.asarray(res.regret[0], np.float64)
        curve = {"regret": regret, "hard_violation": np.asarray(res.hard_violation[0], np.float64),
                 "soft_violation": np.asarray(res.soft_violation[0], np.float64)}
        row = {"algorithm": name, "wall_s": wall, "failed_seeds": int((~ok).sum())}
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
        curves[name] = curve
        if verbose:
            print(f"  {problem_name}: {name} done in {wall:.1f} s", file=sys.stderr, flush=True)

    result = Comparison(problem=problem_name, seeds=int(seeds), horizon=int(horizon),
                        dim=problem.dim, dtype=str(dtype), rounds=cps, rows=rows, curves=curves,
                        constants=consts, bounds=bounds, fit_range=(fit_lo, fit_hi),
                        wealth_baselines=wealth_ref, comparator_info=comp_info)
    if portfolio:
        result.comparator_info = dict(comp_info, x_star=np.asarray(x_star).tolist())
    result.wall_s = time.perf_counter() - start_all
    if out is not None:
        write(result, out)
    return result


# ---------------------------------------------------------------------------------------------
# Output.

def slug(name: str) -> str:
    return name.replace(":", "-").replace("/", "-")


def _fmt(iv: dict) -> str:
    lo, hi = iv["ci95"]
    if not np.isfinite(lo):
        return f"{iv['mean']:.4g}"
    return f"{iv['mean']:.4g} [{lo:.4g}, {hi:.4g}]"


def table_markdown(res: Comparison) -> str:
    """The results table (Markdown): one row per algorithm."""
    wealth = res.wealth_baselines is not None
    head = ["algorithm", "R_T / T", "hard V_T", "soft V_T"] + (["final wealth"] if wealth else [])
    head += ["R_t slope", "V_t slope", "failed", "compile + run (s)"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in res.rows:
        cells = [r["algorithm"], _fmt(r["regret_over_T"]), _fmt(r["hard_violation"]),
                 _fmt(r["soft_violation"])]
        if wealth:
            cells.append(_fmt(r["final_wealth"]))
        cells += [f"{r['regret_exponent']:.2f}", f"{r['violation_exponent']:.2f}",
                  str(r["failed_seeds"]), f"{r['wall_s']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def theory_markdown(res: Comparison) -> str:
    """Bound constants, the applicable theorem, and fitted vs theoretical exponents."""
    k, b = res.constants, res.bounds
    sig = "" if k["sigma"] is None else f", sigma = {k['sigma']:g}"
    rect = next((r for r in res.rows if r["algorithm"] == "rectified-bco"), None)
    lines = [
        f"Bound constants: F = {k['F']:.4g} (from {k['F_from']}), G = {k['G']:.4g} "
        f"(from {k['G_from']}), D = {k['D']:.4g}, d = {k['d']}{sig}, c = {k['c']:g}, "
        f"eps = {k['eps']:g}; g {'fixed' if k['fixed_g'] else 'time-varying'}, loss "
        f"{'strongly convex' if k['strongly_convex'] else 'convex'}: **{theorem(k)}** applies to "
        f"rectified-bco. At T = {res.horizon}: regret bound {b['regret'][-1]:.4g}, hard "
        f"violation bound {b['hard_violation'][-1]:.4g}.",
        "",
        f"Fitted log-log slopes of the mean curves over t in [{res.fit_range[0]:g}, "
        f"{res.fit_range[1]:g}] vs theory:",
        "",
        "| algorithm | R_t slope | theory (regret) | V_t slope | theory (violation) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in res.rows:
        name = r["algorithm"]
        if name == "rectified-bco":
            src = {"Thm. 2": "Thm. 1's bound, whose proof holds for varying g",
                   "Thm. 4": "Thm. 3's bound, whose proof holds for varying g"}.get(theorem(k), theorem(k))
            tr = f"{b['regret_order']} ({src}; exponent {b['regret_exponent']:g})"
            tv = f"{b['violation_order']} (exponent {b['violation_exponent']:g})"
        else:
            tr, tv = LITERATURE.get(name, ("?", "?"))
        lines.append(f"| {name} | {r['regret_exponent']:.2f} | {tr} | "
                     f"{r['violation_exponent']:.2f} | {tv} |")
    if rect is not None:
        lines += ["", "A bounded V_T fits a slope near 0; a slope is fitted only where the mean "
                  "curve is positive (NaN otherwise)."]
    return "\n".join(lines)


def wealth_markdown(res: Comparison) -> str:
    if res.wealth_baselines is None:
        return ""
    lines = ["| reference strategy | final wealth |", "| --- | --- |"]
    lines += [f"| {k} | {v:.4g} |" for k, v in res.wealth_baselines.items()]
    info = res.comparator_info or {}
    lines += ["", f"x* (the best CRP with x^T Sigma_t x <= rho for every t): objective "
              f"{info.get('objective', float('nan')):.10g}, max_t g_t(x*) = "
              f"{info.get('max_g', float('nan')):.3g}, barrier gap <= {info.get('gap', float('nan')):.2g}, "
              f"{info.get('newton_steps', 0)} Newton steps, {info.get('working_set', 0)} constraints in "
              f"the working set."]
    return "\n".join(lines)


def _jsonable(obj):
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    return obj


def write(res: Comparison, out: str) -> list:
    """Write ``<slug>.md``, ``<slug>.json`` and ``<slug>.png`` under ``out``."""
    from jaxbco import plotting

    os.makedirs(out, exist_ok=True)
    base = os.path.join(out, slug(res.problem))
    wealth = ({n: c["wealth"] for n, c in res.curves.items() if "wealth" in c}
              if res.wealth_baselines is not None else None)
    title = (f"{res.problem}: {res.seeds} seeds, T = {res.horizon}, d = {res.dim}, {res.dtype}")
    fig = plotting.plot_comparison(res.rounds, res.curves, base + ".png",
                                   bounds={"regret": res.bounds["regret"],
                                           "hard_violation": res.bounds["hard_violation"],
                                           "label": res.bounds["label"]},
                                   wealth=wealth, title=title)
    with open(base + ".md", "w") as fh:
        fh.write(section_markdown(res, os.path.basename(fig)))
    summary = {k: v for k, v in dataclasses.asdict(res).items() if k not in ("curves",)}
    summary["mean_curves"] = {n: {m: np.nanmean(v, axis=0) for m, v in c.items()}
                              for n, c in res.curves.items()}
    with open(base + ".json", "w") as fh:
        json.dump(_jsonable(summary), fh, indent=1)
    res.files = [base + ".md", base + ".json", fig]
    return res.files


def section_markdown(res: Comparison, figure: str) -> str:
    parts = [f"## {res.problem}", "",
             f"{res.seeds} seeds, T = {res.horizon}, d = {res.dim}, {res.dtype}; total "
             f"{res.wall_s:.1f} s. Mean over seeds [95% CI of the mean]; slopes fitted on the "
             f"mean curves.", "", table_markdown(res), ""]
    if res.wealth_baselines is not None:
        parts += [wealth_markdown(res), ""]
    parts += [theory_markdown(res), "", f"![{res.problem}]({figure})", ""]
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------
# Command line.

def _add_arguments(p: argparse.ArgumentParser, with_all: bool) -> None:
    from jaxbco.problems import PROBLEMS

    p.add_argument("--problem", choices=sorted(PROBLEMS), default=None if with_all else "yu-neely")
    p.add_argument("--seeds", type=int, default=None, help="Monte-Carlo seeds (default 100)")
    p.add_argument("--horizon", "-T", type=int, default=None,
                   help="rounds (default: the data's length for portfolios, else 5000)")
    p.add_argument("--dim", "-d", type=int, default=None, help="dimension, where the problem allows")
    p.add_argument("--algorithms", default=None, help="comma-separated subset of the algorithms")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    p.add_argument("--key", type=int, default=0, help="master PRNG seed")
    p.add_argument("--out", default="jaxbco-compare", help="output folder")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    if with_all:
        p.add_argument("--all", action="store_true",
                       help="every preset of the study at its documented size; writes "
                            "OUT/results.md and OUT/results/")


def add_compare_parser(sub) -> argparse.ArgumentParser:
    """Register ``jaxbco compare`` on the CLI's subparsers."""
    p = sub.add_parser("compare", help="every algorithm on one problem, with the theorem bounds")
    _add_arguments(p, with_all=True)
    p.set_defaults(func=cmd_compare)
    return p


def _setup_dtype(dtype: str) -> None:
    if dtype == "float64":
        os.environ.setdefault("JAX_ENABLE_X64", "1")
        import jax

        jax.config.update("jax_enable_x64", True)


def _writable(path: str) -> str:
    from jaxbco._io import writable_dir

    return writable_dir(path)


def cmd_compare(args) -> int:
    _setup_dtype(args.dtype)
    if getattr(args, "all", False):
        return cmd_all(args)
    if args.problem is None:
        raise ValueError("give --problem NAME (or --all)")
    if args.seeds is not None and args.seeds < 1:
        raise ValueError(f"--seeds must be an integer >= 1; got {args.seeds}")
    out = _writable(args.out)
    algorithms = None if args.algorithms is None else [a.strip() for a in args.algorithms.split(",")]
    res = compare(args.problem, 100 if args.seeds is None else args.seeds, args.horizon,
                  dim=args.dim, algorithms=algorithms, out=out, dtype=args.dtype, key=args.key,
                  verbose=True, progress=not args.quiet)
    print(f"jaxbco compare: {res.problem}, {res.seeds} seeds, T = {res.horizon}, d = {res.dim}, "
          f"{res.dtype}, {res.wall_s:.1f} s in all")
    print(table_markdown(res))
    if res.wealth_baselines is not None:
        print(wealth_markdown(res))
    print(theory_markdown(res))
    print("wrote " + ", ".join(res.files))
    return 0


def _machine() -> str:
    import jax

    from jaxbco._machine import cpu_name

    return (f"{cpu_name()}, {os.cpu_count()} logical CPUs, JAX {jax.__version__} on "
            f"{jax.default_backend()}, Python {platform.python_version()}")


def cmd_all(args) -> int:
    """Regenerate OUT/results.md and OUT/results/* for every preset of ``STUDY``."""
    out = _writable(args.out)
    figdir = _writable(os.path.join(out, "results"))
    start = time.perf_counter()
    sections, summary = [], []
    for name, size in STUDY.items():
        seeds = size["seeds"] if args.seeds is None else args.seeds
        horizon = size["horizon"] if args.horizon is None else args.horizon
        print(f"jaxbco compare --all: {name} ({seeds} seeds, T = {horizon})", file=sys.stderr,
              flush=True)
        res = compare(name, seeds, horizon, out=figdir, dtype=args.dtype, key=args.key,
                      verbose=True, progress=not args.quiet)
        sections.append(section_markdown(res, f"results/{slug(name)}.png"))
        summary.append(f"| {name} | {res.seeds} | {res.horizon} | {res.dim} | {res.wall_s:.0f} |")
    total = time.perf_counter() - start
    cmd = "python -m jaxbco.compare --all --out " + args.out
    if args.dtype != "float32":
        cmd += f" --dtype {args.dtype}"
    head = [
        "# Comparison study: Algorithm 1 (rectified-bco) and the Table 1 baselines",
        "",
        f"Generated by `{cmd}` (every number and figure on this page comes from that one "
        f"command; it rewrites this file and `results/`). Machine: {_machine()}. "
        f"Total wall time {total:.0f} s ({total / 60:.1f} min), compile time included.",
        "",
        "Each algorithm runs with its documented `default_hyper` (rectified-bco: c = 1/2, "
        "eps = 0.1, delta = 1/T, xi = delta / r; the strongly convex schedule alpha_t = sigma t "
        "with sigma the loss's modulus where the loss is strongly convex) as one compiled "
        "`sweep` over all seeds; `compile + run` is that call's wall time. R_T is regret "
        "against the offline constrained optimum x*; V_T hard = sum_t [g_t(x_t)]_+, soft = "
        "sum_t g_t(x_t); brackets: 95% confidence interval of the mean over seeds. The figures "
        "show the mean over seeds with a 2.5-97.5% quantile band and the rectified-bco bound of "
        "the applicable theorem (dashed). See `jaxbco/compare.py` for the bound formulas and "
        "`jaxbco/data/portfolio.py` for the portfolio problem and its comparator.",
        "",
        "Sizes are small (16 seeds, short horizons for the smooth-constraint problems) so that "
        "the page builds on a shared 2-core CPU: compile time (one compiled call per algorithm "
        "and problem) and the accurate prox solver's inner loops dominate. Larger runs: "
        "`jaxbco compare --problem NAME --seeds N --horizon T`.",
        "",
        "| problem | seeds | T | d | wall (s) |",
        "| --- | --- | --- | --- | --- |",
        *summary,
        "",
    ]
    tail = [
        "## Larger runs",
        "",
        "yu-neely with 1000 seeds at T = 5000 (a separate command): "
        "[yu-neely-1000/yu-neely.md](yu-neely-1000/yu-neely.md).",
        "",
        "## Hyperparameter tuning",
        "",
        "Tuning the schedule by gradients through whole runs, against grid and random search "
        "on held-out seeds (quadratic-ball, the hutchinson-toy preset and the NYSE portfolio), "
        "has its own page with its commands: [tuning.md](tuning.md); a reduced-size walk-through "
        "is `notebooks/04_tuning.ipynb`.",
        "",
    ]
    with open(os.path.join(out, "results.md"), "w") as fh:
        fh.write("\n".join(head + sections + tail))
    print(f"wrote {os.path.join(out, 'results.md')} in {total:.0f} s")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxbco.compare",
                                     description=__doc__.splitlines()[0])
    _add_arguments(parser, with_all=True)
    args = parser.parse_args(argv)
    try:
        return cmd_compare(args)
    except (ValueError, NotImplementedError) as err:
        print(f"jaxbco compare: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jaxbco compare: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
