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


def _compiled_step(ctx: _Context, mode, optimizer, smoothing, remat, ids):
    """The compiled ``step(z, opt_state, mu, ids) -> (z, opt_state, (J, L, R/T, V_T, failed,
    dL/dz))``, the starting (z, opt_state, mu) and the full runs per seed of one step."""
    space, T = ctx.space, ctx.horizon
    if mode not in (FORWARD, REVERSE):
        raise ValueError(f"mode must be 'forward' or 'reverse'; got {mode!r}")
    objective = make_objective(
        ctx.problem,
        T,
        space,
        algorithm=ctx.algorithm,
        kappa=ctx.kappa,
        key=ctx.master,
        dtype=ctx.dtype,
        smoothing=smoothing,
        remat=remat and mode == REVERSE,
        comparator=ctx.comparator,
    )
    if mode == FORWARD:  # one primal + k tangent streams; memory independent of T
        grad_fn = lambda z, mu, ids: jax.jacfwd(objective, has_aux=True)(z, mu, ids)
        runs_per_seed = space.k + 1
    else:  # residuals of every round are stored: memory grows with T

        def grad_fn(z, mu, ids):
            (_, aux), g = jax.value_and_grad(objective, has_aux=True)(z, mu, ids)
            return g, aux

        runs_per_seed = REVERSE_COST + (REMAT_EXTRA if remat else 0)

    def step(z, opt_state, mu, ids):
        g, (J, r, v, failed) = grad_fn(z, mu, ids)
        L = r + mu * v / T
        g = jnp.where(jnp.isfinite(g), g, 0.0)  # all seeds failed: no move
        updates, opt_state = optimizer.update(g, opt_state, z)
        return optax.apply_updates(z, updates), opt_state, (J, L, r, v, failed, g)

    z = jnp.asarray(space.start(ctx.init), ctx.dtype)
    opt_state = optimizer.init(z)
    mu = jnp.asarray(ctx.kappa, ctx.dtype)
    ids = jnp.asarray(ids, jnp.uint32)
    compiled = (
        jax.jit(step, compiler_options=objective.compiler_options)
        .lower(z, opt_state, mu, ids)
        .compile()
    )
    return compiled, z, opt_state, mu, runs_per_seed


def default_optimizer(steps: int, lr: float = 0.3) -> optax.GradientTransformation:
    """Adam on z with a cosine-decayed learning rate, ``lr`` -> ``lr`` / 10 over ``steps``."""
    return optax.adam(optax.cosine_decay_schedule(lr, steps, alpha=0.1))
