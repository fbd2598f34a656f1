# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 · Quickstart: one run, one sweep, one figure
#
# This notebook runs Algorithm 1 of Hikima (2023) (two-point bandit feedback, rectified
# penalty, proximal step on the shrunk set) with `jaxbco`:
#
# 1. **one run**: one seed, one hyperparameter setting (`jaxbco.run`);
# 2. **one sweep**: two values of the exponent $c$ on many seeds, as *one* compiled call
#    (`jaxbco.sweep`), turned into a labelled dataset (`jaxbco.results`);
# 3. **one figure**: regret and hard violation against the round $t$ (`jaxbco.plotting.plot_dataset`).
#
# The two quantities measured everywhere are, per seed,
#
# $$R_T = \sum_{t=1}^{T} f_t(x_t) - f_t(x^\star), \qquad
#   V_T = \sum_{t=1}^{T} [g_t(x_t)]_+ ,$$
#
# the regret against the best fixed point $x^\star$ that satisfies every constraint in
# hindsight, and the *hard* violation (violations are never cancelled by slack in other
# rounds).

# %% [markdown]
# ## Parameters
#
# `SMALL = True` (the parameters cell below; what CI runs) shrinks the run to a few dozen
# seeds and a few hundred rounds; the full size is the README's main study (1000 seeds, $T = 10^4$).
# Figures and files go to `OUT_ROOT/01_quickstart/`.

# %% tags=["parameters"]
SMALL = False  # True: the reduced sizes CI runs (papermill: -p SMALL True)
OUT_ROOT = "notebook-output"  # figures and files go to OUT_ROOT/<notebook>/

# %%
from pathlib import Path

DIM = 10                                      # dimension d
SEEDS = 32 if SMALL else 1000                 # seeds of the sweep
HORIZON = 300 if SMALL else 10_000            # rounds T
C_VALUES = [0.5, 0.75]                        # exponents c of the sweep
OUT_DIR = Path(OUT_ROOT) / "01_quickstart"
OUT_DIR.mkdir(parents=True, exist_ok=True)  # figures and files of this notebook
print(f"SMALL={SMALL}: d={DIM}, T={HORIZON}, seeds={SEEDS}, output in {OUT_DIR}")

# %%
import json

import jax
import jax.numpy as jnp
import numpy as np
from IPython.display import Image, display

import jaxbco
from jaxbco import constraints, losses, plotting, results, sequences, sets

print("jax", jax.__version__, "on", jax.default_backend(), "| float32 by default")

# %% [markdown]
# ## The problem
#
# $X$ is the unit ball in $\mathbb{R}^d$, the losses are $f_t(x) = \lVert x - \theta_t\rVert^2$
# with $\theta_t \sim \mathcal N(0.6\,a, 0.1^2 I)$, and one fixed linear constraint
# $g(x) = \langle a, x\rangle - 0.3 \le 0$ with $a = \mathbf 1/\sqrt d$. The mean
# $0.6\,a$ violates the constraint, so the constraint binds at the comparator $x^\star$. The
# learner only sees $f_t$ at two points per round (bandit feedback) and $g_t$ after playing.
# (This is the registered problem `quadratic-ball`, written out here.)

# %%
a = jnp.ones(DIM) / DIM**0.5
problem = jaxbco.Problem(
    domain=sets.L2Ball(jnp.zeros(DIM), 1.0),                  # X
    loss=losses.Quadratic(),                                  # f_t(x) = ||x - theta_t||^2
    loss_data=sequences.IIDNormal(0.6 * a, jnp.full(DIM, 0.1)),
    constraint=constraints.Linear(),                          # g_t(x) = <a, x> - b
    constraint_data=sequences.Fixed((a, jnp.asarray(0.3))),
)

# %% [markdown]
# ## Hyperparameters: the theorem defaults
#
# Theorem 1's schedule is $\alpha_t = t^c$ (prox weight), $\gamma_t = t^{c+\varepsilon}$
# (penalty weight) and $\eta_t = t^c$ (floor of the multiplier $\lambda_t$), with
# $c = 1/2$, $\varepsilon = 0.1$, the perturbation radius $\delta = 1/T$ and the
# shrinkage $\xi = \delta / r$ ($r$: inscribed radius of $X$). `theorem_defaults` returns
# exactly these as a `Hyper` (a pytree of arrays: a new value never recompiles).

# %%
hyper = jaxbco.theorem_defaults(problem.domain, HORIZON)
print({k: float(getattr(hyper, k)) for k in ("c", "eps", "delta", "xi")})

# %% [markdown]
# ## One run
#
# `jaxbco.run` simulates one seed for $T$ rounds as one `lax.scan` and records the curves at
# about 100 log-spaced checkpoint rounds (always including $t = T$). The first call compiles
# (a few seconds); the offline comparator $x^\star$ is computed in the same call.
#
# What to look for: $R_T/T$ is the average excess loss per round over the comparator; it
# shrinks as $T$ grows (compare the reduced and the full size: with $\delta = 1/T$ and
# $\alpha_t = \sqrt t$ the first few hundred rounds are dominated by the noisy two-point
# gradient estimates). $V_T$ stays small because the multiplier $\lambda_t$ grows whenever
# the constraint is violated, $x^\star$ sits on the constraint ($\langle a, x^\star\rangle = 0.3$),
# and `failed` is `False` (a run that goes non-finite is flagged, not silently kept).

# %%
one = jaxbco.run(problem, HORIZON, hyper, seed=0)
print(f"checkpoints: {one.rounds.size} rounds, from t={one.rounds[0]} to t={one.rounds[-1]}")
print(f"R_T / T   = {one.regret[-1] / HORIZON:.4f}")
print(f"V_T       = {one.hard_violation[-1]:.4f}   (soft sum of g_t(x_t): {one.soft_violation[-1]:.3f})")
print(f"lambda_T  = {one.lam[-1]:.4g}")
print(f"failed    = {bool(one.failed)}; compile + run {one.wall_s:.1f} s")
print("x*        =", np.round(one.x_star, 3), " <a, x*> =", round(float(jnp.dot(a, one.x_star)), 4))

# %% [markdown]
# ## One sweep: a grid of settings × many seeds in one call
#
# `jaxbco.grid` builds the Cartesian product of hyperparameter values (first name slowest);
# `jaxbco.sweep` runs every setting on every seed in *one* compiled call. All settings see
# the same data and perturbation directions for a given seed (common random numbers), so
# differences between settings are not noise from different draws.
#
# `results.to_dataset(..., grid_axes={"c": ...})` labels the setting axis by $c$;
# `results.summary_table` gives the final-round means with 95% confidence intervals.

# %%
sweep_hyper = jaxbco.grid(c=C_VALUES, eps=[0.1], delta=[float(hyper.delta)], xi=[float(hyper.xi)])
res = jaxbco.sweep(problem, HORIZON, sweep_hyper, seeds=SEEDS)
print("curves:", res.regret.shape, "(settings, seeds, checkpoints);",
      f"compile + run {res.wall_s:.1f} s; failed seeds: {int(res.failed.sum())}")

ds = results.to_dataset(res, grid_axes={"c": C_VALUES},
                        config={"problem": "quadratic-ball", "dim": DIM})
table = results.summary_table(ds)
table[["c", "seeds", "failed", "regret_over_T_mean", "regret_over_T_ci_lo", "regret_over_T_ci_hi",
       "hard_violation_mean", "soft_violation_mean"]]

# %% [markdown]
# The dataset can be saved (netCDF, with provenance: versions, devices, configuration) and
# loaded back in one call; `results.to_frame` gives a tidy table (one row per setting, seed
# and round) for pandas.

# %%
path = results.save(ds, OUT_DIR / "quickstart.nc")
back = results.load(path)
assert np.array_equal(back["regret"].values, ds["regret"].values, equal_nan=True)
print("saved and reloaded", path, "| jaxbco", back.attrs["jaxbco_version"], "| jax", back.attrs["jax_version"])

frame = results.to_frame(ds)
frame[frame["round"] == HORIZON].groupby("c")[["regret", "hard_violation"]].describe().T

# %% [markdown]
# ## One figure
#
# `plot_dataset` draws, per metric, the mean over seeds with the 95% confidence interval of
# the mean (shaded), on log axes. The short grey segments are the slopes of the theorem
# that applies near the data: the constraint is fixed (Theorem 1), so $t^{\max(c,1-c)}$
# for the regret and a constant, $O(1)$, for the hard violation.
#
# What to look for: the regret curves bend below a line of slope 1 on these log axes (so
# $R_T/T \to 0$ as $T$ grows; at the reduced CI size the bend has only started), and the
# violation curves flatten out instead of growing like the reference slopes: with a fixed
# constraint the violations happen early.

# %%
png, pdf = plotting.plot_dataset(ds, OUT_DIR / "quickstart")
display(Image(filename=png, width=720))

# %%
summary = {
    "notebook": "01_quickstart", "small": SMALL, "horizon": HORIZON, "seeds": SEEDS,
    "run_regret_over_T": float(one.regret[-1] / HORIZON),
    "run_hard_violation": float(one.hard_violation[-1]),
    "sweep_c": [float(c) for c in table["c"]],
    "sweep_regret_over_T": [float(v) for v in table["regret_over_T_mean"]],
    "sweep_hard_violation": [float(v) for v in table["hard_violation_mean"]],
    "failed_seeds": int(res.failed.sum()),
    "figure": str(png),
}
(OUT_DIR / "summary.json").write_text(json.dumps(summary, indent=1))
print("JAXBCO_NOTEBOOK_RESULT", json.dumps(summary))
