"""Curved cuts: the strong convexity of F and of a fixed quadratic g in the comparator's
duality bound (``jaxbco.certificate``, ``jaxbco.offline.one_cut``).

A linear cut bounds F(y) ≥ a + s·(y − x); with F σ-strongly convex (a ``Quadratic`` loss, the
cut taken at x itself) F(y) ≥ a + s·(y − x) + (σ/2)|y − x|², and likewise a quadratic
g(y) = (y − q)ᵀP(y − q) − s gains (m/2)|y − x|², m = 2 λ_min(P).  With weights ω in the
simplex over F's cuts and μ ≥ 0 over the constraints' unit cuts, v = Sᵀω + Qᵀμ and
κ = σ + Σ μ_k m_k / |q_k|, every feasible y gives

    F(y) ≥ Σ ω_j a_j + Σ μ_k c_k + v·(y − x) + (κ/2)|y − x|²,

whose minimum over y ∈ X is at y = Π_X(x − v/κ), so

    F(x) − F* ≤ Σ ω_j (F(x) − a_j) − Σ μ_k c_k − min_y∈X [v·(y − x) + (κ/2)|y − x|²].

The last term is at most |v|² / (2κ).  The linear bound pays σ_X(−v) + v·x instead, of order
|v| D: a residual of v (x*'s own error, or round-off) times X's diameter, which exceeds the
tolerance in float32 when X is far larger than the feasible region, and is first order in
x*'s error where F's error is second order.  The certificate keeps the smaller.

A user's ``CustomLoss(sigma=...)`` is not used: its modulus is declared, not checked, and a
bound must not rest on it.

Example:
    >>> from jaxbco import problems
    >>> from jaxbco.offline import curved
    >>> float(curved.loss_modulus(problems.make("quadratic-ball", dim=3)))
    2.0
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco import constraints as C
from jaxbco.draws import CONSTRAINT, sample


def loss_modulus(problem):
    """σ of F for a built-in smooth loss (its cut at x alone); 0 for a user's loss or one with
    kinks (its cuts are taken beside x, where the curvature about x does not hold)."""
    loss = problem.loss
    if loss.probe_convexity or not loss.smooth:
        return jnp.zeros(())
    return jnp.maximum(jnp.asarray(loss.strong_convexity()), 0.0)


def constraint_modulus(problem, seed_key, rounds, dtype):
    """(K,): for each constraint cut, 2 λ_min(P_t) of its round's quadratic g_t (a ``Ball``, an
    ``Ellipsoid``, a shift of one; ``rounds`` (K,) the cuts' rounds, from
    ``cuts.constraint_cuts``); 0 for every other constraint."""
    fam, data = problem.constraint, problem.constraint_data
    if C.unshifted(fam).quadratic_form is None:
        return jnp.zeros(rounds.shape, dtype)

    def modulus(phi):
        P = jnp.asarray(fam.quadratic(phi)[0], dtype)
        return jnp.maximum(2.0 * jnp.linalg.eigvalsh(0.5 * (P + P.T))[0], 0.0)

    if data.constant:
        return jnp.full(rounds.shape, modulus(data.every_round()))
    return jax.vmap(lambda t: modulus(sample(data, seed_key, t, CONSTRAINT)))(rounds)


def bound(domain, x, v, kappa):
    """−min over y ∈ X of v·(y − x) + (κ/2)|y − x|², at y = Π_X(x − v/κ) (X's exact
    projection): the curved cuts' term (module docstring), at most |v|² / (2κ); inf where κ is
    not positive."""
    ok = kappa > 0
    k = jnp.where(ok, kappa, 1.0)
    step = domain.project(x - v / k) - x
    return jnp.where(ok, -(jnp.dot(v, step) + 0.5 * k * jnp.dot(step, step)), jnp.inf)
