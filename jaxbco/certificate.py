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
(c_k >= -sqrt(eps) |q_k| D): non-negative least squares (``jaxbco._src.nnls``); omega and mu are then
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

Reported, each relative and so comparable with one tolerance (``tolerance``: float64 1e-8;
float32 sqrt(eps), its round-off allowance): ``set_violation`` |x - Pi_X(x)| / D;
``constraint_violation`` max_t [g_t(x)]_+ / (|q_t| D); ``gap`` / (|F(x)| + |s| D).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import nnls
from jaxbco.offline import absolute, cuts, one_cut
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


def _unit(c, q):
    """Cuts scaled to unit normals (a g given as 1e-20 or 1e20 times a well-scaled one has
    the same cuts; least squares would drop its columns beside F's)."""
    n = cuts.norms(q)
    n = jnp.where(n > 0, n, 1.0)
    return c / n, q / n[:, None]


def _weights(domain, x, F, a, S, c, q):
    """(omega, mu, v, r): the cut weights chosen from the KKT conditions at x (module
    docstring), v = S^T omega + Q^T mu and its residual r = P v off X's normal cone."""
    dtype = x.dtype
    eps = jnp.finfo(dtype).eps
    D = domain.diameter().astype(dtype)
    okF = jnp.isfinite(a) & jnp.all(jnp.isfinite(S), axis=1)
    a, S = jnp.where(okF, a, F), jnp.where(okF[:, None], S, 0.0)
    okg = jnp.isfinite(c) & jnp.all(jnp.isfinite(q), axis=1)
    c, q = _unit(jnp.where(okg, c, 0.0), jnp.where(okg[:, None], q, 0.0))
    active = okg & (c >= -(eps**0.5) * D)

    # rows: P v = 0; rho (sum omega - 1) = 0 with rho = |s| (omega in the simplex after
    # omega and mu are divided by its sum below: the gap is homogeneous in them, so a short sum
    # costs nothing; a heavier rho made F's cuts near-parallel columns, their differences
    # ~2/T in float32 below lstsq's cut-off); the gap's other terms omega_j (F - a_j) / D,
    # mu_k c_k / D = 0 (so weight goes to the tightest of parallel cuts).  omega >= 0 and
    # mu >= 0 both: free weights on near-identical probe cuts would cancel in huge pairs.
    J, K = S.shape[0], c.shape[0]
    P = domain.hull_projector(dtype)
    rho = jnp.maximum(jnp.max(cuts.norms(S)), jnp.finfo(dtype).tiny)
    wF, wg = (F - a) / D, c / D
    M = jnp.concatenate(
        [
            jnp.concatenate([P @ S.T, P @ q.T], axis=1),
            jnp.concatenate([rho * jnp.ones((1, J), dtype), jnp.zeros((1, K), dtype)], axis=1),
            jnp.concatenate([jnp.diag(wF), jnp.zeros((J, K), dtype)], axis=1),
            jnp.concatenate([jnp.zeros((K, J), dtype), jnp.diag(wg)], axis=1),
        ]
    )
    rhs = jnp.concatenate([jnp.zeros(S.shape[1], dtype), rho[None], jnp.zeros(J + K, dtype)])
    none = jnp.zeros(J + K, bool)
    z = nnls.solve(M, rhs, none, jnp.concatenate([okF, active]), eps)
    omega, mu = jnp.maximum(z[:J], 0.0), jnp.maximum(z[J:], 0.0)
    total = jnp.sum(omega)
    scale = jnp.maximum(total, jnp.finfo(dtype).tiny)
    omega = jnp.where(total > 0, omega / scale, jnp.eye(J, dtype=dtype)[0])
    mu = jnp.where(total > 0, mu / scale, mu)
    v = S.T @ omega + q.T @ mu
    return omega, mu, v, P @ v


def certify(domain, x, F, a, S, violation, c, q) -> Certificate:
    """The certificate of x (one seed) from F(x), F's cuts (a, S) and the constraints' cuts
    (c, q) with their violation (``loss_cuts``, ``constraint_cuts``)."""
    dtype = x.dtype
    D = domain.diameter().astype(dtype)
    set_violation = jnp.sqrt(jnp.sum((x - domain.project(x)) ** 2)) / D
    omega, mu, v, _ = _weights(domain, x, F, a, S, c, q)  # mu on the unit cuts
    okF = jnp.isfinite(a) & jnp.all(jnp.isfinite(S), axis=1)
    a = jnp.where(okF, a, F)
    okg = jnp.isfinite(c) & jnp.all(jnp.isfinite(q), axis=1)
    c = _unit(jnp.where(okg, c, 0.0), jnp.where(okg[:, None], q, 0.0))[0]
    gap = jnp.dot(omega, F - a) - jnp.dot(mu, c) + domain.support(-v) + jnp.dot(v, x)
    gnorm = jnp.max(jnp.where(okF, cuts.norms(jnp.where(okF[:, None], S, 0.0)), 0.0))
    scale = jnp.maximum(jnp.abs(F) + gnorm * D, jnp.finfo(dtype).tiny)
    gap = jnp.where(jnp.isfinite(F), jnp.maximum(gap, 0.0) / scale, jnp.inf)
    nan_x = ~jnp.all(jnp.isfinite(x))
    inf = jnp.asarray(jnp.inf, dtype)
    return Certificate(
        jnp.where(nan_x, inf, set_violation),
        jnp.where(nan_x, inf, violation),
        jnp.where(nan_x, inf, gap),
    )


def _steered_cuts(fns, corner, domain, x, F, a, S, c, q, h, rounds: int):
    """Cuts of kinked functions added where they help most, ``rounds`` times, each from the
    weights of the cuts so far (``_weights``) and the direction w = -P v / |P v| they leave
    unexplained: of ``fns`` (a fixed g, X's membership), the gradient at x + h w, their
    subgradient at x maximising <s, w> (its directional derivative's argmax), and in odd
    rounds at x + H w, H = tolerance D / 16 (an ε-subgradient: a kink within H of x); of F, where
    ``corner`` (w) -> (a, s) is given (``Absolute``), the cut whose subgradient is nearest F's
    part of v moved along w, a corner of its box subdifferential, which the probes at
    x +- h e_i do not span.  Columns of the minimum-norm problem over the subdifferentials
    (Wolfe 1975); F's and the constraints' are steered together (an L1 ball's face and the
    loss's kinks at one x* need both)."""
    dtype, k, d = x.dtype, len(fns), x.shape[0]
    nl = 0 if corner is None else 1
    c = jnp.concatenate([c, jnp.full((rounds * k,), -jnp.inf, dtype)])
    q = jnp.concatenate([q, jnp.zeros((rounds * k, d), dtype)])
    a = jnp.concatenate([a, jnp.full((rounds * nl,), jnp.nan, dtype)])
    S = jnp.concatenate([S, jnp.zeros((rounds * nl, d), dtype)])
    start, start_F = c.shape[0] - rounds * k, a.shape[0] - rounds * nl
    # odd rounds step farther: a kink ~1e-10 beside x (an LP's x* on an L1 ball's face) is
    # crossed, at a cost of 2 far |q| per unit cut, tolerance / 8 of the gap's scale
    far = jnp.maximum(h, tolerance(dtype) / 16 * domain.diameter().astype(dtype))

    def body(i, so_far):
        a, S, c, q = so_far
        omega, _, _, r = _weights(domain, x, F, a, S, c, q)
        n = jnp.sqrt(jnp.sum(r * r))
        p = x - jnp.where(i % 2 == 0, h, far) * r / jnp.where(n > 0, n, 1.0)
        for j, fn in enumerate(fns):
            ci, qi = cuts.cuts_at(fn, x, p[None])
            c = c.at[start + k * i + j].set(jnp.where(n > 0, ci[0], -jnp.inf))
            q = q.at[start + k * i + j].set(jnp.where(n > 0, qi[0], 0.0))
        if corner is not None:
            ok = jnp.isfinite(a)[:, None] & jnp.all(jnp.isfinite(S), axis=1, keepdims=True)
            ai, si = corner(jnp.where(ok, S, 0.0).T @ omega - r)
            a = a.at[start_F + i].set(jnp.where(n > 0, ai, jnp.nan))
            S = S.at[start_F + i].set(si)
        return a, S, c, q

    return jax.lax.fori_loop(0, rounds, body, (a, S, c, q))


def certify_seed(problem, seed_key, horizon: int, x, loss_cuts_fn=None) -> Certificate:
    """``certify`` for one seed's x*, its cuts from passes over the seed's rounds (or F's from
    ``loss_cuts_fn(x)`` -> (F(x), a, S), e.g. from a streaming comparator's sums); for a fixed
    g that may have kinks, ``2 d`` more cuts steered by the residual (``_steered_cuts``).
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
    if loss_cuts_fn is None:
        F, s = one_cut.loss_cut(problem, seed_key, horizon, x)
    else:
        F, _, S = loss_cuts_fn(x)
        s = S[0]
    c, q = one_cut.constraint_cut(problem, x)
    return Certificate(*one_cut.bound(problem.domain, x, F, s, c, q, search))


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
    F, a, S = (
        cuts.loss_cuts(problem, seed_key, horizon, x) if loss_cuts_fn is None else loss_cuts_fn(x)
    )
    violation, c, q = cuts.constraint_cuts(problem, seed_key, horizon, x)
    h = cuts.probe_step(problem, x.dtype)
    cx, qx = cuts.set_cuts(problem.domain, x, h)
    c, q = jnp.concatenate([c, cx]), jnp.concatenate([q, qx])
    fns = [problem.domain.membership] if problem.domain.steer else []
    if problem.constraint.probe_kinks and problem.constraint_data.constant:
        phi = problem.constraint_data.every_round()
        fns.append(lambda z: problem.constraint.value(z, phi))
    corner = None
    if problem.loss.l1_breakpoints and loss_cuts_fn is None and x.ndim == 1:
        corner = absolute.corner_cuts(problem, seed_key, horizon, x)
    if fns or corner is not None:
        steered = _steered_cuts(
            fns, corner, problem.domain, x, F, a, S, c, q, h, STEER * x.shape[0]
        )
        a, S, c, q = steered
    return certify(problem.domain, x, F, a, S, violation, c, q)


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
        warnings.warn(
            f"x* is not certified on {bad.size} of {n_seeds} seeds (seed ids {ids}): {failed} "
            f"(tolerance {tolerance(dtype):.0e}); their regret is measured against a point not "
            f"shown to be the offline optimum.  Comparator: {method}, for the {parts}.  See "
            f"Result.x_star_ok and Result.x_star_certificate.",
            CertificateWarning,
            stacklevel=3,
        )
    return {"x_star_certificate": table, "x_star_ok": ok}
