"""Gradient tuning: optax steps on z with gradients of whole runs, checked against the
objective, and a result never worse than the start.

The gradient: pathwise, by ``jax.jacfwd`` (``mode="forward"``, the default; memory independent
of T) or ``jax.grad`` (``mode="reverse"``, with ``jax.checkpoint`` on each round's
``algorithm.step``), or smoothed (antithetic Gaussian smoothing of J in z, value calls only);
``estimator="auto"`` checks the pathwise one against central differences at intervals and
switches to the smoothed one where they disagree (``jaxbco.tune.estimators``,
``jaxbco.tune.descent``).  The result: the best of every step's point and the defaults on
validation seeds, and the defaults where that point is worse on the held-out seeds
(``jaxbco.tune.selection``).  Constrained form: with ``budget=v``, "minimise R_T / T subject to mean V_T <= v"
by the Lagrangian R_T / T + mu (V_T - v) / T, descending in h and ascending in mu
multiplicatively (scale-free, mu stays > 0):
mu <- mu exp(multiplier_lr clip((mean V_T - v) / v, -1, 1)), mu_0 = kappa.

The compiled step and its cost counted in full runs are in ``jaxbco.tune.step``, the measured
cost (``measure_cost``) in ``jaxbco.tune.cost``; their names are importable from here too, and
wall times are reported.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import optax

from jaxbco._src import checks
from jaxbco.algorithms import AbstractAlgorithm
from jaxbco.tune import selection
from jaxbco.tune.cost import measure_cost as measure_cost
from jaxbco.tune.descent import descend
from jaxbco.tune.estimators import AUTO, ESTIMATORS, SMOOTHED
from jaxbco.tune.objective import HELDOUT_OFFSET, _Context, heldout_ids
from jaxbco.tune.result import TuneResult as TuneResult
from jaxbco.tune.result import TuningWarning as TuningWarning
from jaxbco.tune.step import FORWARD as FORWARD
from jaxbco.tune.step import REMAT_EXTRA as REMAT_EXTRA
from jaxbco.tune.step import REVERSE as REVERSE
from jaxbco.tune.step import REVERSE_COST as REVERSE_COST
from jaxbco.tune.step import default_optimizer as default_optimizer


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
    validation: int | None = None,
    key=0,
    mode: str = FORWARD,
    estimator: str = AUTO,
    perturbation: float = 0.1,
    pairs: int | None = None,
    check_every: int = 10,
    smoothing: float | None = None,
    remat: bool = True,
    dtype="float32",
    comparator: bool | None = None,
) -> TuneResult:
    """Tune hyperparameters by gradients of whole runs; never return a point worse than the
    start.

    Minimises J(h) = mean over seeds of R_T(h)/T + κ·V_T(h)/T (or, with ``budget``, R_T/T
    subject to mean V_T ≤ budget, by the Lagrangian R_T/T + μ(V_T − budget)/T with the
    multiplicative ascent μ ← μ·exp(multiplier_lr·clip((V_T − budget)/budget, −1, 1)),
    μ₀ = κ) by ``steps`` optimiser steps on the free hyperparameters in an unconstrained
    coordinate z (``transforms``), each on ``seeds`` training seeds.  The gradient is
    pathwise (through the run), or smoothed: g = (1/P) Σₚ [L(z + s eₚ) − L(z − s eₚ)]/(2s) eₚ
    with orthogonal Gaussian directions eₚ and the same seeds on both sides; "auto" compares
    the pathwise one with central differences on the same seeds at steps 0, c, 2c, ... and
    switches to the smoothed one where they disagree beyond their standard errors
    (``jaxbco.tune.estimators``).  Then the defaults and every step's point are evaluated on
    ``validation`` seeds, the best is taken, and the defaults and it are evaluated on
    ``heldout`` seeds: if it is worse there, a ``TuningWarning`` says so and the defaults
    are returned.  Seed sets never overlap: training ids < 2³¹ ≤ held-out < 3·2³⁰ ≤
    validation.

    Args:
        problem: the problem.
        horizon: the number of rounds T.
        algorithm: the algorithm (default ``RectifiedBCO()``).
        init: the starting hyperparameters (default: the algorithm's ``default_hyper``, the
            theorem defaults for ``RectifiedBCO``).
        free: the names of the hyperparameters to tune; the others stay at ``init``.
        transforms: name -> ``Transform`` replacing the map between z and the value (default:
            by name for the built-ins, else from the range the hyperparameter class declares).
        kappa: κ ≥ 0, the weight of V_T in J (with a budget: the starting multiplier μ₀ > 0).
        budget: a bound on the mean V_T (None: the penalised form).
        multiplier_lr: the step of the multiplier's ascent.
        optimizer: any optax ``GradientTransformation`` on z (default
            ``default_optimizer(steps)``: Adam, learning rate 0.3 → 0.03).
        steps: the optimiser steps.
        seeds: the training seeds per step.
        fresh_seeds: new training seeds every step (default: the same seeds, common random
            numbers).
        heldout: the held-out seeds the start and the result are judged on (None skips them,
            and with them the fallback to the defaults).
        validation: the validation seeds every step's point is judged on (default
            max(4, seeds // 2); 0 skips validation and takes the last point).
        key: the master key.
        mode: "forward" (``jax.jacfwd``; memory independent of T) or "reverse" (``jax.grad``)
            for the pathwise gradient.
        estimator: "auto" (default), "pathwise" or "smoothed".
        perturbation: s > 0, the smoothing scale in z of the smoothed estimator and of the
            check (0.1: ±10% on a log-scaled hyperparameter).
        pairs: P, the antithetic pairs of a smoothed step (default k, the free count).
        check_every: the steps between two checks of "auto".
        smoothing: the algorithm's smoothing while pathwise gradients are taken (None: the
            exact algorithm; every J reported is the exact algorithm's).
        remat: in reverse mode, recompute each round's step (``jax.checkpoint``).
        dtype: "float32" or "float64".
        comparator: regret against x* where it is available (None, the default, or True), or
            against x₁ (False).  x* does not depend on h, so the gradients, the checks and
            every ranking are the same either way, with less to compile and run; J then
            differs from J against x* by a constant per seed.

    Returns:
        The ``TuneResult``.

    Raises:
        ValueError: an input out of range, an unknown free name, mode or estimator.

    Example:
        >>> from jaxbco import problems, tune
        >>> res = tune.tune(problems.make("quadratic-ball", 3), 50, free=("alpha_scale",),
        ...                 steps=2, seeds=4, heldout=8)
        >>> res.estimator_used, res.runs == res.step_runs + res.check_runs + res.validation_runs
        ('pathwise', True)
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
        validation=validation,
        key=key,
        mode=mode,
        estimator=estimator,
        perturbation=perturbation,
        pairs=pairs,
        check_every=check_every,
        smoothing=smoothing,
        remat=remat,
        dtype=dtype,
        comparator=comparator,
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
    validation: int | None = None,
    key=0,
    mode: str = FORWARD,
    estimator: str = AUTO,
    perturbation: float = 0.1,
    pairs: int | None = None,
    check_every: int = 10,
    smoothing=None,
    remat: bool = True,
    dtype="float32",
    comparator: bool | None = None,
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
        comparator=comparator,
    )
    steps = checks.check_positive_int("steps", steps)
    seeds = checks.check_positive_int("seeds", seeds)
    if budget is not None:
        checks.check_range("budget", budget, low=0.0)
        if ctx.kappa <= 0:
            raise ValueError("with a budget, kappa is the starting multiplier mu_0 and must be > 0")
    checks.check_range("multiplier_lr", multiplier_lr, low=0.0)
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {', '.join(ESTIMATORS)}; got {estimator!r}")
    if mode not in (FORWARD, REVERSE):
        raise ValueError(f"mode must be 'forward' or 'reverse'; got {mode!r}")
    checks.check_range("perturbation", perturbation, low=0.0, low_open=True)
    pairs = ctx.space.k if pairs is None else checks.check_positive_int("pairs", pairs)
    check_every = checks.check_positive_int("check_every", check_every)
    if steps * seeds >= HELDOUT_OFFSET:
        raise ValueError(
            "steps x seeds must stay below 2^31 so training ids never reach the held-out ids"
        )
    heldout = selection.check_eval_seeds(
        "heldout (the held-out seeds the start and the result are judged on; None skips them)",
        heldout,
    )
    validation = max(4, seeds // 2) if validation is None else validation
    validation = selection.check_eval_seeds(
        "validation (the seeds every step's point is judged on; 0 skips them)", validation, low=0
    )
    optimizer = default_optimizer(steps) if optimizer is None else optimizer
    start = time.perf_counter()
    run = descend(
        ctx,
        mode=mode,
        estimator=estimator,
        optimizer=optimizer,
        smoothing=smoothing,
        remat=remat,
        steps=steps,
        seeds=seeds,
        fresh_seeds=fresh_seeds,
        budget=budget,
        multiplier_lr=multiplier_lr,
        scale=float(perturbation),
        pairs=pairs,
        check_every=check_every,
    )
    choice = selection.choose(ctx, run.zs, validation)
    wall = time.perf_counter() - start
    traj = {
        name: np.asarray([row[name] for row in run.rows], np.float64)
        for name in ("J", "L", "regret", "violation", "multiplier")
    }
    traj["failed"] = np.asarray([row["failed"] for row in run.rows])
    traj["grad"] = np.stack([row["grad"] for row in run.rows])
    traj["estimator"] = [row["estimator"] for row in run.rows]
    traj["z"] = run.zs
    decoded = [selection.decoded(ctx, z) for z in run.zs]
    traj["values"] = {
        n: np.asarray([ctx.space.values(d)[n] for d in decoded]) for n in ctx.space.names
    }
    traj["validation"] = choice.J
    start_h = ctx.finalize(ctx.init)
    returned, hs, he, tuned_eval = choice.hyper, None, None, None
    kept = choice.seeds > 0 and choice.best == 0
    if kept:
        warnings.warn(
            f"no point of the {steps} steps beat the defaults on {choice.seeds} validation "
            f"seeds (best J {np.min(choice.J[1:]):.4g} against the defaults' "
            f"{choice.J[0]:.4g}): the defaults are returned",
            TuningWarning,
            stacklevel=2,
        )
    eval_wall = 0.0
    if heldout is not None:
        t0 = time.perf_counter()
        verdict = selection.judge(ctx, start_h, choice.hyper, heldout_ids(heldout))
        eval_wall = time.perf_counter() - t0
        hs, tuned_eval = verdict.start, verdict.candidate
        he = tuned_eval
        for when, ev in (("start", hs), ("tuned", he)):
            if ev.failed == len(ev.per_seed):
                warnings.warn(
                    f"every held-out run failed (went non-finite) at the {when} "
                    f"hyperparameters: held-out J is inf, nothing was measured",
                    RuntimeWarning,
                    stacklevel=2,
                )
        if verdict.worse and not kept:
            kept, returned, he = True, start_h, hs
            mean, se = verdict.difference
            warnings.warn(
                f"tuning made held-out J worse: {tuned_eval.J:.4g} against the defaults' "
                f"{hs.J:.4g} ({mean:+.3g} +- {se:.2g}, paired over {heldout} seeds); the "
                f"defaults are returned",
                TuningWarning,
                stacklevel=2,
            )
    validation_runs = choice.seeds * len(choice.J) if choice.seeds else 0
    k = ctx.space.k
    pathwise_cost = k + 1 if mode == FORWARD else REVERSE_COST + (REMAT_EXTRA if remat else 0)
    runs_per_seed = 2 * pairs if estimator == SMOOTHED else pathwise_cost
    return TuneResult(
        names=ctx.space.names,
        trajectory=traj,
        hyper=returned,
        hyper_start=start_h,
        heldout_start=hs,
        heldout_end=he,
        runs=run.step_runs + run.check_runs + validation_runs,
        runs_per_step=seeds * runs_per_seed,
        eval_runs=2 * heldout if heldout is not None else 0,
        wall_s=wall,
        compile_s=run.compile_s,
        eval_wall_s=eval_wall,
        mode=mode,
        seeds=seeds,
        fresh_seeds=fresh_seeds,
        steps=steps,
        estimator=estimator,
        switched_at=run.switched_at,
        checks=tuple(run.checks),
        step_runs=run.step_runs,
        check_runs=run.check_runs,
        validation_runs=validation_runs,
        best_step=choice.best,
        kept_defaults=kept,
        tuned_heldout=tuned_eval,
        candidate=choice.hyper,
    )
