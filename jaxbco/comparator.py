"""The offline comparator x* = argmin over x ∈ X of ∑ₜ fₜ(x) s.t. gₜ(x) ≤ 0 for all t (Eq. (1)).

Computed per seed inside the same compiled call as the run (``offline_optimum``), regenerating
round t's data from the round's key, so nothing of size T is stored; for a quadratic or linear
loss with a fixed constraint the run itself keeps the sums x* needs (``streams``), so the data
are generated once.  Portfolio problems (log-wealth on replayed relatives with ellipsoid risk
constraints) get their seed-independent x* outside the call instead (``fixed_optimum``).

The constraints become one constraint C with X ∩ C = X ∩ (all rounds' feasible sets):

* fixed data: C = g itself;
* ``Shifted`` with ``Slackened`` data, gₜ = g − sₜ: C = {g ≤ minₜ sₜ};
* replayed / alternating linear data: C = {max over the recorded rows ≤ 0} (polyhedral);
* replayed / alternating data of a smooth g (a rotating ellipsoid): every projection onto
  X ∩ every round's {gₜ ≤ 0}, and a quadratic or linear loss's x* itself, by the log-barrier
  method with one slack −gₜ per recorded round (``offline_solvers.every_round_slacks``).

The losses are minimised using their structure:

* quadratic scale ‖x − θₜ‖²: x* = Π_{X∩C}(meanₜ θₜ) (a sufficient statistic);
* linear ⟨θₜ, x⟩: min ⟨s, x⟩ over X ∩ C, s = mean θₜ, by the proximal point
  method x_{k+1} = Π_{X∩C}(x_k − τs), τ‖s‖ = D, until x stops moving (at most
  100 steps; exact after finitely many on a polytope, the error at least halving a step on
  a curved boundary), so every projection starts within D of X, never from a far point
  (the smooth interior point loses a custom g's set from a point 4D away);
* logistic: projected Newton with backtracking, at most ``_NEWTON_PASSES`` passes over the
  rounds (each lane stops once converged), each summing the value, gradient and Hessian at
  one candidate (see ``_projected_newton``);
* other smooth losses (Huber, custom): accelerated projected gradient (FISTA with adaptive
  restart) on the mean loss, gradients summed by a scan over rounds; the step 1/L from the
  loss's curvature bound for Huber, and for any other loss (a custom one, with or without a
  bound) that bound only as a first guess, doubled by backtracking (Beck & Teboulle 2009)
  whenever a step shows it too small, so a missing or wrong bound still gives x*;
* absolute value: the same on its Huber smoothing, κ falling from D/10 to 1e-6 D over six
  restarted stages, then exact local linear programmes around the breakpoints θₜ,ᵢ
  (``jaxbco._src.absolute``) where C is rows or a ball or ellipsoid on a set with a barrier
  (``barrier.form``: its own slacks, or a lifted form such as a large L1 ball's);
* more linear rows than the dual Newton takes, and a float64 linear loss on a ball or
  ellipsoid C: the log-barrier method (``jaxbco._src.barrier``).

Π_{X∩C} is the accurate prox solver with β large enough that the penalty is exact, on C's
data normalised to a unit-sized g (``normalised``: the same set, whatever g's scale).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from jaxbco import certificate as _certificate
from jaxbco._src import offline_solvers
from jaxbco._src.offline_solvers import unsupported
from jaxbco._src.prng import KeyBlock
from jaxbco.data import portfolio

_NEWTON_PASSES = offline_solvers._NEWTON_PASSES


def check_supported(problem, horizon: int) -> None:
    """ValueError, before anything compiles, when the problem has no comparator
    (``fixed_optimum`` and ``unsupported``)."""
    if fixed_optimum(problem, horizon) is None and (why := unsupported(problem)) is not None:
        raise ValueError(f"comparator=True: {why}")


# Streaming comparator: for a quadratic or linear loss with a fixed constraint, the run sums
# theta_t (and ||theta_t||^2) as it goes and records the sums at the checkpoints; x* and
# sum_{s<=t} f_s(x*) follow after the last round, so the data are generated once, not twice.


def streams(problem) -> bool:
    """Whether x* and the comparator's losses follow from running sums (``stream_stats``)."""
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


def offline_optimum(problem, seed_key, horizon: int) -> jax.Array:
    """The comparator x* of Eq. (1) for one seed, inside the compiled call (see the module docstring).

    For a user's g (``CustomConstraint``, fixed) both prox paths are tried, the interior
    point (g's Hessian) and cutting planes, and the x* with the better certificate is kept:
    an undeclared kink, or a declared one that x* does not sit on, still gets an exact x*.

    Args:
        problem: the ``Problem``.
        seed_key: the seed's key (vmap over seed keys for a batch), or a ``KeyBlock`` of
            seeds with the problem laid out for blocks (``jaxbco._src.blocks``).
        horizon: T; round t's data are regenerated from the seed's round keys.

    Returns:
        x*, (d,) (or (d, seeds) for a ``KeyBlock``).
    """
    alternative = _other_path(problem)
    x = offline_solvers.solve(problem, seed_key, horizon)
    if alternative is None or isinstance(seed_key, KeyBlock):
        return x
    y = offline_solvers.solve(alternative, seed_key, horizon)
    return _better(problem, seed_key, horizon, x, y)


def optima(problem, seed_keys, horizon: int) -> jax.Array:
    """``offline_optimum`` of every seed of a batch, (S, d) from keys (S,): for a user's g the
    second prox path and the cuts' certificates are computed only where some seed's x* fails
    its one-cut bound (``certificate.certify_batch``); each seed's x* is ``offline_optimum``'s."""
    solve = lambda p: jax.vmap(offline_solvers.solve, (None, 0, None))(p, seed_keys, horizon)
    x = solve(problem)
    alternative = _other_path(problem)
    if alternative is None:
        return x
    return _better_batch(problem, seed_keys, horizon, x, lambda: solve(alternative), None)


def stream_optima(problem, sums, horizon: int) -> jax.Array:
    """x* of every seed of a batch from its sums over all T rounds (``stream_stats``;
    ``streams(problem)`` must hold), (S, d) from sums ((S, d), (S,)); for a user's g the better
    certified of the two prox paths, the second only where needed (``optima``)."""
    phi = problem.constraint_data.every_round()
    mean = lambda p: jax.vmap(
        lambda s: offline_solvers._from_mean_theta(p, p.constraint, phi, s / horizon)
    )(sums[0])
    x = mean(problem)
    alternative = _other_path(problem)
    if alternative is None:
        return x
    cuts = lambda i: stream_cuts(problem, (sums[0][i], sums[1][i]), horizon)
    return _better_batch(problem, None, horizon, x, lambda: mean(alternative), cuts)


def _better_batch(problem, seed_keys, horizon, x, other, cuts):
    """``_better`` for a batch: ``other()`` (the second path's x*, (S, d)) only where some
    seed's x fails its certificate."""
    tol = _certificate.tolerance(x.dtype)
    sx = _score(_certificate.certify_batch(problem, seed_keys, horizon, x, cuts))

    def second():
        y = other()
        sy = _score(_certificate.certify_batch(problem, seed_keys, horizon, y, cuts))
        return jnp.where(((sx > tol) & (sy < sx))[:, None], y, x)

    return jax.lax.cond(jnp.all(sx <= tol), lambda: x, second)


def _other_path(problem):
    """The problem with its fixed user g declared the other way (``smooth`` flipped), or None."""
    other = problem.constraint.flipped()
    if other is None or not problem.constraint_data.constant:
        return None
    return dataclasses.replace(problem, constraint=other)


def _score(cert):
    worst = jnp.maximum(jnp.maximum(cert.set_violation, cert.constraint_violation), cert.gap)
    return jnp.where(jnp.isfinite(worst), worst, jnp.inf)


def _better(problem, seed_key, horizon, x, y, loss_cuts_fn=None):
    """x, the declared path's candidate, unless its certificate fails and y's is better."""
    sx = _score(_certificate.certify_seed(problem, seed_key, horizon, x, loss_cuts_fn))
    sy = _score(_certificate.certify_seed(problem, seed_key, horizon, y, loss_cuts_fn))
    return jnp.where((sx > _certificate.tolerance(x.dtype)) & (sy < sx), y, x)


def fixed_optimum(problem, horizon: int):
    """x* computed outside the compiled call, where it is the same for every seed.

    Portfolio selection (log-wealth loss on replayed relatives, replayed ellipsoid risk
    constraints) needs an offline solver: its x* is the float64 interior-point best
    constrained CRP of ``jaxbco.data.portfolio.comparator`` (cached per data and horizon).

    Args:
        problem: the ``Problem``.
        horizon: T.

    Returns:
        x*, (d,), for a portfolio problem; None for every other problem (``offline_optimum``
        runs inside the call).
    """
    if not problem.loss.wealth:
        return None
    try:
        R, Q = portfolio.problem_arrays(problem, horizon)
    except NotImplementedError:
        return None
    return portfolio.cached_best_crp(R, Q)


def has_comparator(problem, horizon: int) -> bool:
    """Whether x* is available: ``fixed_optimum`` or ``offline_optimum`` (``unsupported``:
    from the components' types, nothing is traced)."""
    return fixed_optimum(problem, horizon) is not None or unsupported(problem) is None


def comparator_method(problem, horizon: int) -> str:
    """How x* is found on ``problem`` (``fixed_optimum`` or ``offline_optimum``), in words.

    Args:
        problem: the ``Problem``.
        horizon: T.

    Returns:
        A short description; "none" where x* cannot be computed.

    Example:
        >>> from jaxbco import comparator, problems
        >>> comparator.comparator_method(problems.make("quadratic-ball", dim=3), 100)
        'projection of the mean theta (quadratic)'
    """
    if fixed_optimum(problem, horizon) is not None:
        return "offline float64 interior point (best constrained CRP, same for every seed)"
    if not has_comparator(problem, horizon):
        return "none"
    offline = problem.loss.offline
    if offline in ("quadratic", "linear") and offline_solvers.every_round_slacks(problem, horizon):
        return f"log-barrier method over every round's g ({offline})"
    if offline == "quadratic":
        return "projection of the mean theta (quadratic)"
    if offline == "linear":
        return "proximal point on the mean theta (linear)"
    if offline == "newton":
        return f"projected Newton (at most {_NEWTON_PASSES} passes)"
    return "FISTA on the mean loss"
