"""``Result``: what ``sweep`` and ``run`` return (curves at the checkpoints, comparators, failed
seeds, and the path and speed of the run)."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from jaxbco.hyper import Hyper


@dataclasses.dataclass(frozen=True)
class Result:
    """What ``sweep`` and ``run`` return: the curves at the checkpoint rounds, the comparators, the
    failed seeds, and the path and speed of the run.

    Curves have shape (G, S, K): G hyperparameter settings, S seeds, K checkpoints (``run``:
    (K,)).  A seed whose run went non-finite is flagged in ``failed`` and its curves are NaN
    from ``failed_round`` on; the other seeds are kept.  Built by ``sweep``; its fields are read,
    never passed by a user.

    Attributes:
        rounds: (K,) the checkpoint rounds t.
        regret: Rₜ = ∑ₛ≤ₜ fₛ(xₛ) − fₛ(x*) (against x₁ when ``comparator=False``).
        hard_violation: Vₜ = ∑ₛ≤ₜ [gₛ(xₛ)]₊.
        soft_violation: ∑ₛ≤ₜ gₛ(xₛ).
        lam: the penalty λₜ at round t.
        loss: the loss fₜ(xₜ) at round t.
        failed: (G, S) whether the run went non-finite.
        failed_round: (G, S) its first non-finite round (0: never failed).
        x_star: (S, d) the comparator x* of each seed.
        x_final: (G, S, d) the decision after the last round (x at round T + 1).
        decisions: (G, S, K, d) the played xₜ at the checkpoints with
            ``record_decisions=True``, else None.
        seed_ids: (S,) the seed ids.
        hyper: the hyperparameters, with their grid axis.
        horizon: the number of rounds T.
        dtype: the floating-point type of the run ("float32" or "float64").
        wall_s: seconds the run took, compile included (every session of a resumed run).
        feasibility_undecided: True when whether every gₜ ≤ 0 meets (1 − ξ)X could not be
            decided before the run (``problem.check_feasible``).
        engine: what ran the rounds: "seeds-minor", "vmap" or "fused kernel"
            (``jaxbco.backends``).
        engine_reason: why a faster back-end was not taken ("" when none was passed over).
        prox_method: the prox method(s) the algorithm's solver took (``jaxbco.plan``).
        comparator_method: how x* was found ("off (...)" with ``comparator=False``).
        x_star_certificate: (S, 3) the certificate of x* per seed: relative set violation,
            constraint violation and duality gap (``jaxbco.certificate``; NaN without a
            comparator).
        x_star_ok: (S,) whether x* passed its certificate (``certificate.tolerance``).
        prox_certificate: (G, S) each run's worst prox-step certificate (relative duality gap
            or distance from the shrunk set, ``solvers.gap``; NaN for a method without a prox
            solve).
        prox_ok: (G, S) whether every prox step of the run passed it.
        compile_s: of ``wall_s``, the seconds spent tracing and compiling (this session).
        comparator_s: of ``wall_s``, the seconds x*'s pre-pass and its certificate took
            (compile excluded; this session): the comparator's cost, apart from the runs'.
        seed_rounds_per_s: G·S·T / (wall_s − compile_s − comparator_s), this session's speed
            of the rounds.
        optimum: x* with its certificate and what it belongs to (``comparator.Optimum``;
            None with ``comparator=False``), to hand to another run of the same problem, key,
            seeds, T and dtype (``sweep(..., optimum=...)``).

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems
        >>> problem = problems.make("quadratic-ball", 3)
        >>> res = jaxbco.sweep(problem, 100, seeds=2, checkpoints=[100])
        >>> res.regret.shape, res.x_star.shape, res.x_final.shape
        ((1, 2, 1), (2, 3), (1, 2, 3))
        >>> bool(res.x_star_ok.all())
        True
    """

    rounds: np.ndarray
    regret: np.ndarray
    hard_violation: np.ndarray
    soft_violation: np.ndarray
    lam: np.ndarray
    loss: np.ndarray
    failed: np.ndarray
    failed_round: np.ndarray
    x_star: np.ndarray
    x_final: np.ndarray
    decisions: np.ndarray | None
    seed_ids: np.ndarray
    hyper: Hyper
    horizon: int
    dtype: str
    wall_s: float
    feasibility_undecided: bool = False  # True: whether every g_t <= 0 meets (1-xi)X was not
    #                                      decided before the run (``problem.check_feasible``)
    engine: str = "seeds-minor"  # what ran the rounds: "seeds-minor", "vmap" or "fused kernel"
    #                               (``jaxbco.backends``)
    engine_reason: str = ""  # why a faster back-end was not taken ("" when none was passed over)
    prox_method: str = ""  # the prox method(s) the algorithm's solver took (``jaxbco.plan``)
    comparator_method: str = ""  # how x* was found ("off (...)" with comparator=False)
    #: (S, 3) the x* certificate per seed: set violation, constraint violation, duality gap,
    #: each relative (``jaxbco.certificate``; NaN without a comparator)
    x_star_certificate: np.ndarray | None = None
    #: (S,) whether x* passed its certificate (its tolerance: ``certificate.tolerance``)
    x_star_ok: np.ndarray | None = None
    #: (G, S) each run's worst prox-step certificate (``solvers.gap``: relative duality gap or
    #: distance from the shrunk set; NaN for a method without a prox solve)
    prox_certificate: np.ndarray | None = None
    #: (G, S) whether every prox step of the run passed it (``solvers.gap.tolerance``)
    prox_ok: np.ndarray | None = None
    compile_s: float = 0.0  # of wall_s, seconds spent tracing and compiling (this session)
    comparator_s: float = 0.0  # of wall_s, x*'s pre-pass and certificate (compile excluded)
    seed_rounds_per_s: float = float("nan")  # G S T / (wall_s - compile_s - comparator_s)
    #: x* with its certificate and what it belongs to (``jaxbco.comparator.Optimum``; None
    #: with comparator=False): ``sweep(..., optimum=res.optimum)`` runs another algorithm on
    #: the same problem, key, seeds, T and dtype without solving x* again
    optimum: object = None


def masked_decisions(xbuf, failed, failed_round, checkpoints):
    """The recorded decisions (G, S, K, d), NaN at a failed run's checkpoints from the round
    it failed on (its curves are NaN there; its state is stale)."""
    x = np.moveaxis(np.asarray(xbuf), 0, 2)
    stale = np.asarray(failed)[..., None] & (
        np.asarray(checkpoints)[None, None, :] >= np.asarray(failed_round)[..., None]
    )
    return np.where(stale[..., None], np.nan, x).astype(x.dtype)


class OutsideWarning(UserWarning):
    """An algorithm's last decision x_{T+1} lies outside X on some runs: it plays points the
    problem does not allow (a user's algorithm that forgets its projection)."""


def warn_outside(outside, failed, seed_ids, dtype, algorithm) -> None:
    """An ``OutsideWarning`` where a run that did not fail ended outside X by more than
    sqrt(eps) (1 + D) (``engine.final_decisions``), naming the algorithm and the seeds."""
    if outside is None:
        return
    tol = float(np.sqrt(np.finfo(np.dtype(dtype)).eps))
    bad = (np.asarray(outside) > tol) & ~np.asarray(failed)
    if bad.any():
        seeds = np.asarray(seed_ids)[np.unique(np.nonzero(bad)[-1])]
        ids = ", ".join(str(int(i)) for i in seeds[:8]) + (", ..." if seeds.size > 8 else "")
        warnings.warn(
            f"{type(algorithm).__name__}'s last decision x_(T+1) lies outside X on "
            f"{int(bad.sum())} of {bad.size} runs (seed ids {ids}; up to "
            f"{float(np.nanmax(np.where(bad, outside, np.nan))):.3g} (1 + D) away): it plays "
            f"points X does not allow; project its decisions onto X",
            OutsideWarning,
            stacklevel=4,
        )
