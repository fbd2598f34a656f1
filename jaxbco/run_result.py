"""``Result``: what ``sweep`` and ``run`` return (curves at the checkpoints, comparators, failed
seeds, and the path and speed of the run)."""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxbco.hyper import Hyper


@dataclasses.dataclass(frozen=True)
class Result:
    """Curves at the checkpoint rounds, arrays of shape (G, S, K) (``run``: (K,)).

    regret R_t = sum_{s<=t} f_s(x_s) - f_s(x*); hard_violation sum [g_s(x_s)]_+; soft_violation
    sum g_s(x_s); lam lambda_t; loss f_t(x_t).  ``failed``: (G, S) non-finite seeds (NaN curves
    from ``failed_round`` on).  ``x_star``: (S, d) comparators; ``x_final``: (G, S, d) x_{T+1};
    ``decisions``: (G, S, K, d) the played x_t at the checkpoints when ``record_decisions=True``, else None.
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
    #                               (``jaxbco.backend``)
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
    seed_rounds_per_s: float = float("nan")  # G S rounds / (wall_s - compile_s), this session
