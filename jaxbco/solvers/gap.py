"""Certificate of one prox step (Eq. (5)): a duality gap from g's linearisation at the answer.

The prox objective of Eq. (5) of Hikima (2023) is P(z) = (α/2)‖z − y‖₂² + β[g(z)]₊ over
S = (1 − ξ)X.  For x ∈ S with a subgradient s of g at x, convexity gives
g(z) ≥ l(z) = g(x) + ⟨s, z − x⟩, and [g(z)]₊ ≥ θ·l(z) for θ ∈ [0, 1]; so for every z ∈ S
and every θ,
P(z) ≥ D(θ) = min_{z ∈ S} (α/2)‖z − y‖₂² + βθ·l(z) = (α/2)‖z_θ − y‖₂² + βθ·l(z_θ), with
z_θ = Π_S(y − (βθ/α)s), and P(x) − min_S P ≤ gap := P(x) − D(θ).  D is concave with
D′(θ) = β·l(z_θ), non-increasing: θ = 0 where l(z₀) ≤ 0, 1 where l(z₁) ≥ 0, else the root
of l(z_θ), by the linear method's safeguarded Newton (``_roots.newton_root``: finite on a
box, simplex or L1 ball, whose projections are piecewise linear).  At the exact minimiser of
a differentiable g the root is its KKT multiplier and the gap is 0: what remains measures the
step's error (by strong convexity ‖x − x_opt‖₂² ≤ 2·gap/α).  At a kink of g the one
subgradient autodiff gives may make the bound loose.

Every θ gives a bound, so θ is found in two stages.  First the multiplier read off x's face
of S (one projection; D is flat at its maximiser, so next to an exact answer this bound is
tight to second order).  The Newton on θ runs only where that bound fails the tolerance: on
a seeds-minor block, for every lane once some lane fails (one ``lax.cond``), each lane
keeping the first bound where it passes, so a run's value never depends on its batch.

Reported: the larger of gap/size and ‖x − Π_S(x)‖₂/D, with
size = P(x) + (α/2)(tol·D)² + round-off/tol: relative to the objective, with the round-off
of l and of z_θ = Π_S(y − (βθ/α)s) (16ε times their terms' sizes) counted as within the
tolerance; ``tolerance`` is that of the comparator's certificate (float64 1e-8, float32 √ε).

``RectifiedBCO`` measures it on rounds t ≡ 0 mod ``certify_every`` (16; 1: every round) and
keeps each run's worst (``Result.prox_certificate``).

Usage, one value per run:
``cert = gap.certificate(domain, xi, constraint, phi, y, alpha, beta, x)``.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import ops
from jaxbco.solvers._base import prox_objective, shrunk_projector
from jaxbco.solvers._roots import newton_root

ROOT_STEPS = 12  # Newton steps on theta at most (a lane stops once its bracket closes)


class ProxWarning(UserWarning):
    """A prox step of some runs failed its certificate: their x_t are not shown to follow
    Eq. (5) (``Result.prox_ok``)."""


def tolerance(dtype) -> float:
    """Every certificate's tolerance, the prox step's here and the comparator's
    (``jaxbco.certificate``): 1e-8 in float64; sqrt(eps) (3.5e-4) in float32, the stationarity
    a float32 minimiser resolves (F is flat to eps within sqrt(eps) of x*, so a first-order
    gap of a float32 minimiser is of that size).

    Example:
        >>> from jaxbco.solvers import gap
        >>> gap.tolerance("float64")
        1e-08
    """
    return 1e-8 if jnp.dtype(dtype).name == "float64" else float(jnp.finfo(dtype).eps) ** 0.5


def certificate(domain, xi, constraint, phi, y, alpha, beta, x, cut=None, refine=True):
    """max(relative duality gap, relative distance from S) of x as the minimiser of P (module
    docstring); one run (x (d,)) or a seeds-minor block (x (d, runs...)), a value per run.

    Args:
      domain, xi: X and the shrink, S = (1-xi)X.  constraint, phi: g and its data.
      y, alpha, beta: P's centre, weight and penalty.  x: the solver's answer.
      cut: (c, s), a cut of g with c + s.(z - x) ≤ g(z) for all z (the solver's
        ``AbstractProxSolver.cut``); None: g(x) and its gradient.
      refine: run the Newton on theta where the first bound fails (static); False: the first
        bound alone, never smaller than the refined one (a program without the Newton: the
        runners run it first, ``needs_refinement``).
    Returns:
      the certificate, ≥ 0; small (below ``tolerance``) when x is P's minimiser.
    """
    x = jax.lax.stop_gradient(x)
    y, alpha, beta = (jax.lax.stop_gradient(v) for v in (y, alpha, beta))
    dtype = x.dtype
    eps = jnp.finfo(dtype).eps
    project = shrunk_projector(domain, xi)
    diam = (1.0 - xi) * domain.diameter()
    gx, s = constraint.value_and_gradient(x, phi) if cut is None else cut
    gx, s = jax.lax.stop_gradient((gx, s))
    s = jnp.where(jnp.isfinite(s), s, 0.0)
    norm_s = jnp.sqrt(ops.inner(s, s))
    weight = beta / alpha
    c, _ = domain.inscribed_ball()
    reach = jnp.sqrt(ops.inner(c, c)) + diam
    upper = jax.lax.stop_gradient(prox_objective(constraint, phi, y, alpha, beta, x))
    off = x - project(x)
    outside = jnp.sqrt(ops.inner(off, off)) / diam

    def h_and_point(theta):
        z = project(y - (weight * theta) * s)
        return gx + ops.inner(s, z - x), z

    def lower(z, theta):  # D(theta), z = z_theta
        r = z - y
        return 0.5 * alpha * ops.inner(r, r) + beta * theta * (gx + ops.inner(s, z - x))

    def relative(best, theta):
        """The certificate of the lower bound ``best`` = D(theta) (or a max of such)."""
        # round-off: of g and l (terms beta theta |s| (|c| + D)), and of z_theta = Pi_S(v),
        # v = y - w theta s (|v| eps each; beta reaches 1e10 late in a run and |v| with it)
        v = y - (weight * theta) * s
        norm_v = jnp.sqrt(ops.inner(v, v))
        # ... and of P(x)'s own penalty beta [g(x)]_+: g(x) on the boundary is round-off,
        # times the full beta (not beta theta), which no answer in this dtype avoids
        roundoff = (
            16
            * eps
            * (
                beta * theta * (jnp.abs(gx) + norm_s * (reach + norm_v))
                + beta * (jnp.abs(gx) + norm_s * reach)
                + alpha * norm_v * (jnp.sqrt(ops.inner(y, y)) + reach)
            )
        )
        size = upper + 0.5 * alpha * (tolerance(dtype) * diam) ** 2 + roundoff / tolerance(dtype)
        gap = jnp.maximum(upper - best, 0.0) / size
        return jnp.where(jnp.isfinite(gap), jnp.maximum(gap, outside), jnp.inf)

    # first guess, the KKT multiplier read off x's face F of S: y - x - w theta s is normal
    # to S at x, so w theta = <T(y - x), T s> / |T s|^2, T the projection onto F's directions
    shrink = 1.0 - xi
    face = lambda v: domain.face(c + (x - c) / shrink, v, jnp.sqrt(eps) * diam / shrink)
    ts, tv = face(s), face(y - x)
    norm_ts = ops.inner(ts, ts)
    guess = ops.inner(tv, ts) / jnp.where(norm_ts > 0, norm_ts, 1.0)
    guess = jnp.clip(guess / jnp.where(weight > 0, weight, 1.0), 0.0, 1.0)
    # D(guess) is a lower bound whatever guess is; D is flat at its maximiser, so next to an
    # exact answer this one projection certifies it.  Newton on theta runs only where it fails.
    quick = relative(lower(h_and_point(guess)[1], guess), guess)
    if not refine:
        return quick

    def newton():
        def h_x_dh(theta):
            (h, z), (dh, _) = jax.jvp(h_and_point, (theta,), (jnp.ones_like(theta),))
            return h, z, dh

        zero = jnp.zeros_like(gx * weight)
        one = zero + 1.0
        h0, z0 = h_and_point(zero)
        h1, z1 = h_and_point(one)
        tol_h = 8 * eps * (norm_s * reach + jnp.abs(gx))
        z_lo, z_hi, t_lo, t_hi = newton_root(
            h_x_dh,
            zero,
            one,
            h0,
            h1,
            z0,
            z1,
            guess,
            ROOT_STEPS,
            tol_h,
            (h0 > 0) & (h1 < 0),
            ends=True,
        )
        d_lo, d_hi = lower(z_lo, t_lo), lower(z_hi, t_hi)
        d0, d1 = lower(z0, zero), lower(z1, one)
        best = jnp.maximum(jnp.maximum(d_lo, d_hi), jnp.maximum(d0, d1))
        theta = jnp.where(d_lo >= d_hi, t_lo, t_hi)
        theta = jnp.where(h0 <= 0, 0.0, jnp.where(h1 >= 0, 1.0, theta))
        return jnp.minimum(quick, relative(best, theta))

    # where some lane fails, Newton for all (a real branch on a seeds-minor block; both sides
    # under vmap); each lane's value is its quick one where that passes: batch-independent
    fails = ~(quick <= tolerance(dtype))
    # (a max, not ``any``: Pallas' Triton lowering, the fused kernel's, has no reduce_or)
    some = jnp.max(jnp.where(fails, 1.0, 0.0)) > 0.0
    full = jax.lax.cond(some, newton, lambda: quick)
    return jnp.where(fails, full, quick)


def needs_refinement(worst, dtype) -> bool:
    """Whether some run's worst first bound (``certificate(..., refine=False)``) fails the
    tolerance: then, and only then, the refined certificate differs, and the runners run the
    rounds again with it (``AbstractAlgorithm.light``); NaN (no prox solve) never does."""
    return bool(np.any(np.asarray(worst, np.float64) > tolerance(dtype)))


def kink_hint(constraint) -> str:
    """For a user's g declared smooth (``CustomConstraint``, the default): the advice to declare
    it ``smooth=False`` where it has kinks, whose steps the smooth method (which assumes a
    gradient) can get wrong."""
    if constraint.flipped() is None or constraint.kind != "smooth":
        return ""
    return (
        f"  {type(constraint).__name__} is declared smooth: if g has kinks (max, abs, a norm "
        f"at its centre), declare smooth=False (cutting planes)."
    )


def report(worst, n_seeds: int, seed_ids, dtype, method: str, failed=None, hint="") -> dict:
    """``Result``'s ``prox_certificate`` (G, S: each run's worst step; NaN for a method without
    a prox solve) and ``prox_ok`` (G, S), with a ``ProxWarning`` naming the runs whose worst
    step failed ``tolerance(dtype)`` and the solver's method (of the runs not ``failed``:
    those are flagged already, their steps up to the non-finite one kept); ``hint``: a
    sentence added to the warning (``kink_hint``)."""
    worst = np.asarray(worst, np.float64)[:, :n_seeds]
    ok = ~(worst > tolerance(dtype))  # NaN (no prox) passes: nothing was solved
    shown = ~ok if failed is None else ~ok & ~np.asarray(failed, bool)
    if shown.any():
        bad = np.argwhere(shown)
        runs = ", ".join(f"(setting {g}, seed {int(np.asarray(seed_ids)[s])})" for g, s in bad[:6])
        warnings.warn(
            f"the prox step (Eq. 5) failed its certificate on {len(bad)} of {ok.size} runs "
            f"{runs}{', ...' if len(bad) > 6 else ''}: worst {worst[shown].max():.2e} (relative duality "
            f"gap or distance from the set; tolerance {tolerance(dtype):.0e}) with the method "
            f"{method}.{hint}  See Result.prox_ok and Result.prox_certificate.",
            ProxWarning,
            stacklevel=3,
        )
    return {"prox_certificate": worst, "prox_ok": ok}
