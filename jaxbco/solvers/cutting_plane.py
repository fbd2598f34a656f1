"""Eq. (5) of Hikima (2023) for a g with kinks, or for many linear rows: a proximal bundle
(cutting-plane) loop over the exact small polyhedral dual.

The problem is P(x) = (α/2)‖x − y‖₂² + β[h(x)]₊ over S = (1 − ξ)X, with h convex and known
through an oracle giving, at x, h(x) and a cut ⟨a, z⟩ − b ≤ h(z) for every z, tight at x (a
subgradient of a kinked g: ``CustomConstraint(smooth=False)``; the most violated row of many:
``rows_oracle``).  The model m(z) = maxₖ (⟨aₖ, z⟩ − bₖ) over a bundle of ``KEEP`` cuts lies
below h, so P_m ≤ P; the model problem is solved exactly by the polyhedral dual Newton
(``PolyhedralDual.newton``, m = ``KEEP`` rows, inactive slots padded with ⟨0, z⟩ − 1).  At its
solution x_m:

* if [h(x_m)]₊ = [m(x_m)]₊ (to round-off), x_m minimises P, since
  P(x_m) = P_m(x_m) ≤ P_m(z) ≤ P(z): stop;
* else add the cut at x_m: into a slot whose multiplier is 0, or, when every cut carries a
  multiplier, after merging the bundle into its multiplier-weighted aggregate cut (itself
  below h), the proximal bundle method's aggregation (Kiwiel 1985), which keeps convergence.

The returned certificate is β([h(x)]₊ − [m(x)]₊) ≥ P(x) − min P (a model gap).

A kink makes autodiff's gradient at the kink one subgradient of it (or NaN, e.g. a norm at
its centre: then the gradient at a point ε^(3/4)·D beside it, a subgradient to that
accuracy).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbco.solvers._base import AbstractProxSolver, shrunk_projector
from jaxbco.solvers.gap import tolerance
from jaxbco.solvers.polyhedral import PolyhedralDual

KEEP = 5  # cuts in the bundle: the exact dual Newton enumerates 2^(KEEP+1) faces
# bundle steps running whose h - m, within 64 eps of its terms, does not halve: the model is
# then exact to round-off (64 eps alone stopped a float32 norm ball's prox 3.4e-3 above min P,
# beta = 40 times that slack against P = 0.11)
_STALLS = 3


def function_oracle(fn, nudge):
    """The oracle of a convex function ``fn`` (one run): h(x) and the cut at x from its
    gradient (beside x where autodiff's gradient is not finite)."""

    def oracle(x):
        h, a = jax.value_and_grad(fn)(x)
        side = jax.grad(fn)(x + nudge)
        a = jnp.where(jnp.all(jnp.isfinite(a)), a, side)
        return h, a, jnp.dot(a, x) - h

    return oracle


def rows_oracle(A, b):
    """The oracle of h(x) = max_i (A x - b)_i: its most violated row at x."""

    def oracle(x):
        r = A @ x - b
        i = jnp.argmax(r)
        return r[i], A[i], b[i]

    return oracle


def bundle_solve(domain, xi, oracle, y, alpha, beta, steps: int, newton_steps: int = 60):
    """(x, gap, cut): argmin_S P by the proximal bundle loop (module docstring), one run
    (y (d,)); ``gap`` = beta ([h(x)]_+ - [m(x)]_+), the bound on P(x) - min P; ``cut`` =
    (a, b), the final model's cuts averaged with its multipliers' weights (a.z - b ≤ h(z),
    the step's certificate's cut, ``solvers.gap``), (0, 1) where no cut carries one."""
    dtype, d = y.dtype, y.shape[0]
    eps = jnp.finfo(dtype).eps
    newton = PolyhedralDual(newton_steps=newton_steps, exact_rows=KEEP).newton
    project = shrunk_projector(domain, xi)

    def model_solve(A, b, nu):
        return newton(domain, xi, A, b, y, alpha, beta, nu_start=nu, stationary_stop=True)

    def kept(a, b):  # a cut as it is (not rescaled: beta weighs h's own scale), a zero
        ok = jnp.any(a != 0)  # normal an always-slack row
        return a, jnp.where(ok, b, jnp.maximum(b, 1.0))

    def tight(x, A, b, last, stalls):
        """(done, beta gap, cut, h - m, stalls): the model is exact at x to round-off (h - m
        within 4 eps of its terms, or within 64 eps and not halved from ``last`` for
        ``_STALLS`` steps running), or its gap is a sixteenth of the step certificate's
        tolerance relative to P(x) (``gap.tolerance``)."""
        h, a, c = oracle(x)
        m = jnp.max(A @ x - b)
        terms = eps * (jnp.sqrt(a @ a) * (1.0 + jnp.max(jnp.abs(x))) + jnp.abs(h))
        gap = jnp.maximum(h, 0.0) - jnp.maximum(m, 0.0)
        stalls = jnp.where((gap <= 64 * terms) & (gap > 0.5 * last), stalls + 1, 0)
        P = 0.5 * alpha * jnp.sum((x - y) ** 2) + beta * jnp.maximum(h, 0.0)
        close = beta * gap <= tolerance(dtype) / 16 * P
        done = (gap <= 4 * terms) | (stalls >= _STALLS) | (h <= 0) | close
        return done, beta * jnp.maximum(gap, 0.0), (a, c), gap, stalls

    A0 = jnp.zeros((KEEP, d), dtype)
    b0 = jnp.ones((KEEP,), dtype)
    nu0 = jnp.zeros((KEEP,), dtype)
    x0 = project(y)

    def body(carry):
        x, A, b, nu, k, done, gap, last, stalls, cut = carry
        a, c = kept(*cut)  # the oracle's cut at x, from the step that found x
        full = jnp.min(nu) > 0
        # every cut carries a multiplier: merge them into their aggregate cut first
        w = nu / jnp.maximum(jnp.sum(nu), jnp.finfo(dtype).tiny)
        agg_a, agg_b = w @ A, jnp.dot(w, b)
        A = jnp.where(full, A0.at[0].set(agg_a), A)
        b = jnp.where(full, b0.at[0].set(agg_b), b)
        nu = jnp.where(full, nu0.at[0].set(jnp.sum(nu)), nu)
        slot = jnp.argmin(nu)  # a slot without a multiplier (the aggregate keeps slot 0)
        A, b = A.at[slot].set(a), b.at[slot].set(c)
        x_new, nu = model_solve(A, b, nu)
        done_new, gap_new, cut, last, stalls = tight(x_new, A, b, last, stalls)
        return x_new, A, b, nu, k + 1, done_new, gap_new, last, stalls, cut

    zero = jnp.zeros((), jnp.int32)
    done0, gap0, cut0, last0, _ = tight(x0, A0, b0, jnp.asarray(jnp.inf, dtype), zero)
    start = (x0, A0, b0, nu0, zero, done0, gap0, last0, zero, cut0)
    x, A, b, nu, _, _, gap, _, _, _ = jax.lax.while_loop(
        lambda c: (c[4] < steps) & ~c[5], body, start
    )
    w = nu / jnp.maximum(jnp.sum(nu), jnp.finfo(dtype).tiny)
    return x, gap, (w @ A, jnp.dot(w, b))


class CuttingPlane(AbstractProxSolver):
    """Eq. (5) for a convex g with kinks (a ``CustomConstraint(smooth=False)``, or a
    ``Shifted`` of one), one run at a time: ``bundle_solve`` with g's own oracle.
    ``bundle_steps``: bundle iterations at most."""

    name = "cutting planes: proximal bundle over the exact polyhedral dual"
    bundle_steps: int = eqx.field(static=True, default=200)

    def solve(self, domain, xi, constraint, phi, x0, y, alpha, beta):
        return self.solve_warm(domain, xi, constraint, phi, x0, y, alpha, beta, ())[0]

    def init_warm(self, problem, dtype):
        """The last step's aggregate cut (``bundle_solve``), for its certificate only."""
        return (jnp.zeros(problem.dim, dtype), jnp.ones((), dtype))

    def solve_warm(self, domain, xi, constraint, phi, x0, y, alpha, beta, warm):
        if y.ndim != 1:
            raise NotImplementedError("CuttingPlane solves one run at a time (the vmap back-end)")
        nudge = jnp.finfo(y.dtype).eps ** 0.75 * domain.diameter().astype(y.dtype)
        oracle = function_oracle(lambda z: constraint.value(z, phi), nudge * jnp.ones_like(y))
        x, _, cut = bundle_solve(domain, xi, oracle, y, alpha, beta, self.bundle_steps)
        return x, cut

    def cut(self, domain, constraint, phi, x, warm):
        """The final model's aggregate cut (below g) where its multipliers are not all 0,
        else g(x) and a subgradient."""
        value, grad = constraint.value_and_gradient(x, phi)
        a, b = warm
        some = jnp.any(a != 0)
        return jnp.where(some, jnp.dot(a, x) - b, value), jnp.where(some, a, grad)
