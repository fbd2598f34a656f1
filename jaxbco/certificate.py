"""Certificate of the offline comparator x*: its distance from X and from every g_t <= 0, and
an upper bound on F(x*) - F* from weak Lagrangian duality, F = (1/T) sum_t f_t.

Cuts.  For a point p and a subgradient s of F at p, convexity gives for every y
    F(y) >= F(p) + s.(y - p) = a + s.(y - x),        a = F(p) + s.(x - p) <= F(x),
and likewise g_t(y) >= c + q.(y - x) for a subgradient q of g_t.  With weights omega in the
simplex over F's cuts and multipliers mu >= 0 over the constraints' cuts, for every feasible y
(y in X, all g_t(y) <= 0):
    F(y) >= sum_j omega_j a_j + sum_k mu_k c_k - sigma_X(-v) - v.x,    v = S^T omega + Q^T mu,
(sigma_X the support function of X), so with F* the offline optimum (Eq. 1)
    F(x) - F* <= gap := sum_j omega_j (F(x) - a_j) - sum_k mu_k c_k + sigma_X(-v) + v.x,
whatever omega and mu: the bound is rigorous, and they only decide how tight it is.  They are
chosen from the KKT conditions at x: least squares on ||P v||^2 + sum_j (omega_j (F - a_j))^2 / D^2
+ sum_k (mu_k c_k)^2 / D^2, P the projector onto X's affine hull (``hull_projector``; X's
normal cone enters as cuts: its affine ``membership_pieces`` where it has them (a box's faces,
a simplex's x_i >= 0), else its ``membership`` function taken like g's, at x alone where it is
smooth (a ball)), over
omega >= 0 with a heavy row for sum omega = 1, and mu >= 0 on the cuts near-active at x
(c_k >= -sqrt(eps) |q_k| D): non-negative least squares; omega and mu are then
divided by omega's sum (the gap is homogeneous in them).

Cuts taken: F at x, and for a family that may have kinks (``smooth`` False: ``Absolute``, a
``CustomLoss``) also at x +- h e_i, h = eps^(2/3) D, so a kink at x* is seen from both sides
(a kink's side costs at most 2 h |s| in the gap); g at x for a fixed g (its rows for a
polyhedral one), every round's g_t for time-varying data with the max(``KEEP``, d + 1) most
violated kept (a vertex of X ∩ C can need d binding rows), plus the probes for a g of unknown smoothness (``CustomConstraint``).  A non-finite subgradient
(a kink where autodiff gives NaN) drops that cut.

One cut first.  For a fixed g, the bound from F's and g's gradients at x alone
(``jaxbco.offline.one_cut``), no least squares: at the multiplier read off x's face, then where
that fails the searched one, then the cuts' certificate, the smallest gap kept (each bounds
F(x) - F*).  ``certify_quick`` is the first, ``certify_full`` the rest, a program compiled
only where some seed of the batch fails the first (``needs_full``).

Curved cuts.  Where F's cut is taken at x alone and F is strongly convex (a ``Quadratic``
loss), or g is a fixed quadratic (a ``Ball``, an ``Ellipsoid``), the bound also takes their
curvature (``jaxbco.offline.curved``): its last terms become -min over y in X of
v.(y - x) + (kappa/2)|y - x|^2 (at most |v|^2 / (2 kappa), free of X's diameter) instead of
sigma_X(-v) + v.x; the smaller gap is kept.

Reported, each relative and so comparable with one tolerance (``tolerance``: float64 1e-8;
float32 sqrt(eps), its round-off allowance): ``set_violation`` |x - Pi_X(x)| / D;
``constraint_violation`` max_t [g_t(x)]_+ / (|q_t| D); ``gap`` relative to F's variation over
the feasible region, with F's own round-off added (``jaxbco.offline.variation``: a constant
added to f, or X grown around the feasible region, changes no verdict).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco.offline import absolute, curved, cuts, one_cut, variation, weights
from jaxbco.offline.cuts import KEEP, constraint_cuts, loss_cuts, probes  # noqa: F401 (API)
from jaxbco.solvers.gap import tolerance as tolerance  # one tolerance for every certificate

STEER = 2  # steered rounds per coordinate where g (fixed) or X may have kinks


class CertificateWarning(UserWarning):
    """x* failed its certificate on some seeds: their regret is measured against a point that
    is not shown to be the offline optimum (``Result.x_star_ok``)."""


class Certificate(NamedTuple):
    """Relative measures of x* (one per seed): how far it lies from X and from {g_t <= 0},
    and the duality gap bounding F(x*) - F* (see the module docstring)."""

    set_violation: jax.Array
    constraint_violation: jax.Array
    gap: jax.Array


def passes(cert: Certificate, dtype):
    """Whether each measure is finite and within ``tolerance(dtype)`` (NumPy or JAX arrays)."""
    tol = tolerance(dtype)
    return (cert.set_violation <= tol) & (cert.constraint_violation <= tol) & (cert.gap <= tol)


def certify(domain, x, F, a, S, violation, c, q, V, moduli=None) -> Certificate:
    """The certificate of x (one seed) from F(x), F's cuts (a, S), the constraints' cuts
    (c, q) with their violation (``loss_cuts``, ``constraint_cuts``), F's variation over the
    feasible region (``variation.spread``: the gap's scale) and, where known, the cuts' strong-convexity
    moduli (sigma of F's cut at x, m (K,) of the constraints' cuts: ``jaxbco.offline.curved``)."""
    dtype = x.dtype
    D = domain.diameter().astype(dtype)
    set_violation = jnp.sqrt(jnp.sum((x - domain.project(x)) ** 2)) / D
    omega, mu, v, _ = weights.weights(domain, x, F, a, S, c, q)  # mu on the unit cuts
    okF = jnp.isfinite(a) & jnp.all(jnp.isfinite(S), axis=1)
    a = jnp.where(okF, a, F)
    okg = jnp.isfinite(c) & jnp.all(jnp.isfinite(q), axis=1)
    c = weights.unit(jnp.where(okg, c, 0.0), jnp.where(okg[:, None], q, 0.0))[0]
    cut_part = jnp.dot(omega, F - a) - jnp.dot(mu, c)
    gap = cut_part + domain.support(-v) + jnp.dot(v, x)
    if moduli is not None:
        sigma, m = moduli
        n = cuts.norms(jnp.where(okg[:, None], q, 0.0))
        kappa = sigma + jnp.dot(mu, jnp.where(okg & (n > 0), m / jnp.where(n > 0, n, 1.0), 0.0))
        gap = jnp.minimum(gap, cut_part + curved.bound(domain, x, v, kappa))
    gap = variation.relative_gap(gap, F, V)
    nan_x = ~jnp.all(jnp.isfinite(x))
    inf = jnp.asarray(jnp.inf, dtype)
    return Certificate(
        jnp.where(nan_x, inf, set_violation),
        jnp.where(nan_x, inf, violation),
        jnp.where(nan_x, inf, gap),
    )


def certify_seed(problem, seed_key, horizon: int, x, loss_cuts_fn=None) -> Certificate:
    """``certify`` for one seed's x*, its cuts from passes over the seed's rounds (or F's from
    ``loss_cuts_fn(x)`` -> (F(x), a, S), e.g. from a streaming comparator's sums); for a fixed
    g that may have kinks, ``2 d`` more cuts steered by the residual (``weights.steered_cuts``).
    For a fixed g the one-cut bounds first (``_complete``)."""
    x = jax.lax.stop_gradient(x)
    fast = quick(problem, seed_key, horizon, x, loss_cuts_fn)
    full = _full(problem, seed_key, horizon, x, loss_cuts_fn)
    if fast is None:
        return full
    searched = quick(problem, seed_key, horizon, x, loss_cuts_fn, search=True)
    return _complete(fast, searched, full, x.dtype)


def quick(problem, seed_key, horizon: int, x, loss_cuts_fn=None, search=False):
    """The one-cut bound of x (``jaxbco.offline.one_cut``: F's and g's gradients at x, no least
    squares; its multiplier read off x's face, or ``search``ed) for a fixed constraint; None
    for time-varying data."""
    if not problem.constraint_data.constant:
        return None
    x = jax.lax.stop_gradient(x)
    c, q = one_cut.constraint_cut(problem, x)
    at_x = variation.cuts_at_x(problem, seed_key, horizon, x)  # fixed g: no pass over rounds
    Y = variation.points(problem, seed_key, horizon, x, *at_x)
    if loss_cuts_fn is None:
        F, s, F_points = one_cut.loss_cut(problem, seed_key, horizon, x, Y)
    else:
        F, _, S = loss_cuts_fn(x)
        s, F_points = S[0], _values(loss_cuts_fn, Y)
    one = jnp.ones((1,), jnp.int32)
    moduli = (
        curved.loss_modulus(problem),
        curved.constraint_modulus(problem, None, one, x.dtype)[0],
    )
    rise = variation.ascent(problem, seed_key, horizon, x, *at_x, s, moduli[0])
    V = variation.spread(F, F_points, rise)
    return Certificate(*one_cut.bound(problem.domain, x, F, s, c, q, V, search, moduli))


def _values(loss_cuts_fn, points):
    """F at ``points`` (k, d) from a ``loss_cuts_fn`` (a streaming comparator's sums)."""
    return jax.vmap(lambda y: loss_cuts_fn(y)[0])(points)


def certify_quick(problem, seed_keys, horizon: int, xs, loss_cuts_fns=None) -> Certificate:
    """The cheap certificate of every seed of a batch, fields (S,): the one-cut bound at the
    guessed multiplier (``quick``) for a fixed constraint, the cuts' certificate for
    time-varying data; ``certify_full`` completes it where it fails (``needs_full``).

    Args:
        problem: the problem.
        seed_keys: (S,) keys, or None where ``loss_cuts_fns`` gives F's cuts.
        horizon: T.
        xs: (S, d) the points certified.
        loss_cuts_fns: None, or a function of (seed index) -> ``loss_cuts_fn``.

    Returns:
        The ``Certificate``, fields (S,).
    """
    one = _per_seed(problem, seed_keys, horizon, xs, loss_cuts_fns)
    return one(quick) if problem.constraint_data.constant else one(_full)


def needs_full(problem, fast: Certificate, dtype) -> bool:
    """Whether ``certify_quick``'s certificate leaves some seed to ``certify_full`` (on the
    host, between the two programs)."""
    if not problem.constraint_data.constant:
        return False
    return not bool(np.all(passes(Certificate(*(np.asarray(c) for c in fast)), dtype)))


def certify_full(
    problem, seed_keys, horizon: int, xs, fast: Certificate, loss_cuts_fns=None
) -> Certificate:
    """``certify_quick``'s ``fast`` completed (``_complete``): for every seed, exactly
    ``certify_seed``'s values.  Arguments as ``certify_quick``'s."""
    if not problem.constraint_data.constant:
        return fast  # already the cuts' certificate
    one = _per_seed(problem, seed_keys, horizon, xs, loss_cuts_fns)
    searched = one(lambda *args: quick(*args, search=True))
    return _complete(fast, searched, one(_full), xs.dtype)


def certify_batch(problem, seed_keys, horizon: int, xs, loss_cuts_fns=None) -> Certificate:
    """``certify_seed`` of a batch in one traced function (for callers inside a program):
    ``certify_quick``, then ``certify_full`` under a ``lax.cond`` where some seed fails it."""
    fast = certify_quick(problem, seed_keys, horizon, xs, loss_cuts_fns)
    if not problem.constraint_data.constant:
        return fast
    slow = lambda: certify_full(problem, seed_keys, horizon, xs, fast, loss_cuts_fns)
    return jax.lax.cond(jnp.all(passes(fast, xs.dtype)), lambda: fast, slow)


def _per_seed(problem, seed_keys, horizon: int, xs, loss_cuts_fns):
    """``f(problem, key, T, x, loss_cuts_fn)`` -> the same under vmap over the batch's seeds."""
    xs = jax.lax.stop_gradient(xs)
    idx = jnp.arange(xs.shape[0])
    fns = (lambda i: None) if loss_cuts_fns is None else loss_cuts_fns
    key = (lambda i: None) if seed_keys is None else (lambda i: seed_keys[i])
    return lambda f: jax.vmap(lambda i, x: f(problem, key(i), horizon, x, fns(i)))(idx, xs)


def _complete(fast: Certificate, searched: Certificate, full: Certificate, dtype):
    """``fast`` (the one-cut bound, guessed multiplier) where it passes, else the better of it
    and ``searched`` where that passes, else ``full`` with the smallest gap (elementwise)."""
    better = fast._replace(gap=jnp.minimum(fast.gap, searched.gap))
    merged = full._replace(gap=jnp.minimum(full.gap, better.gap))
    ok, ok_better = passes(fast, dtype), passes(better, dtype)
    pick = lambda a, b, c: jnp.where(ok, a, jnp.where(ok_better, b, c))
    return jax.tree_util.tree_map(pick, fast, better, merged)


def _full(problem, seed_key, horizon: int, x, loss_cuts_fn=None) -> Certificate:
    """The cuts' certificate (module docstring)."""
    violation, c, q, rounds = cuts.constraint_cuts(problem, seed_key, horizon, x)
    h = cuts.probe_step(problem, x.dtype)
    m = curved.constraint_modulus(problem, seed_key, rounds, x.dtype)
    cx, qx = cuts.set_cuts(problem.domain, x, h)
    c, q = jnp.concatenate([c, cx]), jnp.concatenate([q, qx])
    Y = variation.points(problem, seed_key, horizon, x, c, q)  # ``variation.cuts_at_x``'s cuts
    if loss_cuts_fn is None:
        F, a, S, F_points = cuts.loss_cuts(problem, seed_key, horizon, x, Y)
    else:
        F, a, S = loss_cuts_fn(x)
        F_points = _values(loss_cuts_fn, Y)
    rise = variation.ascent(problem, seed_key, horizon, x, c, q, S[0], curved.loss_modulus(problem))
    V = variation.spread(F, F_points, rise)
    fns = [problem.domain.membership] if problem.domain.steer else []
    if problem.constraint.probe_kinks and problem.constraint_data.constant:
        phi = problem.constraint_data.every_round()
        fns.append(lambda z: problem.constraint.value(z, phi))
    corner = None
    if problem.loss.l1_breakpoints and loss_cuts_fn is None and x.ndim == 1:
        at = absolute.corner_cuts(problem, seed_key, horizon, x)
        corner = lambda target, p: at(target)
    elif problem.loss.probe_convexity and loss_cuts_fn is None:  # a user's f: kinks anywhere
        corner = lambda target, p: cuts.loss_cut_at(problem, seed_key, horizon, x, p)
    if fns or corner is not None:
        steered = weights.steered_cuts(
            fns, corner, problem.domain, x, F, a, S, c, q, h, STEER * x.shape[0]
        )
        a, S, c, q = steered
    m = jnp.concatenate([m, jnp.zeros(c.shape[0] - m.shape[0], x.dtype)])
    sigma = curved.loss_modulus(problem) if a.shape[0] == 1 else 0.0  # F's cut at x alone
    return certify(problem.domain, x, F, a, S, violation, c, q, V, (sigma, m))


FIELDS = ("set_violation", "constraint_violation", "gap")


def report(cert, n_seeds: int, seed_ids, dtype, problem, method: str) -> dict:
    """``Result``'s ``x_star_certificate`` (S, 3: ``FIELDS``) and ``x_star_ok`` (S,) from a run's
    certificate (None: no comparator, every seed ok), with a ``CertificateWarning`` naming the
    seeds, the failed measures, the comparator's method and the problem's components."""
    if cert is None:
        return {
            "x_star_certificate": np.full((n_seeds, 3), np.nan),
            "x_star_ok": np.ones(n_seeds, bool),
        }
    table = np.stack([np.asarray(c, np.float64)[:n_seeds] for c in cert], axis=1)
    ok = np.asarray(passes(Certificate(*table.T), dtype))
    if not ok.all():
        bad = np.flatnonzero(~ok)
        ids = ", ".join(str(int(i)) for i in np.asarray(seed_ids)[bad[:8]])
        ids += ", ..." if bad.size > 8 else ""
        worst = zip(FIELDS, table[bad].max(axis=0))
        failed = ", ".join(
            f"{k.replace('_', ' ')} {w:.2e}" for k, w in worst if not w <= tolerance(dtype)
        )
        parts = (
            f"{type(problem.loss).__name__} loss, {type(problem.constraint).__name__} "
            f"constraint ({type(problem.constraint_data).__name__} data) on "
            f"{type(problem.domain).__name__}"
        )
        low = (
            "  In float32, F's round-off (a large constant in f) or X far larger than the "
            "feasible region can keep x* from being found or certified: dtype='float64' "
            "resolves both."
            if np.dtype(dtype) == np.float32
            else ""
        )
        warnings.warn(
            f"x* is not certified on {bad.size} of {n_seeds} seeds (seed ids {ids}): {failed} "
            f"(tolerance {tolerance(dtype):.0e}); their regret is measured against a point not "
            f"shown to be the offline optimum.  Comparator: {method}, for the {parts}.{low}  "
            f"See Result.x_star_ok and Result.x_star_certificate.",
            CertificateWarning,
            stacklevel=3,
        )
    return {"x_star_certificate": table, "x_star_ok": ok}
