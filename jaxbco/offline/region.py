"""The comparator's feasible region: X ∩ {gₜ ≤ 0 for every t} as one constraint, in one place.

Eq. (1)'s constraints become one constraint C with X ∩ C = X ∩ (all rounds' feasible sets):

* fixed data: C = g itself;
* ``Shifted`` with ``Slackened`` data, gₜ = g − sₜ: C = {g ≤ minₜ sₜ};
* replayed / alternating linear data: C = {max over the recorded rows ≤ 0} (polyhedral);
* replayed / alternating data of a smooth g (a rotating ellipsoid) on a set with a barrier:
  one smooth slack −gₜ per recorded round (``every_round_slacks``), every projection by the
  log-barrier method (``jaxbco.offline.barrier``).

Anything else has no comparator (``unsupported`` says why, from the components' types alone).
Π_{X∩C} (``projector``) is the solvers' own exact projection (``solvers.project_feasible``)
with β set at X's centre, or the log-barrier method where the rows are more than the dual
Newton takes or every round is its own slack.

Example:
    >>> from jaxbco import problems
    >>> from jaxbco.offline import region
    >>> region.unsupported(problems.make("quadratic-ball", dim=3)) is None
    True
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco import constraints as C
from jaxbco._src.prng import KeyBlock
from jaxbco.draws import CONSTRAINT, sample
from jaxbco.offline import barrier
from jaxbco.solvers import project_feasible
from jaxbco.solvers.polyhedral import PolyhedralDual


def unsupported(problem) -> str | None:
    """Why the constraints cannot be reduced to one set (None when they can): decided from
    the components' types alone, before anything is traced."""
    data, fam = problem.constraint_data, problem.constraint
    if data.constant or (data.slack and fam.shift):
        return None
    if data.recorded() is not None and fam.kind in ("linear", "polyhedral"):
        return None
    if data.recorded() is not None and fam.kind == "smooth" and has_barrier(problem.domain):
        return None
    return (
        f"the offline comparator x* takes a fixed constraint, a Shifted one with Slackened "
        f"data, replayed/alternating linear rows, or a replayed/alternating smooth g on a set "
        f"with a barrier (box, simplex, L1 or L2 ball); got {type(fam).__name__} with "
        f"{type(data).__name__} data (docs/own-problem.md lists the supported pairs; pass "
        f"comparator=False to run with regret against x_1)"
    )


def has_barrier(domain) -> bool:
    """Whether X declares a log barrier (its own slacks or a lifted form, ``barrier.form``)."""
    return barrier.form(domain, domain.inscribed_ball()[0]) is not None


def every_round_slacks(problem, horizon):
    """z -> (-g_t(z) over the recorded rounds), for a smooth g with replayed or alternating
    data (a rotating ellipsoid): X n every round's {g_t <= 0} by the log-barrier method, each
    round one smooth slack (``jaxbco.offline.barrier``); None for any other constraint."""
    data, fam = problem.constraint_data, problem.constraint
    if data.constant or fam.kind != "smooth":
        return None
    values = data.recorded(horizon)
    if values is None:
        return None
    return lambda z: -jax.vmap(lambda phi: fam.value(z, phi))(values)


def reduced_constraint(problem, seed_key, horizon):
    """(family, phi) whose feasible set is the intersection over t = 1..T."""
    data = problem.constraint_data
    fam = problem.constraint
    if data.constant:
        return fam, data.every_round()
    if data.slack and fam.shift:

        def body(smin, t):
            return jnp.minimum(smin, sample(data, seed_key, t, CONSTRAINT)[1]), None

        ts = jnp.arange(1, horizon + 1, dtype=jnp.int32)
        smin, _ = jax.lax.scan(body, jnp.full(runs(seed_key), jnp.inf, data.low.dtype), ts)
        return fam, (data.base, smin)
    values = data.recorded(horizon)
    if values is not None and fam.kind in ("linear", "polyhedral"):
        A, b = jax.vmap(fam.rows)(values)
        return C.MultiLinear(), (A.reshape(-1, A.shape[-1]), b.reshape(-1))
    raise NotImplementedError(unsupported(problem))


def runs(seed_key) -> tuple:
    """The run axes of a seed key: () for one typed key, the block's shape for a ``KeyBlock``
    (the comparator on seeds-minor blocks)."""
    return tuple(seed_key.shape) if isinstance(seed_key, KeyBlock) else ()


def many_rows(fam, phi) -> bool:
    """Linear rows beyond the dual Newton's count (``PolyhedralDual.exact_rows``)."""
    return fam.kind == "polyhedral" and fam.rows(phi)[0].shape[0] > PolyhedralDual.exact_rows


def barrier_rows(domain, fam, phi, x):
    """(A, b) where the log-barrier method takes the rows: more than the dual Newton's,
    shared by the runs of ``x``, on a set with a barrier (``barrier.form``); else None."""
    if not many_rows(fam, phi) or barrier.form(domain, x[(...,) + (0,) * (x.ndim - 1)]) is None:
        return None
    A, b = fam.rows(phi)
    return (A, b) if A.ndim == 2 and b.ndim == 1 else None


def per_run(fn, x):
    """fn (d,) -> (d,) applied to each run of x (d, runs...)."""
    if x.ndim == 1:
        return fn(x)
    flat = x.reshape(x.shape[0], -1)
    return jax.vmap(fn, in_axes=1, out_axes=1)(flat).reshape(x.shape)


def projector(domain, fam, phi, c):
    """z -> Pi_{X n C}(z): ``solvers.project_feasible`` (ξ = 0, β huge on g's normalised
    data, set at X's centre ``c``, so exact whatever g's scale), or the log-barrier method for
    many rows."""
    rows = barrier_rows(domain, fam, phi, c)
    if rows is not None:  # many rows: every projection by the log-barrier method, exact
        return lambda z: per_run(lambda v: barrier.solve(domain, *rows, 1.0, -v), z)
    zero = jnp.zeros((), c.dtype)
    return lambda z: project_feasible(domain, zero, fam, phi, z, scale_at=c)


def every_round_barrier(domain, curved, dtype, d):
    """(w, v) -> argmin over X n every round's {g_t <= 0} of w ||z||^2 / 2 - <v, z> (w = 1:
    the projection of v; w = 0: the LP min <-v, z>), by the log-barrier method, run by run."""
    none = jnp.zeros((0, d), dtype), jnp.zeros((0,), dtype)
    solve = lambda w, v: barrier.solve(domain, *none, w, -v if w else v, curved)
    return lambda w, z: per_run(lambda v: solve(w, v), z)
