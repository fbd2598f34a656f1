"""The streaming comparator: for a quadratic or linear loss with a fixed constraint, the run sums
θₜ (and ‖θₜ‖²) as it goes and records the sums at the checkpoints; x* (the selected
``AbstractMeanThetaMethod``'s ``from_sums``) and ∑ₛ≤ₜ fₛ(x*) follow after the last round, so
the data are generated once, not twice.

Example:
    >>> from jaxbco import problems
    >>> from jaxbco.comparator import streams
    >>> streams(problems.make("quadratic-ball", dim=3)), streams(problems.make("logistic-ball"))
    (True, False)
"""

from __future__ import annotations


def streams(problem) -> bool:
    """Whether x* and the comparator's losses follow from running sums (``stream_stats``): a
    loss whose x* depends on θ̄ alone, with fixed constraint data."""
    return problem.loss.offline in ("quadratic", "linear") and problem.constraint_data.constant


def stream_stats(problem, theta):
    """Per-round statistics whose sums give x* and ∑ₛ fₛ(x*) (the loss's ``statistics``:
    quadratic (θ, ‖θ‖²), linear (θ, 0)).  Vector axis leading (``ops.inner``)."""
    return problem.loss.statistics(theta)


def stream_star(problem, x, sums, t):
    """∑ₛ fₛ(x) over s = 1..t from the sums of ``stream_stats`` over those rounds (the loss's
    ``total``)."""
    return problem.loss.total(x, sums, t)


def stream_cuts(problem, sums, horizon: int):
    """x ↦ (F(x), a, S): the mean loss's value and gradient at x from one seed's sums over all
    T rounds (``stream_stats``; the loss's ``mean_cut``), for the certificate
    (``jaxbco.certificate``)."""
    s_theta, s_sq = sums
    m, m2 = s_theta / horizon, s_sq / horizon

    def cuts(x):
        F, grad = problem.loss.mean_cut(x, m, m2)
        return F, F[None], grad[None]

    return cuts
