"""Gradient tuning: optax steps on z with gradients taken through whole runs.

``jax.jacfwd`` (``mode="forward"``, the default; memory independent of T) or ``jax.grad``
(``mode="reverse"``, with ``jax.checkpoint`` on each round's ``algorithm.step``) differentiates
the objective.  Constrained form: with ``budget=v``, "minimise R_T / T subject to mean V_T <= v"
by the Lagrangian R_T / T + mu (V_T - v) / T, descending in h and ascending in mu
multiplicatively (scale-free, mu stays > 0):
mu <- mu exp(multiplier_lr clip((mean V_T - v) / v, -1, 1)), mu_0 = kappa.

The compiled step and its cost counted in full runs are in ``jaxbco.tune.step``, the measured
cost (``measure_cost``) in ``jaxbco.tune.cost``; their names are importable from here too, and
wall times are reported.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxbco._src import checks
from jaxbco.algorithms import AbstractAlgorithm
from jaxbco.tune.cost import measure_cost as measure_cost
from jaxbco.tune.objective import (
    HELDOUT_OFFSET,
    Evaluation,
    _Context,
    heldout_ids,
    training_ids,
)
from jaxbco.tune.step import FORWARD as FORWARD
from jaxbco.tune.step import REMAT_EXTRA as REMAT_EXTRA
from jaxbco.tune.step import REVERSE as REVERSE
from jaxbco.tune.step import REVERSE_COST as REVERSE_COST
from jaxbco.tune.step import _compiled_step
from jaxbco.tune.step import default_optimizer as default_optimizer


@dataclasses.dataclass(frozen=True)
class TuneResult:
    """What ``tune`` returns: the trajectory, the tuned hyperparameters and their held-out
    evaluation, with the cost.

    Attributes:
        names: the free hyperparameters.
        trajectory: per step (at z before the update) the training "J", "L", "regret" (mean
            R_T/T), "violation" (mean V_T), "failed", "multiplier" μ and "grad" dL/dz
            (steps, k); "z" and "values" (name -> (steps + 1,)) include the final point.
        hyper: the tuned hyperparameters (validated).
        hyper_start: the starting hyperparameters.
        heldout_start: the ``Evaluation`` of the start on the held-out seeds (None when
            heldout=None).
        heldout_end: the ``Evaluation`` of the result on them.
        runs: full-run equivalents of the training steps (one seed × T rounds; a forward
            gradient of k parameters costs k + 1, a reverse one 3, or 4 with remat).
        runs_per_step: the full-run equivalents of one step.
        eval_runs: the runs of the held-out evaluation.
        wall_s: the training loop's seconds, compile included.
        compile_s: the compile seconds within ``wall_s``.
        eval_wall_s: the held-out evaluation's seconds.
        mode: "forward" or "reverse".
        seeds: the training seeds per step.
        fresh_seeds: whether every step drew new seeds.
        steps: the optimiser steps.
    """

    names: tuple
    trajectory: dict
    hyper: Any
    hyper_start: Any
    heldout_start: Evaluation | None
    heldout_end: Evaluation | None
    runs: int
    runs_per_step: int
    eval_runs: int
    wall_s: float
    compile_s: float
    eval_wall_s: float
    mode: str
    seeds: int
    fresh_seeds: bool
    steps: int

    def __repr__(self) -> str:
        """One line: the tuned values, the held-out J before and after, and the cost."""
        values = ", ".join(
            f"{n}={float(np.mean(np.asarray(getattr(self.hyper, n)))):.4g}" for n in self.names
        )
        held = (
            ""
            if self.heldout_end is None
            else f"; held-out J {_said(self.heldout_start)} -> {_said(self.heldout_end)}"
        )
        return (
            f"TuneResult({values}{held}; {self.steps} steps x {self.seeds} seeds, "
            f"{self.runs} full-run equivalents, {self.wall_s:.1f} s, mode {self.mode!r})"
        )


def _said(ev) -> str:
    """A held-out J with its failed seeds, if any ("inf (64 of 64 seeds failed)")."""
    j = f"{float(np.mean(ev.J)):.4g}"
    return j + (f" ({ev.failed} of {len(ev.per_seed)} seeds failed)" if ev.failed else "")


def tune(
    problem,
    horizon: int,
    *,
    algorithm: AbstractAlgorithm | None = None,
    init=None,
    free=("c", "eps", "alpha_scale"),
    transforms: dict | None = None,
    kappa: float = 1.0,
    budget: float | None = None,
    multiplier_lr: float = 0.5,
    optimizer: optax.GradientTransformation | None = None,
    steps: int = 20,
    seeds: int = 16,
    fresh_seeds: bool = False,
    heldout: int | None = 64,
    key=0,
    mode: str = FORWARD,
    smoothing: float | None = None,
    remat: bool = True,
    dtype="float32",
) -> TuneResult:
    """Tune hyperparameters by gradients taken through whole runs.

    Minimises J(h) = mean over seeds of R_T(h)/T + κ·V_T(h)/T (or, with ``budget``, R_T/T
    subject to mean V_T ≤ budget, by the Lagrangian R_T/T + μ(V_T − budget)/T with the
    multiplicative ascent μ ← μ·exp(multiplier_lr·clip((V_T − budget)/budget, −1, 1)),
    μ₀ = κ) by ``steps`` optimiser steps on the free hyperparameters in an unconstrained
    coordinate z (``transforms``), each on ``seeds`` training seeds; then evaluates the start
    and the result on ``heldout`` held-out seeds with the exact algorithm.  One compiled step
    function.

    Args:
        problem: the problem.
        horizon: the number of rounds T.
        algorithm: the algorithm (default ``RectifiedBCO()``).
        init: the starting hyperparameters (default: the algorithm's ``default_hyper``, the
            theorem defaults for ``RectifiedBCO``).
        free: the names of the hyperparameters to tune; the others stay at ``init``.
        transforms: name -> ``Transform`` replacing the default map between z and the value.
        kappa: κ ≥ 0, the weight of V_T in J (with a budget: the starting multiplier μ₀ > 0).
        budget: a bound on the mean V_T (None: the penalised form).
        multiplier_lr: the step of the multiplier's ascent.
        optimizer: any optax ``GradientTransformation`` on z (default
            ``default_optimizer(steps)``: Adam, learning rate 0.3 → 0.03).
        steps: the optimiser steps.
        seeds: the training seeds per step.
        fresh_seeds: new training seeds every step (default: the same seeds, common random
            numbers).
        heldout: the held-out seeds the start and the result are judged on (None skips them).
        key: the master key.
        mode: "forward" (``jax.jacfwd``; memory independent of T) or "reverse" (``jax.grad``).
        smoothing: the algorithm's smoothing while gradients are taken (None: the exact
            algorithm; the held-out J is always the exact algorithm's).
        remat: in reverse mode, recompute each round's step (``jax.checkpoint``).
        dtype: "float32" or "float64".

    Returns:
        The ``TuneResult``.

    Raises:
        ValueError: an input out of range, an unknown free name or mode.
    """
    return _tune(
        problem,
        horizon,
        algorithm=algorithm,
        init=init,
        free=free,
        transforms=transforms,
        kappa=kappa,
        budget=budget,
        multiplier_lr=multiplier_lr,
        optimizer=optimizer,
        steps=steps,
        seeds=seeds,
        fresh_seeds=fresh_seeds,
        heldout=heldout,
        key=key,
        mode=mode,
        smoothing=smoothing,
        remat=remat,
        dtype=dtype,
    )


def _tune(
    problem,
    horizon: int,
    *,
    algorithm=None,
    init=None,
    free=("c", "eps", "alpha_scale"),
    transforms=None,
    kappa: float = 1.0,
    budget=None,
    multiplier_lr: float = 0.5,
    optimizer=None,
    steps: int = 20,
    seeds: int = 16,
    fresh_seeds: bool = False,
    heldout: int | None = 64,
    key=0,
    mode: str = FORWARD,
    smoothing=None,
    remat: bool = True,
    dtype="float32",
    context: _Context | None = None,
) -> TuneResult:
    """``tune`` on a shared ``_Context`` (``context``: the one ``compare_methods`` builds once
    for every method; None builds it here)."""
    ctx = context or _Context(
        problem,
        horizon,
        algorithm=algorithm,
        init=init,
        free=free,
        transforms=transforms,
        kappa=kappa,
        key=key,
        dtype=dtype,
    )
    steps = checks.check_positive_int("steps", steps)
    seeds = checks.check_positive_int("seeds", seeds)
    if budget is not None:
        checks.check_range("budget", budget, low=0.0)
        if ctx.kappa <= 0:
            raise ValueError("with a budget, kappa is the starting multiplier mu_0 and must be > 0")
    checks.check_range("multiplier_lr", multiplier_lr, low=0.0)
    if steps * seeds >= HELDOUT_OFFSET:
        raise ValueError(
            "steps x seeds must stay below 2^31 so training ids never reach the held-out ids"
        )
    if heldout is not None:  # None: no held-out evaluation (the search report's own use)
        heldout = checks.check_positive_int(
            "heldout (the held-out seeds the start and the result are judged on; None skips them)",
            heldout,
        )
    space = ctx.space
    optimizer = default_optimizer(steps) if optimizer is None else optimizer
    ids0 = training_ids(0, seeds, fresh_seeds)
    start = time.perf_counter()
    compiled, z, opt_state, mu, runs_per_seed = _compiled_step(
        ctx, mode, optimizer, smoothing, remat, ids0
    )
    compile_s = time.perf_counter() - start
    rows, zs = [], [np.asarray(z, np.float64)]
    for s in range(steps):
        ids = jnp.asarray(training_ids(s, seeds, fresh_seeds), jnp.uint32)
        z, opt_state, rec = compiled(z, opt_state, mu, ids)
        rec = jax.device_get(rec)
        rows.append(rec + (float(mu),))
        zs.append(np.asarray(z, np.float64))
        if budget is not None:  # multiplicative dual ascent on mu (the Lagrangian's multiplier)
            excess = np.clip((float(rec[3]) - budget) / max(budget, 1e-12), -1.0, 1.0)
            mu = jnp.asarray(float(mu) * np.exp(multiplier_lr * excess), ctx.dtype)
    wall = time.perf_counter() - start
    zs = np.stack(zs)
    traj = {
        name: np.asarray([row[i] for row in rows], np.float64)
        for i, name in enumerate(("J", "L", "regret", "violation"))
    }
    traj["failed"] = np.asarray([row[4] for row in rows])
    traj["grad"] = np.stack([np.asarray(row[5], np.float64) for row in rows])
    traj["multiplier"] = np.asarray([row[6] for row in rows])
    traj["z"] = zs
    decoded = [space.values(space.decode(jnp.asarray(zz, ctx.dtype))) for zz in zs]
    traj["values"] = {n: np.asarray([d[n] for d in decoded]) for n in space.names}
    final = ctx.finalize(space.decode(z))
    start_h = ctx.finalize(ctx.init)
    hs = he = None
    eval_wall = 0.0
    if heldout is not None:
        t0 = time.perf_counter()
        hs, he = ctx.evaluate(ctx.stack([start_h, final]), heldout_ids(heldout))
        eval_wall = time.perf_counter() - t0
        for when, ev in (("start", hs), ("tuned", he)):
            if ev.failed == len(ev.per_seed):
                warnings.warn(
                    f"every held-out run failed (went non-finite) at the {when} "
                    f"hyperparameters: held-out J is inf, nothing was measured",
                    RuntimeWarning,
                    stacklevel=2,
                )
    return TuneResult(
        names=space.names,
        trajectory=traj,
        hyper=final,
        hyper_start=start_h,
        heldout_start=hs,
        heldout_end=he,
        runs=steps * seeds * runs_per_seed,
        runs_per_step=seeds * runs_per_seed,
        eval_runs=2 * heldout if heldout is not None else 0,
        wall_s=wall,
        compile_s=compile_s,
        eval_wall_s=eval_wall,
        mode=mode,
        seeds=seeds,
        fresh_seeds=fresh_seeds,
        steps=steps,
    )
