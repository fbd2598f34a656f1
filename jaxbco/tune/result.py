"""What gradient tuning returns (``TuneResult``) and the warning when it returns the
defaults (``TuningWarning``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from jaxbco.tune.estimators import AUTO, SMOOTHED
from jaxbco.tune.objective import Evaluation


class TuningWarning(UserWarning):
    """Tuning did not improve on the start: the defaults are returned.

    Example:
        >>> import warnings
        >>> from jaxbco import tune
        >>> issubclass(tune.TuningWarning, UserWarning)
        True
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", tune.TuningWarning)   # silence it in this block
        ...     warnings.warn("the defaults are returned", tune.TuningWarning)
    """


@dataclasses.dataclass(frozen=True)
class TuneResult:
    """What ``tune`` returns: the trajectory, the returned hyperparameters and their held-out
    evaluation, how the gradient was estimated, and the cost.

    Attributes:
        names: the free hyperparameters.
        trajectory: per step (at z before the update) the training "J", "L", "regret" (mean
            R_T/T), "violation" (mean V_T), "failed", "multiplier" μ, "grad" dL/dz (steps, k)
            and "estimator" (the one the step used); "z" and "values" (name -> (steps + 1,))
            include the final point; "validation": the validation J of the defaults and of
            every point (``selection.Choice.J``).
        hyper: the returned hyperparameters (validated): the validation's best point, or the
            start where that is worse on the held-out seeds.
        hyper_start: the starting hyperparameters (the defaults).
        heldout_start: the ``Evaluation`` of the start on the held-out seeds (None when
            heldout=None).
        heldout_end: the ``Evaluation`` of the returned hyperparameters on them.
        runs: every full run tuning spent: ``step_runs + check_runs + validation_runs``.
        runs_per_step: the full-run equivalents of one step of the estimator asked for
            (pathwise or auto: seeds x (k + 1) forward, x 3 or 4 reverse; smoothed: seeds x
            2P).
        eval_runs: the runs of the held-out evaluation (not in ``runs``).
        wall_s: the training loop's seconds, compile included (validation included).
        compile_s: the compile seconds of the gradient and update programs.
        eval_wall_s: the held-out evaluation's seconds.
        mode: "forward" or "reverse".
        seeds: the training seeds per step.
        fresh_seeds: whether every step drew new seeds.
        steps: the optimiser steps.
        estimator: the estimator asked for ("auto", "pathwise" or "smoothed").
        switched_at: the step at which "auto" switched to the smoothed estimator (None: never).
        checks: the ``estimators.Check`` of every comparison made.
        step_runs: the runs of the steps (the part of ``runs`` the estimators spent).
        check_runs: the runs of the checks of "auto" (2 x seeds each).
        validation_runs: the runs of the validation ((steps + 2) x validation seeds).
        best_step: the validation's choice (0: the defaults; i + 1: the point before step i).
        kept_defaults: whether the defaults were returned: no step's point beat them on the
            validation seeds, or the best was worse on the held-out seeds (a
            ``TuningWarning`` says which).
        tuned_heldout: the best point's held-out ``Evaluation`` (also when it was rejected).
        candidate: the validation's best point (also when it was rejected).

    Example:
        >>> from jaxbco import problems, tune
        >>> res = tune.tune(problems.make("quadratic-ball", 3), 50, free=("alpha_scale",),
        ...                 steps=2, seeds=4, heldout=8)
        >>> res.names, res.trajectory["J"].shape, res.trajectory["values"]["alpha_scale"].shape
        (('alpha_scale',), (2,), (3,))
        >>> type(res.hyper).__name__, res.heldout_end.failed
        ('Hyper', 0)
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
    estimator: str = AUTO
    switched_at: int | None = None
    checks: tuple = ()
    step_runs: int = 0
    check_runs: int = 0
    validation_runs: int = 0
    best_step: int = 0
    kept_defaults: bool = False
    tuned_heldout: Evaluation | None = None
    candidate: Any = None

    def notes(self) -> list[str]:
        """What a reader needs beside the table: the estimator and its checks, the
        validation's choice, and the held-out verdict, one line each."""
        out = [f"gradient: {self.estimator_used} (asked: {self.estimator}; mode {self.mode})"]
        out += [f"  check {c}" for c in self.checks]
        J = self.trajectory.get("validation")
        if J is not None and np.isfinite(J).any():
            where = (
                "the defaults"
                if self.best_step == 0
                else f"the point before step {self.best_step - 1}"
            )
            if self.best_step == len(J) - 1:
                where = "the last point"
            out.append(
                f"validation ({self.validation_runs // len(J)} seeds, {len(J)} points): best "
                f"is {where}, J {J[self.best_step]:.4g} (defaults {J[0]:.4g})"
            )
        if self.kept_defaults and self.best_step == 0:
            out.append("no step's point beat the defaults on validation: they are returned")
        elif self.kept_defaults and self.tuned_heldout is not None:
            out.append(
                f"held-out: the tuned point's J {self.tuned_heldout.J:.4g} is worse than the "
                f"defaults' {self.heldout_start.J:.4g}: the defaults are returned"
            )
        return out

    @property
    def estimator_used(self) -> str:
        """ "pathwise", "smoothed", or "pathwise, smoothed from step s" ("auto" switched)."""
        if self.estimator == SMOOTHED:
            return SMOOTHED
        if self.switched_at is None:
            return "pathwise"
        return f"pathwise, smoothed from step {self.switched_at}"

    def __repr__(self) -> str:
        """One line: the returned values, the held-out J before and after, and the cost."""
        values = ", ".join(
            f"{n}={float(np.mean(np.asarray(getattr(self.hyper, n)))):.4g}" for n in self.names
        )
        held = (
            ""
            if self.heldout_end is None
            else f"; held-out J {_said(self.heldout_start)} -> {_said(self.heldout_end)}"
        )
        kept = "; tuning was worse, the defaults are returned" if self.kept_defaults else ""
        return (
            f"TuneResult({values}{held}{kept}; {self.steps} steps x {self.seeds} seeds, "
            f"gradient {self.estimator_used}, {self.runs} full runs, {self.wall_s:.1f} s, "
            f"mode {self.mode!r})"
        )


def _said(ev) -> str:
    """A held-out J with its failed seeds, if any ("inf (64 of 64 seeds failed)")."""
    j = f"{float(np.mean(ev.J)):.4g}"
    return j + (f" ({ev.failed} of {len(ev.per_seed)} seeds failed)" if ev.failed else "")
