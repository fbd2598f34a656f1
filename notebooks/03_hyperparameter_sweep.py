# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 03 · Hyperparameter sweep: heat maps of $R_T/T$ and $V_T$ over $c$ and $\varepsilon$
#
# The schedule of Algorithm 1 has two exponents: $c$ sets the prox weight $\alpha_t = t^c$
# and the multiplier floor $\eta_t = t^c$, and $\varepsilon$ sets how much faster the penalty
# weight grows, $\gamma_t = t^{c+\varepsilon}$. This notebook runs the whole $c \times
# \varepsilon$ grid on many seeds in **one** compiled call (`jaxbco.grid` + `jaxbco.sweep`),
# labels it with `results.to_dataset(..., grid_axes={"c": ..., "eps": ...})` and draws heat
# maps of the mean final
#
# $$R_T/T = \tfrac1T \sum_{t\le T} f_t(x_t) - f_t(x^\star), \qquad V_T = \sum_{t\le T}[g_t(x_t)]_+ .$$

# %% [markdown]
# ## Parameters
#
# Full size: 10 values of $c$ × 6 of $\varepsilon$ (60 settings), 256 seeds, $T = 10^4$.
# `SMALL = True` (the parameters cell below): a 4 × 3 grid, 16 seeds, $T = 300$.

# %% tags=["parameters"]
SMALL = False  # True: the reduced sizes CI runs (papermill: -p SMALL True)
OUT_ROOT = "notebook-output"  # figures and files go to OUT_ROOT/<notebook>/

# %%
from pathlib import Path

import numpy as np


DIM = 10
if SMALL:
    C_VALUES = [0.5, 0.6, 0.75, 0.9]
    EPS_VALUES = [0.01, 0.1, 1.0]
    SEEDS, HORIZON = 16, 300
else:
    C_VALUES = [float(c) for c in np.round(np.linspace(0.5, 0.95, 10), 3)]
    EPS_VALUES = [0.01, 0.03, 0.1, 0.3, 1.0, 2.0]
    SEEDS, HORIZON = 256, 10_000
OUT_DIR = Path(OUT_ROOT) / "03_hyperparameter_sweep"
OUT_DIR.mkdir(parents=True, exist_ok=True)  # figures and files of this notebook
print(f"SMALL={SMALL}: {len(C_VALUES)} x {len(EPS_VALUES)} settings, {SEEDS} seeds, T={HORIZON}")

# %%
import json

import jax
import pandas as pd
from IPython.display import Image, display

import jaxbco
from jaxbco import plotting, problems, results

# %matplotlib inline
import matplotlib.pyplot as plt  # after jaxbco.plotting, which selects Agg on import

# %% [markdown]
# ## The sweep
#
# The problem is the main study's `quadratic-ball` (unit ball in $\mathbb R^{10}$, quadratic
# losses, one fixed linear constraint that binds). $\delta = 1/T$ and $\xi = \delta/r$ are
# the theorem's and the same for every setting. `grid` flattens the product with the first
# name ($c$) varying slowest; `to_dataset` needs `grid_axes` in the same order to restore
# the two dimensions.

# %%
problem = problems.make("quadratic-ball", DIM)
base = jaxbco.theorem_defaults(problem.domain, HORIZON)
hyper = jaxbco.grid(c=C_VALUES, eps=EPS_VALUES, delta=[float(base.delta)], xi=[float(base.xi)])
res = jaxbco.sweep(problem, HORIZON, hyper, seeds=SEEDS, progress=not SMALL)
print(f"{res.regret.shape[0]} settings x {SEEDS} seeds x T={HORIZON} in {res.wall_s:.1f} s "
      f"(one compiled call); failed runs: {int(res.failed.sum())}")

ds = results.to_dataset(res, grid_axes={"c": C_VALUES, "eps": EPS_VALUES},
                        config={"problem": "quadratic-ball", "dim": DIM})
ds

# %% [markdown]
# ## Heat maps
#
# Means over the seeds that did not fail, at $t = T$. Because every setting saw the same
# seeds (common random numbers), neighbouring cells differ by the effect of the
# hyperparameters, not by different data.

# %%
final = ds.isel(round=-1)
ok = ~final["failed"]
regret_T = (final["regret"].where(ok).mean("seed") / HORIZON).transpose("c", "eps")
violation_T = final["hard_violation"].where(ok).mean("seed").transpose("c", "eps")

plt.rcParams.update(plotting.PAPER_RC)  # jaxbco's figure settings (text >= 8 pt)
fig, axes = plt.subplots(1, 2, figsize=(7.2, 0.4 * len(C_VALUES) + 2.0), constrained_layout=True)
for ax, data, title in ((axes[0], regret_T, r"$R_T/T$"),
                        (axes[1], violation_T, r"$V_T=\sum_t [g_t(x_t)]_+$")):
    values = data.values
    im = ax.imshow(values, origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(EPS_VALUES)), [f"{e:g}" for e in EPS_VALUES])
    ax.set_yticks(range(len(C_VALUES)), [f"{c:g}" for c in C_VALUES])
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel("$c$")
    ax.set_title(f"mean {title} at T = {HORIZON}")
    mid = np.nanmean(values)
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            ax.text(j, i, f"{values[i, j]:.3g}", ha="center", va="center", fontsize=7,
                    color="white" if values[i, j] < mid else "black")
    fig.colorbar(im, ax=ax, shrink=0.9)
fig.savefig(OUT_DIR / "heatmaps.png", dpi=150, bbox_inches="tight")
plt.show()


# %% [markdown]
# What to look for: which axis moves each map. The regret map should change mostly along
# $c$ (step size and multiplier floor), while $\varepsilon$ enters only through
# $\gamma_t$, i.e. only once the constraint is violated, so its effect shows mainly in
# $V_T$. The cell below measures this instead of asserting it: the average range of each
# map along one axis with the other held fixed.

# %%
def spread(data, along):
    return float((data.max(along) - data.min(along)).mean())

print(f"R_T/T: mean range along c = {spread(regret_T, 'c'):.3g}, along eps = {spread(regret_T, 'eps'):.3g}")
print(f"V_T  : mean range along c = {spread(violation_T, 'c'):.3g}, along eps = {spread(violation_T, 'eps'):.3g}")

# %% [markdown]
# ## Trade-off and the best settings
#
# `results.summary_table` has one row per grid point with 95% confidence intervals. A
# setting is *Pareto-optimal* if no other setting has both a lower $R_T/T$ and a lower
# $V_T$. If the front below holds several distinct points, lowering one quantity costs the
# other and a choice needs a weight, as in the tuning notebook (04), which minimises
# $J = R_T/T + \kappa V_T/T$; if it collapses to one point (or ties), one setting is best on
# both counts at this $T$, and the answer may change with $T$ (rerun at full size).

# %%
table = results.summary_table(ds)
r, v = table["regret_over_T_mean"].values, table["hard_violation_mean"].values
table["pareto"] = [not np.any((r <= r[i]) & (v <= v[i]) & ((r < r[i]) | (v < v[i]))) for i in range(len(table))]
cols = ["c", "eps", "regret_over_T_mean", "regret_over_T_ci_lo", "regret_over_T_ci_hi",
        "hard_violation_mean", "hard_violation_ci_lo", "hard_violation_ci_hi", "failed", "pareto"]
table[table["pareto"]][cols].sort_values("regret_over_T_mean")

# %%
fig, ax = plt.subplots(figsize=(5.5, 3.8), constrained_layout=True)
sc = ax.scatter(table["regret_over_T_mean"], table["hard_violation_mean"], c=table["c"],
                s=20 + 60 * np.log10(table["eps"] / min(EPS_VALUES) + 1), cmap="viridis")
front = table[table["pareto"]].sort_values("regret_over_T_mean")
ax.plot(front["regret_over_T_mean"], front["hard_violation_mean"], "k-", lw=0.8, label="Pareto front")
ax.set_xlabel("$R_T/T$")
ax.set_ylabel("$V_T$")
ax.set_title("each setting (colour: c, size: eps)")
fig.colorbar(sc, ax=ax, label="c")
fig.legend(loc="outside lower center")
fig.savefig(OUT_DIR / "tradeoff.png", dpi=150, bbox_inches="tight")
plt.show()

# %% [markdown]
# ## Curves of one slice
#
# `plot_dataset` on the slice $\varepsilon = 0.1$ (the theorem's value) shows how the
# curves behind one column of the heat maps evolve over the rounds (mean over seeds with the
# 95% confidence interval of the mean). The theorem's reference slopes are
# left out here (`theory_slopes={}`: one per value of $c$ would crowd the panels); notebook
# 02 compares slopes with the theory.

# %%
eps_slice = min(EPS_VALUES, key=lambda e: abs(e - 0.1))
png, _ = plotting.plot_dataset(ds.sel(eps=eps_slice), OUT_DIR / "slice_eps", theory_slopes={})
display(Image(filename=png, width=720))

# %%
summary = {
    "notebook": "03_hyperparameter_sweep", "small": SMALL, "horizon": HORIZON, "seeds": SEEDS,
    "c": C_VALUES, "eps": EPS_VALUES,
    "regret_over_T": regret_T.values.tolist(), "hard_violation": violation_T.values.tolist(),
    "failed_runs": int(res.failed.sum()),
    "pareto": [{"c": float(row.c), "eps": float(row.eps)} for row in front.itertuples()],
}
(OUT_DIR / "summary.json").write_text(json.dumps(summary, indent=1))
print("JAXBCO_NOTEBOOK_RESULT", json.dumps(summary))
