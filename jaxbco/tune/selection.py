"""Which point gradient tuning returns: the best on validation seeds, and never one worse than
the defaults on the held-out seeds.

    validation:  J of the defaults and of every step's point on V validation seeds (one call);
                 the point with the least J is the candidate (ties: the earliest)
    held-out:    the defaults and the candidate on H held-out seeds (one call, paired);
                 a candidate whose mean J exceeds the defaults' is reported as worse and the
                 defaults are returned

Seed ids: training < 2^31 = ``HELDOUT_OFFSET`` <= held-out < ``VALIDATION_OFFSET`` = 3 2^30
<= validation, so the three sets never share a seed.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks
from jaxbco.tune.objective import HELDOUT_OFFSET, Evaluation, _Context

MAX_EVAL_SEEDS = 2**30  # held-out and validation sets stay in their own ranges
VALIDATION_OFFSET = HELDOUT_OFFSET + MAX_EVAL_SEEDS  # validation ids: 3 2^30 + 0..V-1


def validation_ids(n: int) -> np.ndarray:
    """Validation seed ids VALIDATION_OFFSET + 0..n-1 (disjoint from training and held-out)."""
    n = checks.check_positive_int("validation seeds", n, high=MAX_EVAL_SEEDS)
    return VALIDATION_OFFSET + np.arange(n, dtype=np.int64)


class Choice(NamedTuple):
    """The validation's verdict.

    Args:
        J: (steps + 2,) validation J of the defaults (index 0) and of the point before step
            0, 1, ... and after the last step (index i + 1: before step i).
        best: the index of the least J (0: the defaults).
        hyper: the chosen hyperparameters (validated).
        seeds: the validation seeds (0: no validation, the last point is chosen).
    """

    J: np.ndarray
    best: int
    hyper: object
    seeds: int


def choose(ctx: _Context, zs: np.ndarray, seeds: int) -> Choice:
    """The best of the defaults and every step's point on ``seeds`` validation seeds."""
    start = ctx.finalize(ctx.init)
    if seeds == 0:
        return Choice(np.full(len(zs) + 1, np.nan), len(zs), decoded(ctx, zs[-1]), 0)
    grid = ctx.stack([start] + [ctx.space.decode(jnp.asarray(z, ctx.dtype)) for z in zs])
    evals = ctx.evaluate(grid, validation_ids(seeds))
    J = np.asarray([e.J for e in evals], np.float64)
    best = int(np.argmin(np.where(np.isfinite(J), J, np.inf)))
    hyper = start if best == 0 else decoded(ctx, zs[best - 1])
    return Choice(J, best, hyper, seeds)


def decoded(ctx, z):
    """The validated hyperparameters at z (NumPy float64 leaves)."""
    return ctx.finalize(ctx.space.decode(jnp.asarray(z, ctx.dtype)))


class Verdict(NamedTuple):
    """The defaults against the candidate on the held-out seeds.

    Args:
        start: the defaults' ``Evaluation``.
        candidate: the candidate's.
        worse: whether the candidate's mean J exceeds the defaults'.
        difference: (mean, se) of J(candidate) - J(defaults), paired over the seeds.
    """

    start: Evaluation
    candidate: Evaluation
    worse: bool
    difference: tuple


def judge(ctx: _Context, start, candidate, ids) -> Verdict:
    """Evaluate the defaults and the candidate on the held-out ``ids`` (one call)."""
    hs, hc = ctx.evaluate(ctx.stack([start, candidate]), ids)
    d = hc.per_seed - hs.per_seed
    d = d[np.isfinite(d)]
    diff = (
        (float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size)))
        if d.size > 1
        else (float("nan"), float("nan"))
    )
    return Verdict(hs, hc, bool(hc.J > hs.J), diff)


def check_eval_seeds(name: str, n, low: int = 1):
    """A held-out or validation seed count in [low, 2^30] (validation: 0 turns it off; held
    out: None skips it)."""
    if n is None and low == 1:
        return None
    if low == 0 and n == 0 and not isinstance(n, bool):
        return 0
    return checks.check_positive_int(name, n, high=MAX_EVAL_SEEDS)
