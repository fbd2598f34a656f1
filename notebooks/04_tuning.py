# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 04 · Differentiable tuning through whole runs
#
# A whole run of Algorithm 1 is one pure JAX function of its hyperparameters, so it can be
# differentiated end to end. `jaxbco.tune` minimises
#
# $$J(h) = \frac1S\sum_{\text{seeds}} \Big( \frac{R_T(h)}{T} + \kappa\,\frac{V_T(h)}{T} \Big),\qquad
#   R_T = \sum_{t\le T} f_t(x_t) - f_t(x^\star),\quad V_T = \sum_{t\le T} [g_t(x_t)]_+$$
#
# over the free hyperparameters $h = (c, \varepsilon, \text{alpha\_scale})$ with Adam on
# forward-mode gradients (`jax.jacfwd` through the `lax.scan` over $T$ rounds), and compares
# it with grid search and random search. Every method is judged on the same **held-out**
# seeds, which none of them saw while searching (see `docs/tuning.md` for the details and
# the full-size results).

# %% [markdown]
# ## Parameters
#
# Full size: the setup of `docs/tuning.md` ($T = 2000$, 25 steps × 8 fresh seeds, a $5^3$
# grid and 125 random settings on 64 seeds, 256 held-out seeds). `SMALL = True` (the parameters cell below):
# $T = 200$, 10 steps, a $3^3$ grid and 27 random settings on 16 seeds, 64 held-out seeds.

# %% tags=["parameters"]
SMALL = False  # True: the reduced sizes CI runs (papermill: -p SMALL True)
OUT_ROOT = "notebook-output"  # figures and files go to OUT_ROOT/<notebook>/

# %%
from pathlib import Path

DIM = 10
FREE = ("c", "eps", "alpha_scale")   # the tuned hyperparameters; the rest stay at the theorem defaults
KAPPA = 100.0                        # weight of V_T / T in J
if SMALL:
    HORIZON, STEPS, TRAIN_SEEDS, HELDOUT = 200, 10, 8, 64
    GRID_POINTS, SEARCH_SEEDS = 3, 16
else:
    HORIZON, STEPS, TRAIN_SEEDS, HELDOUT = 2000, 25, 8, 256
    GRID_POINTS, SEARCH_SEEDS = 5, 64
RANDOM_SAMPLES = GRID_POINTS ** len(FREE)  # as many settings as the grid
OUT_DIR = Path(OUT_ROOT) / "04_tuning"
OUT_DIR.mkdir(parents=True, exist_ok=True)  # figures and files of this notebook
print(f"SMALL={SMALL}: T={HORIZON}, {STEPS} steps x {TRAIN_SEEDS} seeds, grid {GRID_POINTS}^{len(FREE)}, "
      f"{HELDOUT} held-out seeds")

# %%
import json

import jax
import numpy as np
import pandas as pd

import jaxbco
from jaxbco import plotting, problems, tune

# %matplotlib inline
import matplotlib.pyplot as plt

# %% [markdown]
# ## Gradient tuning
#
# `tune.tune` starts at the theorem defaults ($c = 1/2$, $\varepsilon = 0.1$,
# alpha_scale $= 1$; $c$ starts just inside its range, where the sigmoid parameterisation
# is not flat) and takes `STEPS` Adam steps, each on `TRAIN_SEEDS` fresh training seeds.
# The counted cost is steps × seeds × (k + 1) full runs (one primal and $k$ tangent
# streams), plus the checks of the pathwise gradient against central differences
# (`estimator="auto"`: 2 × seeds runs every 10 steps) and the validation of every step's
# point ((steps + 2) × max(4, seeds / 2) runs); the returned point is the validation's best.
# `heldout=None`: the held-out evaluation is done once for all methods below.
#
# What to look for: the training $J$ falls quickly in the first steps and then fluctuates
# (fresh seeds each step make it noisy).

# %%
problem = problems.make("quadratic-ball", DIM)
tuned = tune.tune(problem, HORIZON, free=FREE, kappa=KAPPA, steps=STEPS, seeds=TRAIN_SEEDS,
                  fresh_seeds=True, heldout=None)
print(f"{tuned.steps} steps in {tuned.wall_s:.1f} s ({tuned.compile_s:.1f} s compile), "
      f"{tuned.runs} full runs counted, gradient {tuned.estimator_used}")

traj = pd.DataFrame({"J (train)": tuned.trajectory["J"], "R_T/T": tuned.trajectory["regret"],
                     "V_T": tuned.trajectory["violation"],
                     **{name: tuned.trajectory["values"][name][:-1] for name in FREE}})
traj.index.name = "step"
traj.round(4)

# %% [markdown]
# ## Grid search and random search
#
# Both rank their settings on `SEARCH_SEEDS` training seeds (ids 0, 1, ...) in one compiled
# call each (all settings × seeds batched), over the same search box in the same
# parameterisation (`heldout=None` again).

# %%
grid = tune.grid_search(problem, HORIZON, free=FREE, kappa=KAPPA, points=GRID_POINTS,
                        seeds=SEARCH_SEEDS, heldout=None)
rand = tune.random_search(problem, HORIZON, free=FREE, kappa=KAPPA, samples=RANDOM_SAMPLES,
                          seeds=SEARCH_SEEDS, heldout=None)
print(f"grid: {len(grid.Z)} settings in {grid.wall_s:.1f} s; random: {len(rand.Z)} settings in {rand.wall_s:.1f} s")

# %% [markdown]
# ## Held-out evaluation
#
# The four chosen settings (defaults, grid's best, random's best, tuned) run together in
# **one** `jaxbco.sweep` call on `HELDOUT` held-out seeds, `tune.heldout_ids` (ids from
# $2^{31}$ on, which no method trained on), with the exact algorithm and the same master key
# as the searches. All methods see the same held-out data, so the *paired* difference of
# $J$ per seed is much less noisy than either $J$ alone.

# %%
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

# %% [markdown]
# What to look for: all three searches improve on the theorem defaults by a wide margin for
# this $\kappa$; compare the held-out $J$ of gradient tuning with the grid's and random
# search's together with the **full runs** each needed. A grid costs points$^k$ × seeds
# runs, a forward-mode gradient step $(k+1)$ × seeds, so the gradient's advantage in runs
# grows with the number $k$ of free hyperparameters. At the CI size the grid is tiny and
# the differences are noisy; the full-size numbers are in `docs/tuning.md`.

# %% [markdown]
# ## J over the gradient steps
#
# Training $J$ per step (on that step's seeds, before the update) with the held-out $J$ of
# each method as horizontal lines.

# %%
plt.rcParams.update(plotting.PAPER_RC)  # jaxbco's figure settings (text >= 8 pt)
fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.2), constrained_layout=True)
ax = axes[0]
steps = np.arange(len(tuned.trajectory["J"]))
ax.plot(steps, tuned.trajectory["J"], "o-", ms=3, color=plotting.WIDE_COLORS[0],
        label="gradient tuning: J on training seeds")
for (name, row), color in zip(table.iterrows(), plotting.WIDE_COLORS[1:]):
    ax.axhline(row[f"J held-out ({HELDOUT} seeds)"], color=color, ls="--", lw=1, label=f"held-out: {name}")
ax.set_yscale("log")
ax.set_xlabel("Adam step")
ax.set_ylabel(r"$J = R_T/T + \kappa V_T/T$")
ax.set_title("objective")
fig.legend(*ax.get_legend_handles_labels(), loc="outside lower left", ncols=1)
ax = axes[1]
for name, color in zip(FREE, plotting.WIDE_COLORS):
    ax.plot(np.arange(len(tuned.trajectory["values"][name])), tuned.trajectory["values"][name],
            color=color, label=name)
ax.set_yscale("log")
ax.set_xlabel("Adam step")
ax.set_ylabel("value")
ax.set_title("free hyperparameters")
fig.legend(*ax.get_legend_handles_labels(), loc="outside lower right", ncols=1)
fig.savefig(OUT_DIR / "tuning.png", dpi=150, bbox_inches="tight")
plt.show()

# %%
summary = {
    "notebook": "04_tuning", "small": SMALL, "horizon": HORIZON, "steps": STEPS,
    **dict(zip(("J_defaults", "J_grid", "J_random", "J_tuned"),
               map(float, table[f"J held-out ({HELDOUT} seeds)"]))),
    "failed_heldout": int((~ok).sum()),
    "runs": {"grid": grid.runs, "random": rand.runs, "gradient": tuned.runs},
    "tuned": {n: float(np.asarray(getattr(tuned.hyper, n))) for n in FREE},
    "train_J": [float(j) for j in tuned.trajectory["J"]],
}
(OUT_DIR / "summary.json").write_text(json.dumps(summary, indent=1))
print("JAXBCO_NOTEBOOK_RESULT", json.dumps(summary))
