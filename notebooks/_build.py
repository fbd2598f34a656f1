"""Generate the notebooks of this folder from the cell sources below (outputs stripped).

    python notebooks/_build.py          # rewrite notebooks/*.ipynb
    python notebooks/_build.py --check  # exit 1 if a committed .ipynb differs from this file

Every notebook is a list of ``md(...)`` / ``code(...)`` cells; edit them here, rerun this
script and commit both this file and the .ipynb files.  Cell ids are deterministic
(``<notebook>-<index>``) so a rebuild without changes is byte-identical.  Each notebook reads
``JAXBCO_NOTEBOOK_SMALL=1`` (the reduced sizes CI runs, see tests/test_notebooks.py) in its
parameters cell and ends with one ``JAXBCO_NOTEBOOK_RESULT {json}`` line that the test checks.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
RESULT_MARK = "JAXBCO_NOTEBOOK_RESULT"


def md(text: str):
    return ("markdown", textwrap.dedent(text).strip("\n"))


def code(text: str):
    return ("code", textwrap.dedent(text).strip("\n"))


def _out_dir(name: str) -> str:
    # the second line is indented like the code cells' sources (dedented afterwards)
    return (f'OUT_DIR = Path(os.environ.get("JAXBCO_NOTEBOOK_OUT", "notebook-output")) / "{name}"\n'
            "    OUT_DIR.mkdir(parents=True, exist_ok=True)  # figures and files of this notebook")


# ---------------------------------------------------------------------------------------------
# 01_quickstart

QUICKSTART = [
    md(r"""
    # 01 · Quickstart: one run, one sweep, one figure

    This notebook runs Algorithm 1 of Hikima et al. (two-point bandit feedback, rectified
    penalty, proximal step on the shrunk set) with `jaxbco`:

    1. **one run**: one seed, one hyperparameter setting (`jaxbco.run`);
    2. **one sweep**: two values of the exponent $c$ on many seeds, as *one* compiled call
       (`jaxbco.sweep`), turned into a labelled dataset (`jaxbco.results`);
    3. **one figure**: regret and hard violation against the round $t$ (`jaxbco.plotting.plot_dataset`).

    The two quantities measured everywhere are, per seed,

    $$R_T = \sum_{t=1}^{T} f_t(x_t) - f_t(x^\star), \qquad
      V_T = \sum_{t=1}^{T} [g_t(x_t)]_+ ,$$

    the regret against the best fixed point $x^\star$ that satisfies every constraint in
    hindsight, and the *hard* violation (violations are never cancelled by slack in other
    rounds).
    """),
    md(r"""
    ## Parameters

    `JAXBCO_NOTEBOOK_SMALL=1` (set by CI) shrinks the run to a few dozen seeds and a few
    hundred rounds; the full size is the README's main study (1000 seeds, $T = 10^4$).
    Figures and files go to `OUT_DIR` (override with `JAXBCO_NOTEBOOK_OUT`).
    """),
    code(f'''
    import os
    from pathlib import Path

    SMALL = os.environ.get("JAXBCO_NOTEBOOK_SMALL") == "1"  # reduced sizes (CI)

    DIM = 10                                      # dimension d
    SEEDS = 32 if SMALL else 1000                 # seeds of the sweep
    HORIZON = 300 if SMALL else 10_000            # rounds T
    C_VALUES = [0.5, 0.75]                        # exponents c of the sweep
    {_out_dir("01_quickstart")}
    print(f"SMALL={{SMALL}}: d={{DIM}}, T={{HORIZON}}, seeds={{SEEDS}}, output in {{OUT_DIR}}")
    '''),
    code("""
    import json

    import jax
    import jax.numpy as jnp
    import numpy as np
    from IPython.display import Image, display

    import jaxbco
    from jaxbco import constraints, losses, plotting, results, sequences, sets

    print("jax", jax.__version__, "on", jax.default_backend(), "| float32 by default")
    """),
    md(r"""
    ## The problem

    $X$ is the unit ball in $\mathbb{R}^d$, the losses are $f_t(x) = \lVert x - \theta_t\rVert^2$
    with $\theta_t \sim \mathcal N(0.6\,a, 0.1^2 I)$, and one fixed linear constraint
    $g(x) = \langle a, x\rangle - 0.3 \le 0$ with $a = \mathbf 1/\sqrt d$. The mean
    $0.6\,a$ violates the constraint, so the constraint binds at the comparator $x^\star$. The
    learner only sees $f_t$ at two points per round (bandit feedback) and $g_t$ after playing.
    (This is the registered problem `quadratic-ball`, written out here.)
    """),
    code("""
    a = jnp.ones(DIM) / DIM**0.5
    problem = jaxbco.Problem(
        domain=sets.L2Ball(jnp.zeros(DIM), 1.0),                  # X
        loss=losses.Quadratic(),                                  # f_t(x) = ||x - theta_t||^2
        loss_data=sequences.IIDNormal(0.6 * a, jnp.full(DIM, 0.1)),
        constraint=constraints.Linear(),                          # g_t(x) = <a, x> - b
        constraint_data=sequences.Fixed((a, jnp.asarray(0.3))),
    )
    """),
    md(r"""
    ## Hyperparameters: the theorem defaults

    Theorem 1's schedule is $\alpha_t = t^c$ (prox weight), $\gamma_t = t^{c+\varepsilon}$
    (penalty weight) and $\eta_t = t^c$ (floor of the multiplier $\lambda_t$), with
    $c = 1/2$, $\varepsilon = 0.1$, the perturbation radius $\delta = 1/T$ and the
    shrinkage $\xi = \delta / r$ ($r$: inscribed radius of $X$). `theorem_defaults` returns
    exactly these as a `Hyper` (a pytree of arrays: a new value never recompiles).
    """),
    code("""
    hyper = jaxbco.theorem_defaults(problem.domain, HORIZON)
    print({k: float(getattr(hyper, k)) for k in ("c", "eps", "delta", "xi")})
    """),
    md(r"""
    ## One run

    `jaxbco.run` simulates one seed for $T$ rounds as one `lax.scan` and records the curves at
    about 100 log-spaced checkpoint rounds (always including $t = T$). The first call compiles
    (a few seconds); the offline comparator $x^\star$ is computed in the same call.

    What to look for: $R_T/T$ is the average excess loss per round over the comparator; it
    shrinks as $T$ grows (compare the reduced and the full size: with $\delta = 1/T$ and
    $\alpha_t = \sqrt t$ the first few hundred rounds are dominated by the noisy two-point
    gradient estimates). $V_T$ stays small because the multiplier $\lambda_t$ grows whenever
    the constraint is violated, $x^\star$ sits on the constraint ($\langle a, x^\star\rangle = 0.3$),
    and `failed` is `False` (a run that goes non-finite is flagged, not silently kept).
    """),
    code("""
    one = jaxbco.run(problem, HORIZON, hyper, seed=0)
    print(f"checkpoints: {one.rounds.size} rounds, from t={one.rounds[0]} to t={one.rounds[-1]}")
    print(f"R_T / T   = {one.regret[-1] / HORIZON:.4f}")
    print(f"V_T       = {one.hard_violation[-1]:.4f}   (soft sum of g_t(x_t): {one.soft_violation[-1]:.3f})")
    print(f"lambda_T  = {one.lam[-1]:.4g}")
    print(f"failed    = {bool(one.failed)}; compile + run {one.wall_s:.1f} s")
    print("x*        =", np.round(one.x_star, 3), " <a, x*> =", round(float(jnp.dot(a, one.x_star)), 4))
    """),
    md(r"""
    ## One sweep: a grid of settings × many seeds in one call

    `jaxbco.grid` builds the Cartesian product of hyperparameter values (first name slowest);
    `jaxbco.sweep` runs every setting on every seed in *one* compiled call. All settings see
    the same data and perturbation directions for a given seed (common random numbers), so
    differences between settings are not noise from different draws.

    `results.to_dataset(..., grid_axes={"c": ...})` labels the setting axis by $c$;
    `results.summary_table` gives the final-round means with 95% confidence intervals.
    """),
    code("""
    sweep_hyper = jaxbco.grid(c=C_VALUES, eps=[0.1], delta=[float(hyper.delta)], xi=[float(hyper.xi)])
    res = jaxbco.sweep(problem, HORIZON, sweep_hyper, seeds=SEEDS)
    print("curves:", res.regret.shape, "(settings, seeds, checkpoints);",
          f"compile + run {res.wall_s:.1f} s; failed seeds: {int(res.failed.sum())}")

    ds = results.to_dataset(res, grid_axes={"c": C_VALUES},
                            config={"problem": "quadratic-ball", "dim": DIM})
    table = results.summary_table(ds)
    table[["c", "seeds", "failed", "regret_over_T_mean", "regret_over_T_ci_lo", "regret_over_T_ci_hi",
           "hard_violation_mean", "soft_violation_mean"]]
    """),
    md(r"""
    The dataset can be saved (netCDF, with provenance: versions, devices, configuration) and
    loaded back in one call; `results.to_frame` gives a tidy table (one row per setting, seed
    and round) for pandas.
    """),
    code("""
    path = results.save(ds, OUT_DIR / "quickstart.nc")
    back = results.load(path)
    assert np.array_equal(back["regret"].values, ds["regret"].values, equal_nan=True)
    print("saved and reloaded", path, "| jaxbco", back.attrs["jaxbco_version"], "| jax", back.attrs["jax_version"])

    frame = results.to_frame(ds)
    frame[frame["round"] == HORIZON].groupby("c")[["regret", "hard_violation"]].describe().T
    """),
    md(r"""
    ## One figure

    `plot_dataset` draws, per metric, the mean over seeds with its 95% confidence band and
    (lighter) the 10–90% range of the seeds, on log axes. The dashed grey lines are reference
    slopes through the final means: $t^{\max(c,1-c)}$ for the regret (Theorem 1) and
    $t^{1-c/2}$ for the hard violation (Theorem 2's order, which also holds for a fixed
    constraint; Theorem 1 even bounds $V_T$ by a constant there).

    What to look for: the regret curves bend below a line of slope 1 on these log axes (so
    $R_T/T \to 0$ as $T$ grows; at the reduced CI size the bend has only started), and the
    violation curves flatten out instead of growing like the reference slopes: with a fixed
    constraint the violations happen early.
    """),
    code("""
    png, pdf = plotting.plot_dataset(ds, OUT_DIR / "quickstart")
    display(Image(filename=png, width=720))
    """),
    code(f"""
    summary = {{
        "notebook": "01_quickstart", "small": SMALL, "horizon": HORIZON, "seeds": SEEDS,
        "run_regret_over_T": float(one.regret[-1] / HORIZON),
        "run_hard_violation": float(one.hard_violation[-1]),
        "sweep_c": [float(c) for c in table["c"]],
        "sweep_regret_over_T": [float(v) for v in table["regret_over_T_mean"]],
        "sweep_hard_violation": [float(v) for v in table["hard_violation_mean"]],
        "failed_seeds": int(res.failed.sum()),
        "figure": str(png),
    }}
    (OUT_DIR / "summary.json").write_text(json.dumps(summary, indent=1))
    print("{RESULT_MARK}", json.dumps(summary))
    """),
]


# ---------------------------------------------------------------------------------------------
# 02_monte_carlo_study

MONTE_CARLO = [
    md(r"""
    # 02 · Monte-Carlo study: 10⁴ seeds against the theory

    With a time-varying constraint $g_t$ (Theorem 2's setting), Hikima et al. bound, for the
    schedule with exponent $c \in [1/2, 1)$,

    $$R_T = \sum_{t\le T} f_t(x_t) - f_t(x^\star) = O\!\big(T^{\max(c,\,1-c)}\big), \qquad
      V_T = \sum_{t\le T} [g_t(x_t)]_+ = O\!\big(T^{1-c/2}\big).$$

    This notebook runs 10 000 seeds (full size) for two values of $c$ in one compiled call,
    overlays the theorem's bounds with their constants (`compare.bound_constants`,
    `compare.bound_curves`) and fits the log-log slopes of the mean curves
    (`compare.fit_exponent`) to compare them with $\max(c, 1-c)$ and $1 - c/2$.
    """),
    md(r"""
    ## Parameters

    Full size: 10 000 seeds, $T = 10^4$, about 100 log-spaced checkpoints (about
    $2\times10^8$ seed-rounds: tens of minutes on a 2-core CPU; a progress bar is shown).
    `JAXBCO_NOTEBOOK_SMALL=1`: 32 seeds and $T = 300$, enough to execute every cell but far
    too short for the slopes to mean anything.
    """),
    code(f'''
    import os
    from pathlib import Path

    SMALL = os.environ.get("JAXBCO_NOTEBOOK_SMALL") == "1"  # reduced sizes (CI)

    DIM = 10
    SEEDS = 32 if SMALL else 10_000
    HORIZON = 300 if SMALL else 10_000
    N_CHECKPOINTS = 100                          # log-spaced rounds where curves are recorded
    C_VALUES = [0.5, 0.75]
    FIT_BATCHES = 8                              # disjoint seed batches for the slopes' spread
    {_out_dir("02_monte_carlo_study")}
    print(f"SMALL={{SMALL}}: d={{DIM}}, T={{HORIZON}}, seeds={{SEEDS}}, c in {{C_VALUES}}")
    '''),
    code("""
    import json

    import jax
    import numpy as np
    import pandas as pd
    from IPython.display import Image, display

    import jaxbco
    from jaxbco import compare, plotting, problems, results

    %matplotlib inline
    import matplotlib.pyplot as plt  # after jaxbco.plotting, which selects Agg on import
    """),
    md(r"""
    ## Problem and sweep

    `time-varying-ball`: $X$ the unit ball in $\mathbb R^{10}$,
    $f_t(x) = \lVert x-\theta_t\rVert^2$ with $\theta_t \sim \mathcal N(0.6\,a, 0.1^2 I)$, and
    $g_t(x) = \langle a, x\rangle - 0.3 - s_t$ with a fresh slack $s_t \sim U[0, 0.2]$ each
    round. The comparator $x^\star$ must satisfy *every* $g_t$, i.e. essentially
    $\langle a, x\rangle \le 0.3$, while the learner may use the slack of each round; so
    $R_T$ can turn negative, which the theorems allow.

    Both settings use the theorem defaults otherwise ($\varepsilon = 0.1$, $\delta = 1/T$,
    $\xi = \delta/r$).
    """),
    code("""
    problem = problems.make("time-varying-ball", DIM)
    strongly_convex = problem.strongly_convex
    base = jaxbco.theorem_defaults(problem.domain, HORIZON)
    hyper = jaxbco.grid(c=C_VALUES, eps=[float(base.eps)], delta=[float(base.delta)], xi=[float(base.xi)])
    checkpoints = jaxbco.log_checkpoints(HORIZON, N_CHECKPOINTS)

    res = jaxbco.sweep(problem, HORIZON, hyper, seeds=SEEDS, checkpoints=checkpoints,
                       progress=not SMALL)
    work = len(C_VALUES) * SEEDS * HORIZON
    print(f"{work:.3g} seed-rounds in {res.wall_s:.1f} s (compile included): "
          f"{work / res.wall_s:.3g} seed-rounds/s; failed seeds: {int(res.failed.sum())}")

    ds = results.to_dataset(res, grid_axes={"c": C_VALUES},
                            config={"problem": "time-varying-ball", "dim": DIM})
    results.summary_table(ds)[["c", "seeds", "failed", "regret_over_T_mean", "regret_over_T_ci_lo",
                               "regret_over_T_ci_hi", "hard_violation_mean", "hard_violation_ci_lo",
                               "hard_violation_ci_hi"]]
    """),
    md(r"""
    ## The spread over seeds

    With this many seeds the *distribution* of $R_T/T$ and $V_T$ is as informative as the
    mean. `results.to_frame` on the last round gives one row per (c, seed).
    """),
    code("""
    last = results.to_frame(ds.isel(round=[-1]))
    last["regret_over_T"] = last["regret"] / HORIZON
    last.groupby("c")[["regret_over_T", "hard_violation"]].quantile([0.01, 0.1, 0.5, 0.9, 0.99]).unstack(0)
    """),
    md(r"""
    ## Theory: constants and bound curves

    `compare.bound_constants` estimates the constants of the theorem that applies
    (here Theorem 2: convex loss, time-varying constraint): $F$ and $G$ bound the gradients of
    $f_t$ and $g_t$ on $X$, $D$ is the diameter of $X$, $d$ the dimension.
    `compare.bound_curves` evaluates the bounds at the checkpoint rounds:

    $$R_t \le \Big(\tfrac{9F^2d^2}{4(1-c)} + \tfrac{D^2}{2} + 2F\Big)\, t^{\max(c,1-c)}, \qquad
      V_t \le \Big(\tfrac{27F^2d^2 + G^2}{4} + 3FdD\big(8 + \tfrac1\varepsilon\big) + 2D^2\Big)\, t^{1-c/2}.$$

    These are worst-case constants (note the $F^2d^2$ terms), so expect the bounds to sit
    orders of magnitude above the measured means: the interesting comparison is the *slope*.
    """),
    code("""
    t = ds["round"].values.astype(float)
    theory = {}
    for c in C_VALUES:
        k = compare.bound_constants(problem, HORIZON, strongly_convex=strongly_convex,
                                    hyper=jaxbco.theorem_defaults(problem.domain, HORIZON, c=c))
        theory[c] = (k, compare.bound_curves(k, t))
    k0 = theory[C_VALUES[0]][0]
    print(f"{compare.theorem(k0)} applies: F = {k0['F']:.3g} ({k0['F_from']}), G = {k0['G']:.3g}, "
          f"D = {k0['D']:.3g}, d = {k0['d']}, eps = {k0['eps']:g}")
    for c, (k, b) in theory.items():
        print(f"c = {c}: bound at T on R_T = {b['regret'][-1]:.3g} ({b['regret_order']}), "
              f"on V_T = {b['hard_violation'][-1]:.3g} ({b['violation_order']})")
    """),
    md(r"""
    ## Exponent fit

    The slope of $\log \bar R_t$ and $\log \bar V_t$ against $\log t$ (means over the seeds that
    did not fail) is fitted by least squares over the window $[\max(10, T/100), T]$, and also
    over its first and last decade, to see whether the slope is still moving. A slope is
    reported only where the mean curve is positive over the whole window (the regret can be
    negative here, see above). The spread is the standard deviation of the slope over
    `FIT_BATCHES` disjoint batches of seeds, divided by $\sqrt{\text{batches}}$.

    How to read it: the theorems bound the *order* of growth, so at large $T$ the fitted slopes
    should not exceed $\max(c,1-c)$ and $1-c/2$. Over a finite window the local slope of a
    curve that is still in its transient can be larger (a curve far below its bound may still
    be catching up); a slope that decreases from the early to the late decade is the sign of
    that. At the CI size ($T$ of a few hundred) the numbers only show that the code runs.
    """),
    code("""
    lo, hi = max(10.0, HORIZON / 100), float(HORIZON)
    windows = {"full": (lo, hi), "early": (lo, min(10 * lo, hi)), "late": (max(hi / 10, lo), hi)}
    ok = ~ds["failed"]

    def slope(curve, window):
        a, b = window
        inside = (t >= a) & (t <= b)
        if inside.sum() < 3 or not np.all(curve[inside] > 0):
            return float("nan")  # not positive over the window: no power law to fit
        return compare.fit_exponent(t, curve, a, b)

    rows = []
    batches = np.array_split(np.arange(SEEDS), FIT_BATCHES)
    for c in C_VALUES:
        for metric, exponent in (("regret", max(c, 1 - c)), ("hard_violation", 1 - c / 2)):
            curves = ds[metric].sel(c=c).where(ok.sel(c=c)).values  # (seeds, rounds)
            mean = np.nanmean(curves, axis=0)
            per_batch = [slope(np.nanmean(curves[b], axis=0), windows["full"]) for b in batches]
            rows.append({"c": c, "metric": metric, "theory exponent": exponent,
                         **{f"slope ({w})": slope(mean, windows[w]) for w in windows},
                         "batch se": float(np.nanstd(per_batch, ddof=1) / np.sqrt(len(batches)))
                         if np.isfinite(per_batch).sum() > 1 else float("nan"),
                         "mean at T": float(mean[-1]),
                         "bound at T": float(theory[c][1][metric][-1])})
    fits = pd.DataFrame(rows)
    fits["slope <= theory"] = fits["slope (full)"] <= fits["theory exponent"]
    fits.round(4)
    """),
    md(r"""
    ## Figure: measured means, the theorem's bounds and the fitted power laws

    Solid: mean over seeds with the 10–90% range of the seeds (shaded); dashed: the bound of
    `bound_curves` (same colour); dotted: the fitted power law over the fit window. Only
    positive values can be drawn on log axes.
    """),
    code("""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    for ax, metric, title in ((axes[0], "regret", r"regret $R_t$"),
                              (axes[1], "hard_violation", r"hard violation $V_t=\\sum_{s\\leq t}[g_s(x_s)]_+$")):
        for i, c in enumerate(C_VALUES):
            color = f"C{i}"
            curves = ds[metric].sel(c=c).where(ok.sel(c=c)).values
            mean = np.nanmean(curves, axis=0)
            q10, q90 = np.nanquantile(curves, [0.1, 0.9], axis=0)
            floor = 0.3 * np.min(mean[mean > 0]) if np.any(mean > 0) else 1e-6  # log axes: clip the band
            ax.plot(t, np.where(mean > 0, mean, np.nan), color=color, lw=1.6, label=f"c = {c}: mean")
            ax.fill_between(t, np.maximum(q10, floor), np.maximum(q90, floor), color=color, alpha=0.15, lw=0)
            ax.plot(t, theory[c][1][metric], "--", color=color, lw=1, label=f"c = {c}: bound")
            row = fits[(fits.c == c) & (fits.metric == metric)].iloc[0]
            if np.isfinite(row["slope (full)"]):
                inside = (t >= lo) & (t <= hi)
                ref = mean[inside][-1] * (t[inside] / t[inside][-1]) ** row["slope (full)"]
                ax.plot(t[inside], ref, ":", color="k", lw=1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("round $t$")
        ax.set_title(title)
    axes[1].plot([], [], ":", color="k", label="fitted power law")
    axes[1].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"time-varying-ball, d = {DIM}, {SEEDS} seeds, T = {HORIZON}")
    fig.savefig(OUT_DIR / "theory_overlay.png", dpi=150)
    plt.show()
    """),
    md(r"""
    The library's own figure (`plot_dataset`) shows the same curves with 95% confidence bands
    of the mean and the theorem's slopes drawn through the final means, which makes the slope
    comparison easier to see than the far-away bounds.
    """),
    code("""
    png, _ = plotting.plot_dataset(ds, OUT_DIR / "monte_carlo")
    display(Image(filename=png, width=720))
    """),
    code(f"""
    summary = {{
        "notebook": "02_monte_carlo_study", "small": SMALL, "horizon": HORIZON, "seeds": SEEDS,
        "failed_seeds": int(res.failed.sum()),
        "fits": [{{"c": float(r["c"]), "metric": r["metric"], "theory": float(r["theory exponent"]),
                  "slope": float(r["slope (full)"]), "mean_at_T": r["mean at T"], "bound_at_T": r["bound at T"]}}
                 for _, r in fits.iterrows()],
    }}
    (OUT_DIR / "summary.json").write_text(json.dumps(summary, indent=1))
    print("{RESULT_MARK}", json.dumps(summary))
    """),
]


# ---------------------------------------------------------------------------------------------
# 03_hyperparameter_sweep

SWEEP = [
    md(r"""
    # 03 · Hyperparameter sweep: heat maps of $R_T/T$ and $V_T$ over $c$ and $\varepsilon$

    The schedule of Algorithm 1 has two exponents: $c$ sets the prox weight $\alpha_t = t^c$
    and the multiplier floor $\eta_t = t^c$, and $\varepsilon$ sets how much faster the penalty
    weight grows, $\gamma_t = t^{c+\varepsilon}$. This notebook runs the whole $c \times
    \varepsilon$ grid on many seeds in **one** compiled call (`jaxbco.grid` + `jaxbco.sweep`),
    labels it with `results.to_dataset(..., grid_axes={"c": ..., "eps": ...})` and draws heat
    maps of the mean final

    $$R_T/T = \tfrac1T \sum_{t\le T} f_t(x_t) - f_t(x^\star), \qquad V_T = \sum_{t\le T}[g_t(x_t)]_+ .$$
    """),
    md(r"""
    ## Parameters

    Full size: 10 values of $c$ × 6 of $\varepsilon$ (60 settings), 256 seeds, $T = 10^4$.
    `JAXBCO_NOTEBOOK_SMALL=1`: a 4 × 3 grid, 16 seeds, $T = 300$.
    """),
    code(f'''
    import os
    from pathlib import Path

    import numpy as np

    SMALL = os.environ.get("JAXBCO_NOTEBOOK_SMALL") == "1"  # reduced sizes (CI)

    DIM = 10
    if SMALL:
        C_VALUES = [0.5, 0.6, 0.75, 0.9]
        EPS_VALUES = [0.01, 0.1, 1.0]
        SEEDS, HORIZON = 16, 300
    else:
        C_VALUES = [float(c) for c in np.round(np.linspace(0.5, 0.95, 10), 3)]
        EPS_VALUES = [0.01, 0.03, 0.1, 0.3, 1.0, 2.0]
        SEEDS, HORIZON = 256, 10_000
    {_out_dir("03_hyperparameter_sweep")}
    print(f"SMALL={{SMALL}}: {{len(C_VALUES)}} x {{len(EPS_VALUES)}} settings, {{SEEDS}} seeds, T={{HORIZON}}")
    '''),
    code("""
    import json

    import jax
    import pandas as pd
    from IPython.display import Image, display

    import jaxbco
    from jaxbco import plotting, problems, results

    %matplotlib inline
    import matplotlib.pyplot as plt  # after jaxbco.plotting, which selects Agg on import
    """),
    md(r"""
    ## The sweep

    The problem is the main study's `quadratic-ball` (unit ball in $\mathbb R^{10}$, quadratic
    losses, one fixed linear constraint that binds). $\delta = 1/T$ and $\xi = \delta/r$ are
    the theorem's and the same for every setting. `grid` flattens the product with the first
    name ($c$) varying slowest; `to_dataset` needs `grid_axes` in the same order to restore
    the two dimensions.
    """),
    code("""
    problem = problems.make("quadratic-ball", DIM)
    base = jaxbco.theorem_defaults(problem.domain, HORIZON)
    hyper = jaxbco.grid(c=C_VALUES, eps=EPS_VALUES, delta=[float(base.delta)], xi=[float(base.xi)])
    res = jaxbco.sweep(problem, HORIZON, hyper, seeds=SEEDS, progress=not SMALL)
    print(f"{res.regret.shape[0]} settings x {SEEDS} seeds x T={HORIZON} in {res.wall_s:.1f} s "
          f"(one compiled call); failed runs: {int(res.failed.sum())}")

    ds = results.to_dataset(res, grid_axes={"c": C_VALUES, "eps": EPS_VALUES},
                            config={"problem": "quadratic-ball", "dim": DIM})
    ds
    """),
    md(r"""
    ## Heat maps

    Means over the seeds that did not fail, at $t = T$. Because every setting saw the same
    seeds (common random numbers), neighbouring cells differ by the effect of the
    hyperparameters, not by different data.
    """),
    code("""
    final = ds.isel(round=-1)
    ok = ~final["failed"]
    regret_T = (final["regret"].where(ok).mean("seed") / HORIZON).transpose("c", "eps")
    violation_T = final["hard_violation"].where(ok).mean("seed").transpose("c", "eps")

    fig, axes = plt.subplots(1, 2, figsize=(10, 0.45 * len(C_VALUES) + 2.2), constrained_layout=True)
    for ax, data, title in ((axes[0], regret_T, r"$R_T/T$"),
                            (axes[1], violation_T, r"$V_T=\\sum_t [g_t(x_t)]_+$")):
        values = data.values
        im = ax.imshow(values, origin="lower", aspect="auto", cmap="viridis")
        ax.set_xticks(range(len(EPS_VALUES)), [f"{e:g}" for e in EPS_VALUES])
        ax.set_yticks(range(len(C_VALUES)), [f"{c:g}" for c in C_VALUES])
        ax.set_xlabel(r"$\\varepsilon$")
        ax.set_ylabel("$c$")
        ax.set_title(f"mean {title} at T = {HORIZON}")
        mid = np.nanmean(values)
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                ax.text(j, i, f"{values[i, j]:.3g}", ha="center", va="center", fontsize=7,
                        color="white" if values[i, j] < mid else "black")
        fig.colorbar(im, ax=ax, shrink=0.9)
    fig.savefig(OUT_DIR / "heatmaps.png", dpi=150)
    plt.show()
    """),
    md(r"""
    What to look for: which axis moves each map. The regret map should change mostly along
    $c$ (step size and multiplier floor), while $\varepsilon$ enters only through
    $\gamma_t$, i.e. only once the constraint is violated, so its effect shows mainly in
    $V_T$. The cell below measures this instead of asserting it: the average range of each
    map along one axis with the other held fixed.
    """),
    code("""
    def spread(data, along):
        return float((data.max(along) - data.min(along)).mean())

    print(f"R_T/T: mean range along c = {spread(regret_T, 'c'):.3g}, along eps = {spread(regret_T, 'eps'):.3g}")
    print(f"V_T  : mean range along c = {spread(violation_T, 'c'):.3g}, along eps = {spread(violation_T, 'eps'):.3g}")
    """),
    md(r"""
    ## Trade-off and the best settings

    `results.summary_table` has one row per grid point with 95% confidence intervals. A
    setting is *Pareto-optimal* if no other setting has both a lower $R_T/T$ and a lower
    $V_T$. If the front below holds several distinct points, lowering one quantity costs the
    other and a choice needs a weight, as in the tuning notebook (04), which minimises
    $J = R_T/T + \kappa V_T/T$; if it collapses to one point (or ties), one setting is best on
    both counts at this $T$, and the answer may change with $T$ (rerun at full size).
    """),
    code("""
    table = results.summary_table(ds)
    r, v = table["regret_over_T_mean"].values, table["hard_violation_mean"].values
    table["pareto"] = [not np.any((r <= r[i]) & (v <= v[i]) & ((r < r[i]) | (v < v[i]))) for i in range(len(table))]
    cols = ["c", "eps", "regret_over_T_mean", "regret_over_T_ci_lo", "regret_over_T_ci_hi",
            "hard_violation_mean", "hard_violation_ci_lo", "hard_violation_ci_hi", "failed", "pareto"]
    table[table["pareto"]][cols].sort_values("regret_over_T_mean")
    """),
    code("""
    fig, ax = plt.subplots(figsize=(5.5, 3.8), constrained_layout=True)
    sc = ax.scatter(table["regret_over_T_mean"], table["hard_violation_mean"], c=table["c"],
                    s=20 + 60 * np.log10(table["eps"] / min(EPS_VALUES) + 1), cmap="viridis")
    front = table[table["pareto"]].sort_values("regret_over_T_mean")
    ax.plot(front["regret_over_T_mean"], front["hard_violation_mean"], "k-", lw=0.8, label="Pareto front")
    ax.set_xlabel("$R_T/T$")
    ax.set_ylabel("$V_T$")
    ax.set_title("each setting (colour: c, size: eps)")
    fig.colorbar(sc, ax=ax, label="c")
    ax.legend(fontsize=8)
    fig.savefig(OUT_DIR / "tradeoff.png", dpi=150)
    plt.show()
    """),
    md(r"""
    ## Curves of one slice

    `plot_dataset` on the slice $\varepsilon = 0.1$ (the theorem's value) shows how the
    curves behind one column of the heat maps evolve over the rounds (mean over seeds, 95%
    confidence band of the mean, 10–90% of the seeds). The theorem's reference slopes are
    left out here (`theory_slopes={}`: one per value of $c$ would crowd the panels); notebook
    02 compares slopes with the theory.
    """),
    code("""
    eps_slice = min(EPS_VALUES, key=lambda e: abs(e - 0.1))
    png, _ = plotting.plot_dataset(ds.sel(eps=eps_slice), OUT_DIR / "slice_eps", theory_slopes={})
    display(Image(filename=png, width=720))
    """),
    code(f"""
    summary = {{
        "notebook": "03_hyperparameter_sweep", "small": SMALL, "horizon": HORIZON, "seeds": SEEDS,
        "c": C_VALUES, "eps": EPS_VALUES,
        "regret_over_T": regret_T.values.tolist(), "hard_violation": violation_T.values.tolist(),
        "failed_runs": int(res.failed.sum()),
        "pareto": [{{"c": float(row.c), "eps": float(row.eps)}} for row in front.itertuples()],
    }}
    (OUT_DIR / "summary.json").write_text(json.dumps(summary, indent=1))
    print("{RESULT_MARK}", json.dumps(summary))
    """),
]


# ---------------------------------------------------------------------------------------------
# 04_tuning

TUNING = [
    md(r"""
    # 04 · Differentiable tuning through whole runs

    A whole run of Algorithm 1 is one pure JAX function of its hyperparameters, so it can be
    differentiated end to end. `jaxbco.tune` minimises

    $$J(h) = \frac1S\sum_{\text{seeds}} \Big( \frac{R_T(h)}{T} + \kappa\,\frac{V_T(h)}{T} \Big),\qquad
      R_T = \sum_{t\le T} f_t(x_t) - f_t(x^\star),\quad V_T = \sum_{t\le T} [g_t(x_t)]_+$$

    over the free hyperparameters $h = (c, \varepsilon, \text{alpha\_scale})$ with Adam on
    forward-mode gradients (`jax.jacfwd` through the `lax.scan` over $T$ rounds), and compares
    it with grid search and random search. Every method is judged on the same **held-out**
    seeds, which none of them saw while searching (see `docs/tuning.md` for the details and
    the full-size results).
    """),
    md(r"""
    ## Parameters

    Full size: the setup of `docs/tuning.md` ($T = 2000$, 25 steps × 8 fresh seeds, a $5^3$
    grid and 125 random settings on 64 seeds, 256 held-out seeds). `JAXBCO_NOTEBOOK_SMALL=1`:
    $T = 200$, 12 steps, a $3^3$ grid and 27 random settings on 16 seeds, 64 held-out seeds.
    """),
    code(f'''
    import os
    from pathlib import Path

    SMALL = os.environ.get("JAXBCO_NOTEBOOK_SMALL") == "1"  # reduced sizes (CI)

    DIM = 10
    FREE = ("c", "eps", "alpha_scale")   # the tuned hyperparameters; the rest stay at the theorem defaults
    KAPPA = 100.0                        # weight of V_T / T in J
    if SMALL:
        HORIZON, STEPS, TRAIN_SEEDS, HELDOUT = 200, 12, 8, 64
        GRID_POINTS, SEARCH_SEEDS = 3, 16
    else:
        HORIZON, STEPS, TRAIN_SEEDS, HELDOUT = 2000, 25, 8, 256
        GRID_POINTS, SEARCH_SEEDS = 5, 64
    RANDOM_SAMPLES = GRID_POINTS ** len(FREE)  # as many settings as the grid
    {_out_dir("04_tuning")}
    print(f"SMALL={{SMALL}}: T={{HORIZON}}, {{STEPS}} steps x {{TRAIN_SEEDS}} seeds, grid {{GRID_POINTS}}^{{len(FREE)}}, "
          f"{{HELDOUT}} held-out seeds")
    '''),
    code("""
    import json

    import jax
    import numpy as np
    import pandas as pd

    import jaxbco
    from jaxbco import problems, tune

    %matplotlib inline
    import matplotlib.pyplot as plt
    """),
    md(r"""
    ## Gradient tuning

    `tune.tune` starts at the theorem defaults ($c = 1/2$, $\varepsilon = 0.1$,
    alpha_scale $= 1$; $c$ starts just inside its range, where the sigmoid parameterisation
    is not flat) and takes `STEPS` Adam steps, each on `TRAIN_SEEDS` fresh training seeds.
    The counted cost is steps × seeds × (k + 1) full runs (one primal and $k$ tangent
    streams). `heldout=0`: the held-out evaluation is done once for all methods below.

    What to look for: the training $J$ falls quickly in the first steps and then fluctuates
    (fresh seeds each step make it noisy).
    """),
    code("""
    problem = problems.make("quadratic-ball", DIM)
    tuned = tune.tune(problem, HORIZON, free=FREE, kappa=KAPPA, steps=STEPS, seeds=TRAIN_SEEDS,
                      fresh_seeds=True, heldout=0)
    print(f"{tuned.steps} steps in {tuned.wall_s:.1f} s ({tuned.compile_s:.1f} s compile), "
          f"{tuned.runs} full runs counted")

    traj = pd.DataFrame({"J (train)": tuned.trajectory["J"], "R_T/T": tuned.trajectory["regret"],
                         "V_T": tuned.trajectory["violation"],
                         **{name: tuned.trajectory["values"][name][:-1] for name in FREE}})
    traj.index.name = "step"
    traj.round(4)
    """),
    md(r"""
    ## Grid search and random search

    Both rank their settings on `SEARCH_SEEDS` training seeds (ids 0, 1, ...) in one compiled
    call each (all settings × seeds batched), over the same search box in the same
    parameterisation (`heldout=0` again).
    """),
    code("""
    grid = tune.grid_search(problem, HORIZON, free=FREE, kappa=KAPPA, points=GRID_POINTS,
                            seeds=SEARCH_SEEDS, heldout=0)
    rand = tune.random_search(problem, HORIZON, free=FREE, kappa=KAPPA, samples=RANDOM_SAMPLES,
                              seeds=SEARCH_SEEDS, heldout=0)
    print(f"grid: {len(grid.Z)} settings in {grid.wall_s:.1f} s; random: {len(rand.Z)} settings in {rand.wall_s:.1f} s")
    """),
    md(r"""
    ## Held-out evaluation

    The four chosen settings (defaults, grid's best, random's best, tuned) run together in
    **one** `jaxbco.sweep` call on `HELDOUT` held-out seeds, `tune.heldout_ids` (ids from
    $2^{31}$ on, which no method trained on), with the exact algorithm and the same master key
    as the searches. All methods see the same held-out data, so the *paired* difference of
    $J$ per seed is much less noisy than either $J$ alone.
    """),
    code("""
    methods = {
        "theorem defaults": (tuned.hyper_start, 0, 0.0),
        f"grid search ({len(grid.Z)} settings)": (grid.hyper, grid.runs, grid.wall_s),
        f"random search ({len(rand.Z)} settings)": (rand.hyper, rand.runs, rand.wall_s),
        f"gradient tuning ({tuned.steps} steps)": (tuned.hyper, tuned.runs, tuned.wall_s),
    }
    chosen = [h for h, _, _ in methods.values()]
    stacked = jax.tree_util.tree_map(lambda *v: np.stack([np.asarray(x, np.float64) for x in v]), *chosen)
    heldout = jaxbco.sweep(problem, HORIZON, stacked, seeds=tune.heldout_ids(HELDOUT), checkpoints=[HORIZON])

    ok = ~heldout.failed                                            # (methods, seeds)
    R = heldout.regret[:, :, -1] / HORIZON
    V = heldout.hard_violation[:, :, -1]
    J = np.where(ok, R + KAPPA * V / HORIZON, np.nan)               # per method and seed
    GRID = 1
    rows = []
    for i, (name, (h, runs, wall)) in enumerate(methods.items()):
        d = J[i] - J[GRID]
        d = d[np.isfinite(d)]
        rows.append({"method": name, f"J held-out ({HELDOUT} seeds)": np.nanmean(J[i]),
                     "se": np.nanstd(J[i], ddof=1) / np.sqrt(ok[i].sum()),
                     "J - J(grid), paired": d.mean(), "paired se": d.std(ddof=1) / np.sqrt(d.size),
                     "R_T/T": R[i][ok[i]].mean(), "V_T": V[i][ok[i]].mean(), "failed": int((~ok[i]).sum()),
                     "full runs": runs, "wall s": wall, **{n: float(np.asarray(getattr(h, n))) for n in FREE}})
    table = pd.DataFrame(rows).set_index("method")
    table.round(5)
    """),
    md(r"""
    What to look for: all three searches improve on the theorem defaults by a wide margin for
    this $\kappa$; compare the held-out $J$ of gradient tuning with the grid's and random
    search's together with the **full runs** each needed. A grid costs points$^k$ × seeds
    runs, a forward-mode gradient step $(k+1)$ × seeds, so the gradient's advantage in runs
    grows with the number $k$ of free hyperparameters. At the CI size the grid is tiny and
    the differences are noisy; the full-size numbers are in `docs/tuning.md`.
    """),
    md(r"""
    ## J over the gradient steps

    Training $J$ per step (on that step's seeds, before the update) with the held-out $J$ of
    each method as horizontal lines.
    """),
    code("""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True)
    ax = axes[0]
    steps = np.arange(len(tuned.trajectory["J"]))
    ax.plot(steps, tuned.trajectory["J"], "o-", ms=3, color="C0", label="gradient tuning: J on training seeds")
    for (name, row), color in zip(table.iterrows(), ("C3", "C1", "C2", "C0")):
        ax.axhline(row[f"J held-out ({HELDOUT} seeds)"], color=color, ls="--", lw=1, label=f"held-out: {name}")
    ax.set_yscale("log")
    ax.set_xlabel("Adam step")
    ax.set_ylabel(r"$J = R_T/T + \\kappa V_T/T$")
    ax.legend(fontsize=7)
    ax = axes[1]
    for name in FREE:
        ax.plot(np.arange(len(tuned.trajectory["values"][name])), tuned.trajectory["values"][name], label=name)
    ax.set_yscale("log")
    ax.set_xlabel("Adam step")
    ax.set_title("free hyperparameters")
    ax.legend(fontsize=8)
    fig.savefig(OUT_DIR / "tuning.png", dpi=150)
    plt.show()
    """),
    code(f"""
    summary = {{
        "notebook": "04_tuning", "small": SMALL, "horizon": HORIZON, "steps": STEPS,
        **dict(zip(("J_defaults", "J_grid", "J_random", "J_tuned"),
                   map(float, table[f"J held-out ({{HELDOUT}} seeds)"]))),
        "failed_heldout": int((~ok).sum()),
        "runs": {{"grid": grid.runs, "random": rand.runs, "gradient": tuned.runs}},
        "tuned": {{n: float(np.asarray(getattr(tuned.hyper, n))) for n in FREE}},
        "train_J": [float(j) for j in tuned.trajectory["J"]],
    }}
    (OUT_DIR / "summary.json").write_text(json.dumps(summary, indent=1))
    print("{RESULT_MARK}", json.dumps(summary))
    """),
]


NOTEBOOKS = {
    "01_quickstart": QUICKSTART,
    "02_monte_carlo_study": MONTE_CARLO,
    "03_hyperparameter_sweep": SWEEP,
    "04_tuning": TUNING,
}


def build(name: str):
    """The notebook ``name`` as an nbformat node, outputs empty, execution counts null."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for i, (kind, source) in enumerate(NOTEBOOKS[name]):
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        cell = make(source)
        cell.id = f"{name}-{i:02d}".replace("_", "-")
        nb.cells.append(cell)
    nbformat.validate(nb)
    return nb


def render(name: str) -> str:
    return nbformat.writes(build(name)) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    check = "--check" in argv
    stale = []
    for name in NOTEBOOKS:
        path = HERE / f"{name}.ipynb"
        text = render(name)
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(path.name)
        else:
            path.write_text(text)
            print("wrote", path)
    if stale:
        print("out of date (run python notebooks/_build.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
