"""x* of a smooth loss, or of the absolute loss's Huber smoothing, by FISTA: accelerated
projected gradient with adaptive restart on the mean loss F = (1/T) sum_t f_t, each gradient a
pass over the rounds (Beck & Teboulle 2009).

The step is 1/L, L the loss's curvature bound for Huber's loss; for any other loss (a
user's, with or without a bound) the bound is a first guess, doubled by backtracking wherever
a step shows it too small, so a missing or wrong bound still gives x*.  The absolute loss
(``offline = "smoothed"``) runs on Huber's smoothing with a width falling from D / 10 to
1e-6 D over ``_STAGES`` stages, each restarted from the last (a continuation; one width of
1e-6 D throughout left an L1 ball's x* 3e-3 above F*, beyond what the local linear programmes
of ``jaxbco.offline.absolute`` mend).  A kink where autodiff's gradient is not finite takes the
gradient a step eps^(3/4) D beside it, a subgradient to that accuracy.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco._src import ops
from jaxbco.offline.round_sums import mean_over_rounds

#: FISTA steps at most on a smooth mean loss (each a pass over the rounds' data).
STEPS = 400
#: FISTA steps at most on the Huber smoothing of |.| (curvature 1/kappa, up to 1e6 / D).
STEPS_NONSMOOTH = 4000
_STAGES = 6  # of that smoothing's continuation, kappa = D / 10 .. 1e-6 D


def solve(problem, seed_key, horizon: int, project, c) -> jax.Array:
    """x* = argmin over X n C of F by FISTA (module docstring), from project(c).

    Args:
        problem: the ``Problem``; seed_key, horizon: the seed's rounds.
        project: z -> Pi_{X n C}(z), for z of c's shape.
        c: X's centre, (d,) or (d, runs...) (a ``KeyBlock``'s runs).

    Returns:
        x*, of c's shape.
    """
    domain, loss = problem.domain, problem.loss
    dtype = c.dtype
    smoothed = loss.offline == "smoothed"
    steps = STEPS_NONSMOOTH if smoothed else STEPS
    per_stage = steps // _STAGES
    if smoothed:
        # continuation: the smoothing width falls from D / 10 to 1e-6 D over _STAGES stages of
        # FISTA, each restarted from the last (one width of 1e-6 D throughout left an L1 ball's
        # x* 3e-3 above F*, beyond what the local LPs below mend)
        width = lambda i: (
            domain.diameter()
            * 10.0 ** (-1.0 - 5.0 * jnp.minimum(i // per_stage, _STAGES - 1) / (_STAGES - 1))
        )
        value_at = lambda i: lambda x, th: loss.smoothed(width(i)).value(x, th)
        lip = jnp.zeros(())  # 1 / width(i), set in each step
    else:
        value = loss.value
        lip = mean_over_rounds(
            problem, seed_key, horizon, lambda th: jnp.broadcast_to(loss.curvature(th), c.shape[1:])
        )
        lip = jnp.where(jnp.isfinite(lip) & (lip > 0), lip, 1.0)
    lip = jnp.maximum(
        jnp.asarray(lip, dtype), jnp.finfo(dtype).tiny
    )  # a user's bound: the run's dtype
    # jaxbco's Huber (and the smoothing of |.|) know their curvature; any other loss's bound
    # (a user's, or none) is only a first guess, raised by backtracking where a step shows it
    # too small (Beck & Teboulle 2009's FISTA with backtracking).
    backtrack = not (loss.exact_curvature or smoothed)
    mean = lambda fn, x: mean_over_rounds(problem, seed_key, horizon, lambda th: fn(x, th))
    # one value per run: a VJP with cotangent 1 (one run or a block alike)
    nudge = jnp.finfo(dtype).eps ** 0.75 * domain.diameter() * jnp.ones(c.shape[:1], dtype)

    def round_value_grad(z, th, value):
        """f_t's value and gradient at z; at a kink where autodiff gives a non-finite gradient
        (|| z - theta || at z = theta), the gradient a step eps^(3/4) D beside it, a
        subgradient to that accuracy."""
        f, g = ops.value_and_grad(lambda v: value(v, th), z)
        bad = ~jnp.all(jnp.isfinite(g), axis=0)
        side = ops.value_and_grad(
            lambda v: value(v, th), z + nudge.reshape(nudge.shape + (1,) * (z.ndim - 1))
        )[1]
        return f, jnp.where(bad, side, g)

    tiny_tol = 64 * jnp.finfo(dtype).eps

    def step(z, lip, value):
        """x_new = Pi(z - grad F(z) / L), with L doubled until F(x_new) <= the model's bound."""
        fz, gz = mean(lambda x, th: round_value_grad(x, th, value), z)
        trial = lambda L_: project(z - gz / L_)
        if not backtrack:
            return trial(lip), lip

        def short(x_new, L_):  # the quadratic upper model at z with curvature L fails at x_new
            d = x_new - z
            model = fz + ops.inner(gz, d) + 0.5 * L_ * ops.inner(d, d)
            return mean(value, x_new) > model + tiny_tol * (jnp.abs(fz) + jnp.abs(model))

        def grow(c):  # lanes whose step was too long double their L (the others are frozen)
            x_new, L_, k, bad = c
            L_ = jnp.where(bad, 2.0 * L_, L_)
            x_new = jnp.where(bad, trial(L_), x_new)
            return x_new, L_, k + 1, bad & short(x_new, L_)

        x_first = trial(lip)
        x_new, lip, _, _ = jax.lax.while_loop(
            lambda c: jnp.any(c[3]) & (c[2] < 60), grow, (x_first, lip, 0, short(x_first, lip))
        )
        return x_new, lip

    def body(i, carry):
        x, z, tk, lip = carry
        if smoothed:
            x_new, _ = step(z, 1.0 / width(i), value_at(i))
        else:
            x_new, lip = step(z, lip, value)
        t_new = 0.5 * (1.0 + jnp.sqrt(1.0 + 4.0 * tk * tk))
        z_new = x_new + ((tk - 1.0) / t_new) * (x_new - x)
        restart = ops.inner(z - x_new, x_new - x) > 0
        if smoothed:  # and at each stage's end
            restart = restart | ((i + 1) % per_stage == 0)
        return (x_new, jnp.where(restart, x_new, z_new), jnp.where(restart, one, t_new), lip)

    one = jnp.ones(c.shape[1:], dtype)
    x0 = project(c)
    x, _, _, _ = jax.lax.fori_loop(0, steps, body, (x0, x0, one, lip))
    return x
