# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 02 · Monte-Carlo study: 10⁴ seeds against the theory
#
# With a time-varying constraint $g_t$ (Theorem 2's setting), Hikima (2023) bounds, for the
# schedule with exponent $c \in [1/2, 1)$,
#
# $$R_T = \sum_{t\le T} f_t(x_t) - f_t(x^\star) = O\!\big(T^{\max(c,\,1-c)}\big), \qquad
#   V_T = \sum_{t\le T} [g_t(x_t)]_+ = O\!\big(T^{1-c/2}\big).$$
#
# This notebook runs 10 000 seeds (full size) for two values of $c$ in one compiled call,
# overlays the theorem's bounds with their constants (`compare.bound_constants`,
# `compare.bound_curves`) and fits the log-log slopes of the mean curves
# (`compare.fit_exponent`) to compare them with $\max(c, 1-c)$ and $1 - c/2$.

# %% [markdown]
# ## Parameters
#
# Full size: 10 000 seeds, $T = 10^4$, about 100 log-spaced checkpoints (about
# $2\times10^8$ seed-rounds: tens of minutes on a 2-core CPU; a progress bar is shown).
# `SMALL = True` (the parameters cell below): 32 seeds and $T = 300$, enough to execute every cell but far
# too short for the slopes to mean anything.

# %% tags=["parameters"]
SMALL = False  # True: the reduced sizes CI runs (papermill: -p SMALL True)
OUT_ROOT = "notebook-output"  # figures and files go to OUT_ROOT/<notebook>/

# %%
from pathlib import Path

DIM = 10
SEEDS = 32 if SMALL else 10_000
HORIZON = 300 if SMALL else 10_000
N_CHECKPOINTS = 100                          # log-spaced rounds where curves are recorded
C_VALUES = [0.5, 0.75]
FIT_BATCHES = 8                              # disjoint seed batches for the slopes' spread
OUT_DIR = Path(OUT_ROOT) / "02_monte_carlo_study"
OUT_DIR.mkdir(parents=True, exist_ok=True)  # figures and files of this notebook
print(f"SMALL={SMALL}: d={DIM}, T={HORIZON}, seeds={SEEDS}, c in {C_VALUES}")

# %%
import json

import jax
import numpy as np
import pandas as pd
from IPython.display import Image, display

import jaxbco
from jaxbco import compare, plotting, problems, results
from jaxbco.plotting import panels

# %matplotlib inline
import matplotlib.pyplot as plt  # after jaxbco.plotting, which selects Agg on import

# %% [markdown]
# ## Problem and sweep
#
# `time-varying-ball`: $X$ the unit ball in $\mathbb R^{10}$,
# $f_t(x) = \lVert x-\theta_t\rVert^2$ with $\theta_t \sim \mathcal N(0.6\,a, 0.1^2 I)$, and
# $g_t(x) = \langle a, x\rangle - 0.3 - s_t$ with a fresh slack $s_t \sim U[0, 0.2]$ each
# round. The comparator $x^\star$ must satisfy *every* $g_t$, i.e. essentially
# $\langle a, x\rangle \le 0.3$, while the learner may use the slack of each round; so
# $R_T$ can turn negative, which the theorems allow.
#
# Both settings use the theorem defaults otherwise ($\varepsilon = 0.1$, $\delta = 1/T$,
# $\xi = \delta/r$).

# %%
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

# %% [markdown]
# ## The spread over seeds
#
# With this many seeds the *distribution* of $R_T/T$ and $V_T$ is as informative as the
# mean. `results.to_frame` on the last round gives one row per (c, seed).

# %%
last = results.to_frame(ds.isel(round=[-1]))
last["regret_over_T"] = last["regret"] / HORIZON
last.groupby("c")[["regret_over_T", "hard_violation"]].quantile([0.01, 0.1, 0.5, 0.9, 0.99]).unstack(0)

# %% [markdown]
# ## Theory: constants and bound curves
#
# `compare.bound_constants` estimates the constants of the theorem that applies
# (here Theorem 2: convex loss, time-varying constraint): $F$ and $G$ bound the gradients of
# $f_t$ and $g_t$ on $X$, $D$ is the diameter of $X$, $d$ the dimension.
# `compare.bound_curves` evaluates the bounds at the checkpoint rounds:
#
# $$R_t \le \Big(\tfrac{9F^2d^2}{4(1-c)} + \tfrac{D^2}{2} + 2F\Big)\, t^{\max(c,1-c)}, \qquad
#   V_t \le \Big(\tfrac{27F^2d^2 + G^2}{4} + 3FdD\big(8 + \tfrac1\varepsilon\big) + 2D^2\Big)\, t^{1-c/2}.$$
#
# These are worst-case constants (note the $F^2d^2$ terms), so expect the bounds to sit
# orders of magnitude above the measured means: the interesting comparison is the *slope*.

# %%
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

# %% [markdown]
# ## Exponent fit
#
# The slope of $\log \bar R_t$ and $\log \bar V_t$ against $\log t$ (means over the seeds that
# did not fail) is fitted by least squares over the window $[\max(10, T/100), T]$, and also
# over its first and last decade, to see whether the slope is still moving. A slope is
# reported only where the mean curve is positive over the whole window (the regret can be
# negative here, see above). The spread is the standard deviation of the slope over
# `FIT_BATCHES` disjoint batches of seeds, divided by $\sqrt{\text{batches}}$.
#
# How to read it: the theorems bound the *order* of growth, so at large $T$ the fitted slopes
# should not exceed $\max(c,1-c)$ and $1-c/2$. Over a finite window the local slope of a
# curve that is still in its transient can be larger (a curve far below its bound may still
# be catching up); a slope that decreases from the early to the late decade is the sign of
# that. At the CI size ($T$ of a few hundred) the numbers only show that the code runs.

# %%
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

# %% [markdown]
# ## Figure: measured means, the theorem's bounds and the fitted power laws
#
# Solid: mean over seeds with the 10–90% range of the seeds (shaded); dashed: the bound of
# `bound_curves` (same colour); dotted: the fitted power law over the fit window. Only
# positive values can be drawn on log axes.

# %%
plt.rcParams.update(plotting.PAPER_RC)  # jaxbco's figure settings (text >= 8 pt)
fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.6), constrained_layout=True)
for ax, metric in ((axes[0], "regret"), (axes[1], "hard_violation")):
    drawn = []
    for i, c in enumerate(C_VALUES):
        color = plotting.WIDE_COLORS[i]
        curves = ds[metric].sel(c=c).where(ok.sel(c=c)).values
        mean = np.nanmean(curves, axis=0)
        q10, q90 = np.nanquantile(curves, [0.1, 0.9], axis=0)
        ax.plot(t, mean, color=color, lw=1.6, label=f"c = {c}: mean over seeds")
        ax.fill_between(t, q10, q90, color=color, alpha=0.15, lw=0)
        ax.plot(t, theory[c][1][metric], "--", color=color, lw=1, label=f"c = {c}: theorem's bound")
        drawn += [mean, q10, q90, theory[c][1][metric]]
        row = fits[(fits.c == c) & (fits.metric == metric)].iloc[0]
        if np.isfinite(row["slope (full)"]):
            inside = (t >= lo) & (t <= hi)
            ref = mean[inside][-1] * (t[inside] / t[inside][-1]) ** row["slope (full)"]
            ax.plot(t[inside], ref, ":", color="k", lw=1.2)
    ax.set_xscale("log")
    panels.scale_y(ax, drawn)  # log where all positive, else symmetric-log: no clamp floor
    ax.set_xlabel("round $t$")
    ax.set_title(plotting.METRIC_LABELS[metric][0])
    ax.set_ylabel(plotting.METRIC_LABELS[metric][1])
handles, labels = axes[0].get_legend_handles_labels()
handles.append(plt.Line2D([], [], ls=":", color="k"))
labels.append("fitted power law")
handles.append(plt.Rectangle((0, 0), 1, 1, color="0.35", alpha=0.15, lw=0))
labels.append(panels.BAND_LABEL)
fig.legend(handles, labels, loc="outside lower center", ncols=3)
fig.suptitle(f"time-varying-ball, d = {DIM}, {SEEDS} seeds, T = {HORIZON}")
fig.savefig(OUT_DIR / "theory_overlay.png", dpi=150, bbox_inches="tight")
plt.show()

# %% [markdown]
# The library's own figure (`plot_dataset`) shows the same curves with the 95% confidence
# interval of the mean and short slope guides of the theorem that applies near the data,
# which makes the slope comparison easier to see than the far-away bounds.

# %%
png, _ = plotting.plot_dataset(ds, OUT_DIR / "monte_carlo")
display(Image(filename=png, width=720))

# %%
summary = {
    "notebook": "02_monte_carlo_study", "small": SMALL, "horizon": HORIZON, "seeds": SEEDS,
    "failed_seeds": int(res.failed.sum()),
    "fits": [{"c": float(r["c"]), "metric": r["metric"], "theory": float(r["theory exponent"]),
              "slope": float(r["slope (full)"]), "mean_at_T": r["mean at T"], "bound_at_T": r["bound at T"]}
             for _, r in fits.iterrows()],
}
(OUT_DIR / "summary.json").write_text(json.dumps(summary, indent=1))
print("JAXBCO_NOTEBOOK_RESULT", json.dumps(summary))
