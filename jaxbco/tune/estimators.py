"""Gradient estimators of the tuning objective and the test that chooses between them.

**Pathwise**: the derivative of each seed's run, taken through the whole run (forward or
reverse mode), averaged over the seeds.  Where the run is smooth in z this is the derivative of
J.  Through a long run with kinks (an L1 loss, [.]_+, projections) or chaotic dynamics, each
seed's derivative exists almost everywhere, but its mean need not be the derivative of the
mean, and its variance can grow exponentially with T (Metz et al. 2021, "Gradients are not
all you need"; Vicol et al. 2021).

**Smoothed** (Gaussian smoothing, antithetic evolution strategies, Nesterov & Spokoiny 2017;
Salimans et al. 2017), with common random numbers (every perturbation runs on the same seeds):

    g = (1/P) sum_p [L(z + s e_p) - L(z - s e_p)] / (2 s) e_p,

with the P directions e_p drawn as random orthogonal frames of R^k scaled to length sqrt(k)
(orthogonal evolution strategies, Choromanski et al. 2018): over a full frame the pairs'
quotients give the central-difference gradient in a random rotated basis, exact for a
quadratic L, so the directions add no variance there; in expectation it is the gradient of
L smoothed over the sphere of radius s sqrt(k).  Value calls only: one compiled call over the
2P perturbations x the seeds.

**The check** (``compare``): along a random direction e, each seed's pathwise directional
derivative e . grad L_s against its central difference [L_s(z + s e) - L_s(z - s e)] / (2 s)
on the same seed.  For a smooth run they agree to O(s^2); they disagree when their paired
difference's mean exceeds ``z_crit`` standard errors (Student t, Bonferroni over the checks),
or when the pathwise derivatives' spread over the seeds exceeds ``SPREAD`` times the
differences' (the derivative of the path does not describe the objective at scale s).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.stats

PATHWISE, SMOOTHED, AUTO = "pathwise", "smoothed", "auto"
ESTIMATORS = (AUTO, PATHWISE, SMOOTHED)
SPREAD = 4.0  # pathwise spread over seeds beyond 4x the central differences': uninformative
ALPHA = 1e-3  # the false-alarm rate of one check on a smooth run


def directions(rng: np.random.Generator, k: int, pairs: int) -> np.ndarray:
    """``pairs`` directions in R^k: random orthogonal frames (Haar), each direction of length
    sqrt(k) (so E e e^T = I_k, as for a standard normal e).

    Args:
        rng: a NumPy generator (the caller derives it from the master key and the step).
        k: the dimension of z.
        pairs: P, the number of antithetic pairs.

    Returns:
        (P, k) float64.

    Example:
        >>> import numpy as np
        >>> e = directions(np.random.default_rng(0), 3, 3)
        >>> bool(np.allclose(e @ e.T, 3 * np.eye(3)))
        True
    """
    out = []
    while len(out) < pairs:
        q, r = np.linalg.qr(rng.standard_normal((k, k)))
        q = q * np.sign(np.diag(r))  # Haar-distributed
        out.extend(q.T * np.sqrt(k))
    return np.asarray(out[:pairs], np.float64)


def kept_mean(x, ok, axis=-1):
    """The mean of ``x`` over the entries ``ok`` keeps along ``axis`` (0 where none is kept)."""
    n = np.maximum(ok.sum(axis=axis), 1)
    return np.where(ok, x, 0.0).sum(axis=axis) / n


def smoothed_gradient(plus, minus, ok, eps, scale) -> tuple[np.ndarray, np.ndarray]:
    """The antithetic smoothed gradient and its standard error.

    Args:
        plus: (P, S) L per seed at z + s e_p.
        minus: (P, S) L per seed at z - s e_p.
        ok: (P, S) whether both runs of the pair kept the seed (finite).
        eps: (P, k) the directions.
        scale: s, the smoothing scale in z.

    Returns:
        (g, se): (k,) each.  se from the spread of the per-seed estimates (directions shared,
        so it counts the seeds' noise); inf with fewer than two seeds.
    """
    diff = np.where(ok, (plus - minus) / (2.0 * scale), 0.0)  # (P, S)
    per_seed = np.einsum("ps,pk->sk", diff, eps) / eps.shape[0]  # (S, k)
    keep = ok.all(axis=0)
    g = kept_mean(diff, ok) @ eps / eps.shape[0]
    n = int(keep.sum())
    se = per_seed[keep].std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full(g.shape, np.inf)
    return g, se


class Check(NamedTuple):
    """One comparison of the pathwise gradient with central differences along a direction.

    Args:
        step: the optimiser step it was made at.
        pathwise: the seeds' mean pathwise directional derivative e . grad L.
        difference: the seeds' mean central difference along e.
        t: the paired t statistic of their difference.
        t_crit: the bound |t| was held to.
        spread_ratio: the pathwise derivatives' standard deviation over the seeds, over the
            central differences'.
        disagree: whether the pathwise gradient fails the check.
        seeds: the seeds both estimates kept.

    Example:
        >>> from jaxbco import tune
        >>> check = tune.Check(step=0, pathwise=1.02, difference=1.0, t=0.4, t_crit=3.0,
        ...                    spread_ratio=1.1, disagree=False, seeds=8)
        >>> check.disagree, abs(check.t) <= check.t_crit
        (False, True)
    """

    step: int
    pathwise: float
    difference: float
    t: float
    t_crit: float
    spread_ratio: float
    disagree: bool
    seeds: int

    def __str__(self) -> str:
        verdict = "disagree" if self.disagree else "agree"
        return (
            f"step {self.step}: pathwise {self.pathwise:.4g} vs central difference "
            f"{self.difference:.4g} along a random direction ({self.seeds} seeds; paired t = "
            f"{self.t:.3g}, bound {self.t_crit:.3g}; pathwise spread {self.spread_ratio:.3g}x "
            f"the differences'): {verdict}"
        )


def compare(step, grads, ok, plus, minus, pair_ok, e, scale, checks: int) -> Check:
    """The check of the pathwise gradient against central differences along one direction.

    Args:
        step: the optimiser step (reported).
        grads: (S, k) every seed's pathwise gradient of L.
        ok: (S,) the seeds the pathwise run kept.
        plus, minus: (S,) L per seed at z +- s e.
        pair_ok: (S,) the seeds both difference runs kept.
        e: (k,) the direction.
        scale: s.
        checks: how many checks the tuning plans (the Bonferroni divisor of ``ALPHA``).

    Returns:
        The ``Check``.
    """
    keep = ok & pair_ok & np.all(np.isfinite(grads), axis=1)
    n = int(keep.sum())
    path = grads[keep] @ e
    fd = (plus[keep] - minus[keep]) / (2.0 * scale)
    if n < 2:
        return Check(step, np.nan, np.nan, np.nan, np.inf, np.nan, False, n)
    d = path - fd
    sd = d.std(ddof=1)
    mean = d.mean()
    t = 0.0 if sd == 0 and mean == 0 else (np.inf if sd == 0 else mean / (sd / np.sqrt(n)))
    t_crit = float(scipy.stats.t.isf(ALPHA / (2 * max(checks, 1)), n - 1))
    s_path, s_fd = path.std(ddof=1), fd.std(ddof=1)
    ratio = 0.0 if s_path == 0 else (np.inf if s_fd == 0 else s_path / s_fd)
    disagree = bool(abs(t) > t_crit or ratio > SPREAD)
    return Check(
        step, float(path.mean()), float(fd.mean()), float(t), t_crit, float(ratio), disagree, n
    )
