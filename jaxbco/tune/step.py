"""The compiled tuning step: one optax step on z with the gradient of the objective taken
through whole runs (forward or reverse mode), and what one step costs in full runs.

Cost, counted in full runs (one seed x one setting x T rounds): a value-only run is 1; a
forward-mode gradient of k free parameters is k + 1 (one primal and k tangent streams, each
about as costly as the primal); a reverse-mode gradient is 3 (forward + a backward of about
twice the work), 4 with the step recomputed by ``jax.checkpoint``.  These are the usual cost
models, not measurements; ``measure_cost`` (``jaxbco.tune.cost``) measures them
(quadratic-ball, k = 3, CPU: forward 2.3, reverse 1.3 value-only runs per seed; see
docs/tuning.md).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from jaxbco.tune.objective import _Context, make_objective

FORWARD, REVERSE = "forward", "reverse"
REVERSE_COST, REMAT_EXTRA = 3, 1


def _compiled_gradient(ctx: _Context, mode, smoothing, remat, ids):
    """The compiled ``grad(z, mu, ids) -> (every seed's dL/dz (S, k), (R_T/T, V_T, failed)
    per seed)`` and the full runs per seed of one call.

    Forward mode is the Jacobian of the seeds' L (one primal and k tangent streams, whatever
    S); reverse mode maps ``jax.value_and_grad`` of one seed's L over the seeds (one backward
    pass per seed, as a gradient of the mean would cost)."""
    space = ctx.space
    if mode not in (FORWARD, REVERSE):
        raise ValueError(f"mode must be 'forward' or 'reverse'; got {mode!r}")
    objective = make_objective(
        ctx.problem,
        ctx.horizon,
        space,
        algorithm=ctx.algorithm,
        kappa=ctx.kappa,
        key=ctx.master,
        dtype=ctx.dtype,
        smoothing=smoothing,
        remat=remat and mode == REVERSE,
        comparator=ctx.comparator,
    )
    per_seed = objective.per_seed
    if mode == FORWARD:  # one primal + k tangent streams; memory independent of T
        grad_fn = jax.jacfwd(per_seed, has_aux=True)
        runs_per_seed = space.k + 1
    else:  # residuals of every round are stored: memory grows with T

        def one(z, mu, i):
            def scalar(z):
                L, aux = per_seed(z, mu, i[None])
                return L[0], jax.tree_util.tree_map(lambda a: a[0], aux)

            (_, aux), g = jax.value_and_grad(scalar, has_aux=True)(z)
            return g, aux

        grad_fn = jax.vmap(one, in_axes=(None, None, 0))
        runs_per_seed = REVERSE_COST + (REMAT_EXTRA if remat else 0)
    z = jnp.asarray(space.start(ctx.init), ctx.dtype)
    mu = jnp.asarray(ctx.kappa, ctx.dtype)
    compiled = (
        jax.jit(grad_fn, compiler_options=objective.compiler_options)
        .lower(z, mu, jnp.asarray(ids, jnp.uint32))
        .compile()
    )
    return compiled, runs_per_seed


def _compiled_update(optimizer, z):
    """The compiled optax step ``update(z, opt_state, g) -> (z, opt_state)`` (non-finite
    components of g: no move) and the starting state."""

    def update(z, opt_state, g):
        g = jnp.where(jnp.isfinite(g), g, 0.0)
        updates, opt_state = optimizer.update(g, opt_state, z)
        return optax.apply_updates(z, updates), opt_state

    opt_state = optimizer.init(z)
    compiled = jax.jit(update).lower(z, opt_state, jnp.zeros_like(z)).compile()
    return compiled, opt_state


def _compiled_step(ctx: _Context, mode, optimizer, smoothing, remat, ids):
    """One pathwise step as a function (for ``measure_cost``): ``step(z, opt_state, mu, ids)
    -> (z, opt_state, dL/dz)``, the starting (z, opt_state, mu) and the runs per seed."""
    grad, runs_per_seed = _compiled_gradient(ctx, mode, smoothing, remat, ids)
    z = jnp.asarray(ctx.space.start(ctx.init), ctx.dtype)
    update, opt_state = _compiled_update(optimizer, z)

    def step(z, opt_state, mu, ids):
        grads, (_, _, failed) = grad(z, mu, ids)
        g = mean_gradient(grads, failed)
        z, opt_state = update(z, opt_state, g)
        return z, opt_state, g

    return step, z, opt_state, jnp.asarray(ctx.kappa, ctx.dtype), runs_per_seed


def mean_gradient(grads, failed):
    """The mean of the kept seeds' gradients (zeros when every seed failed)."""
    ok = ~jnp.asarray(failed)
    n = jnp.maximum(jnp.sum(ok), 1)
    return jnp.sum(jnp.where(ok[:, None], grads, 0.0), axis=0) / n


def default_optimizer(steps: int, lr: float = 0.3) -> optax.GradientTransformation:
    """Adam on z with a cosine-decayed learning rate, ``lr`` -> ``lr`` / 10 over ``steps``."""
    return optax.adam(optax.cosine_decay_schedule(lr, steps, alpha=0.1))
