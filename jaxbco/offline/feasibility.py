"""Whether a problem's constraints can be met, decided before a run where it can be: a fixed
constraint must meet X (``check_fixed``), and every round's {g_t <= 0} must meet (1 - xi) X
(``check_feasible``; ``FeasibilityWarning`` where it cannot be decided)."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks, xla
from jaxbco.offline import barrier, region
from jaxbco.solvers import Dual


class FeasibilityWarning(UserWarning):
    """The feasibility of the rounds' constraints could not be decided before the run (or a
    round is infeasible in a run without a comparator); ``Result.feasibility_undecided``."""


def _recorded(seq, horizon: int):
    """The data of every round a run uses, as NumPy arrays with a leading round axis (a Fixed
    value gets an axis of 1, a Replay its first T rounds); None for drawn data."""
    table = seq.recorded(horizon)
    return None if table is None else jax.tree_util.tree_map(np.asarray, table)


@xla.one_shot
def _rows_jit(family, recorded):
    return jax.vmap(family.rows)(recorded)


def recorded_rows(family, recorded) -> tuple[np.ndarray, np.ndarray]:
    """(A (rounds, m, d), b (rounds, m)) in NumPy float64: the rows of a linear or polyhedral
    family on ``_recorded`` data, in one program (op by op, several small ones)."""
    A, b = _rows_jit(family, jax.tree_util.tree_map(jnp.asarray, recorded))
    return np.asarray(A, np.float64), np.asarray(b, np.float64)


def _min_over_X(problem, family, phi) -> tuple[float, float]:
    """About min over X of g(., phi) where that is positive (else a value <= 0), and that
    value over |grad g| there (a distance, whatever g's scale): g at the projection of X's
    centre onto X n {g <= 0} with an exact penalty (the accurate solver, on g's normalised
    data)."""
    c, _ = problem.domain.inscribed_ball()
    g, unit = _g_at_projected_centre(problem.domain, family, phi, c)
    return float(g), float(unit)


@xla.one_shot
def _g_at_projected_centre(domain, family, phi, c):
    # One compiled program (op by op, the solver's loops compiled ~200 small programs: ~5 s).
    big = jnp.asarray(1e12, c.dtype)
    unit = family.normalised(phi)
    big = big / family.scale_at(c, unit)
    x = Dual().solve(domain, jnp.zeros((), c.dtype), family, unit, c, c, jnp.ones((), c.dtype), big)
    value, grad = family.value_and_gradient(x, unit)
    return family.value(x, phi), value / jnp.maximum(
        jnp.sqrt(jnp.sum(grad * grad)), jnp.finfo(c.dtype).tiny
    )


def _feas_tol(problem) -> float:
    c, diameter = _centre_and_diameter(problem.domain)
    scale = 1e-4 if c.dtype == jnp.float32 else 1e-8
    return scale * (1 + float(diameter))


@xla.one_shot
def _centre_and_diameter(domain):
    """X's centre and diameter in one program (op by op, several small ones)."""
    return domain.inscribed_ball()[0], domain.diameter()


@xla.one_shot
def _value_at_centre(domain, family, phi):
    return family.value(domain.inscribed_ball()[0], phi)


def _min_over_X_linear(problem, phi) -> tuple[float, float] | None:
    """(min over X of a.x - b, that over |a|) for a fixed g of one linear row, in closed form
    from X's ``min_linear`` (NumPy float64, nothing compiled); None for any other g or X."""
    if problem.constraint.kind not in ("linear", "polyhedral"):
        return None
    A, b = (np.asarray(v, np.float64) for v in problem.constraint.rows(phi))
    if A.shape[0] != 1 or problem.domain.min_linear(np.zeros(problem.dim)) is None:
        return None
    g = float(problem.domain.min_linear(A)[0] - b[0])
    return g, g / max(float(np.linalg.norm(A[0])), np.finfo(np.float64).tiny)


def check_fixed(problem, phi) -> None:
    """A fixed constraint must meet X: for one linear row, min over X of a.x - b in closed
    form; else X's centre if g <= 0 there, else the projection of X's centre onto
    X n {g <= 0}, checked by g there; a user's g is called infeasible only where the
    projection fails with g declared both ways (``flipped``: an undeclared kink misleads the
    smooth method, which assumes a gradient)."""
    exact = _min_over_X_linear(problem, phi)
    if exact is not None:
        g, unit = exact
    else:
        if float(_value_at_centre(problem.domain, problem.constraint, phi)) <= 0.0:
            return
        g, unit = _min_over_X(problem, problem.constraint, phi)
        other = problem.constraint.flipped()  # a user's g: smooth or kinked is a declaration
        if unit > _feas_tol(problem) and other is not None:
            g, unit = min((g, unit), _min_over_X(problem, other, phi), key=lambda p: p[1])
    if unit > 0 and unit > _feas_tol(problem):  # a distance: a scaled g is decided alike
        raise ValueError(
            f"the offline problem is infeasible: the constraint g(x) <= 0 does not meet "
            f"the feasible set X (min over X of g is about {g:.3g} > 0)"
        )


#: Up to this many distinct rows, ``_dual_bound`` searches a lattice on their simplex.
_DUAL_ROWS = 5


def _common_point(domain, A, b, dtype) -> bool:
    """Whether phase I of the comparator's log-barrier method (``jaxbco.offline.barrier``) finds a
    point of X strictly inside every row (False where X has no barrier or none is found)."""
    c, _ = domain.inscribed_ball()
    if barrier.form(domain, c) is None:
        return False
    found = jax.jit(lambda A, b: barrier.phase_one(domain, A, b, c.astype(dtype))[1])(
        jnp.asarray(A, dtype), jnp.asarray(b, dtype)
    )
    return bool(found)


def _common_curved_point(problem, horizon: int, dtype) -> bool:
    """Whether phase I of the log-barrier method finds a point of X strictly inside every
    recorded round of a smooth g (``region.every_round_slacks``)."""
    curved = region.every_round_slacks(problem, horizon)
    c, _ = problem.domain.inscribed_ball()
    if curved is None or barrier.form(problem.domain, c) is None:
        return False
    none = jnp.zeros((0, c.shape[0]), dtype), jnp.zeros((0,), dtype)
    phase_one = lambda c: barrier.phase_one(problem.domain, *none, c, curved=curved)[1]
    return bool(jax.jit(phase_one)(c.astype(dtype)))


def _dual_bound(domain, A, b, steps: int = 10) -> float:
    """A lower bound on min over X of max_i (a_i.x - b_i) (weak duality: for nu in the simplex,
    max_i r_i >= nu.r, so the min is >= max_nu [min over X of (A^T nu).x - nu.b]), the max
    over the lattice {nu = k / steps} of the simplex; > 0 proves that the rows do not meet X."""
    m = A.shape[0]

    def compositions(total, parts):
        if parts == 1:
            yield (total,)
            return
        for k in range(total + 1):
            for rest in compositions(total - k, parts - 1):
                yield (k,) + rest

    nu = np.asarray(list(compositions(steps, m)), np.float64) / steps  # (k, m)
    return float(np.max(domain.min_linear(nu @ A) - nu @ b))


def _round_name(data, t: int, n: int) -> str:
    if data.constant:
        return "fixed"
    if data.length is None:  # cycled
        return f"values[{t}]: rounds t = {t + 1}, {t + 1 + n}, ..."
    return f"round t = {t + 1}"


def _undecided(what: str) -> bool:
    warnings.warn(
        f"feasibility undecided: {what}; the run goes on and Result.feasibility_undecided is True",
        FeasibilityWarning,
        stacklevel=4,
    )
    return True


def _infeasible(message: str, comparator: bool) -> bool:
    if comparator:
        raise ValueError(
            f"{message}: the offline problem (Eq. 1) is infeasible, so x* and the "
            f"regret are undefined (pass comparator=False to run it anyway)"
        )
    warnings.warn(
        f"{message}: the hard violation there is unavoidable", FeasibilityWarning, stacklevel=4
    )
    return False


def check_feasible(problem, horizon: int, xi=0.0, comparator: bool = True) -> bool:
    """Whether every round's {g_t <= 0} meets (1 - xi) X (and, for x*, whether the rounds' sets
    meet in X), where that can be decided before the run; returns True ("undecided") after a
    ``FeasibilityWarning`` where it cannot.

    Decided: linear and polyhedral rows (fixed, replayed, alternating, or ``Shifted`` of a
    linear g with ``Slackened`` slack) by min over (1 - xi) X of a.x - b (``min_linear`` of
    the set); any recorded constraint by a common point (X's centre or x1) feasible in every
    round; a ``Slackened`` shift by min over X of the base g against the slack's range.  An
    empty round is a ValueError naming it when x* is wanted (``comparator``), else a warning.
    Undecided: drawn constraint data, and recorded data no common point certifies (for x*:
    more than 5 distinct rows, or non-linear families)."""
    data, fam = problem.constraint_data, problem.constraint
    xi = float(np.max(np.asarray(xi))) if checks.is_concrete(xi) else 0.0
    centre, _ = _centre_and_diameter(problem.domain)
    dtype = centre.dtype
    c = np.asarray(centre, np.float64)
    tol = _feas_tol(problem)
    if data.slack and fam.shift:
        if (
            fam.base.kind == "linear"
            and problem.domain.min_linear(np.zeros(problem.dim)) is not None
        ):
            A, b = (np.asarray(v, np.float64) for v in fam.base.rows(data.base))
            low_ac = A @ c
            g = float(np.max(low_ac + (1 - xi) * (problem.domain.min_linear(A) - low_ac) - b))
        else:
            g, _ = _min_over_X(problem, fam.base, data.base)
        low, high = float(data.low), float(data.high)
        if g <= low + tol:
            return False
        if g > high + tol:
            return _infeasible(
                f"constraint_data (Slackened) has an empty feasible set in every "
                f"round: min over (1 - xi) X of g - s_t is about {g - high:.3g} > 0 "
                f"even at the largest slack s_t = high = {high:g}",
                comparator,
            )
        return _undecided(
            f"constraint_data (Slackened): rounds with a slack s_t < {g:.3g} (of "
            f"[{low:g}, {high:g}]) have an empty feasible set in (1 - xi) X"
        )
    recorded = _recorded(data, horizon)
    if recorded is None:
        return _undecided(
            f"constraint_data ({type(data).__name__}) is drawn during the run; "
            f"whether every round's g_t <= 0 meets (1 - xi) X is not checked"
        )
    leaves = jax.tree_util.tree_leaves(recorded)
    n = leaves[0].shape[0] if leaves else 1  # a fixed g without data: Fixed(())
    points = [c]
    if problem.x1 is not None:
        points.append(c + (1 - xi) * (np.asarray(problem.x1, np.float64) - c))
    if fam.kind in ("linear", "polyhedral"):
        A, b = recorded_rows(fam, recorded)  # (n, m, d), (n, m)
        lows = problem.domain.min_linear(A)
        if lows is not None:
            ac = A @ c
            gap = ac + (1 - xi) * (lows - ac) - b
            bad = gap > tol
            if np.any(bad):
                t, i = np.argwhere(bad)[0]
                rounds = int(np.sum(np.any(bad, axis=1)))
                return _infeasible(
                    f"constraint_data ({_round_name(data, t, n)}; row {i}) has an empty feasible "
                    f"set: the halfspace a.x <= b misses (1 - xi) X (xi = {xi:g}; min over (1 - xi) X "
                    f"of a.x - b = {gap[t, i]:.3g} > 0); {rounds} of {n} recorded rounds are empty",
                    comparator,
                )
        if data.constant or any(np.max(A @ p - b) <= tol for p in points):
            return False  # one point meets every round (a fixed set: validate's check)
        if not comparator and lows is not None and A.shape[1] == 1:
            return False  # one halfspace per round, each meeting (1 - xi) X
        rows = np.unique(
            np.concatenate([A.reshape(-1, A.shape[-1]), b.reshape(-1, 1)], axis=1), axis=0
        )
        if comparator and lows is not None and rows.shape[0] <= _DUAL_ROWS:
            h = _dual_bound(problem.domain, rows[:, :-1], rows[:, -1])
            if h > tol:
                raise ValueError(
                    f"the offline problem is infeasible: the {n} recorded rounds of constraint_data "
                    f"have no common point in X (min over X of max_t g_t >= {h:.3g} > 0), so x* "
                    f"and the regret are undefined (pass comparator=False to run it anyway)"
                )
        if comparator and _common_point(problem.domain, rows[:, :-1], rows[:, -1], dtype):
            return False  # the log-barrier method's phase I found a point inside every row
        if not comparator:
            return _undecided(
                f"constraint_data: rounds of {A.shape[1]} rows each; neither X's "
                f"centre nor x1 meets every round, and rounds of several rows are "
                f"not checked one by one"
            )
        return _undecided(
            f"constraint_data: no common point of the {n} recorded rounds was "
            f"found ({rows.shape[0]} distinct rows), so whether they meet in X "
            f"(for x*) is not decided; x* may violate some"
        )
    if data.constant:
        return False  # validate: X n {g <= 0} is non-empty
    pts = jnp.asarray(np.stack(points), dtype)
    gs = jax.vmap(lambda phi: jax.vmap(lambda p: fam.value(p, phi))(pts))(
        jax.tree_util.tree_map(jnp.asarray, recorded)
    )  # (rounds, points)
    if np.any(np.all(np.asarray(gs, np.float64) <= tol, axis=0)):
        return False  # one point feasible in every round
    if comparator and _common_curved_point(problem, horizon, dtype):
        return False  # the log-barrier method's phase I found a point inside every round
    return _undecided(
        f"constraint_data ({type(fam).__name__}, {n} recorded rounds): neither X's "
        f"centre nor x1 is feasible in every round, and the rounds of a "
        f"{type(fam).__name__} constraint are not checked one by one"
    )
