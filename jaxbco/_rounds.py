"""Sums over a seed's rounds, the data regenerated from the round keys (nothing of size T is
stored): the offline comparator and its certificate read a seed's T rounds this way."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco.keys import for_component, round_keys


def round_data(problem, seed_key, t):
    """(theta_t, phi_t): round t's loss and constraint data, as the run drew them."""
    kl, _, kc = round_keys(seed_key, t)
    theta = problem.loss_data.sample(for_component(problem.loss_data, kl), t)
    phi = problem.constraint_data.sample(for_component(problem.constraint_data, kc), t)
    return theta, phi


def mean_over_rounds(problem, seed_key, horizon: int, fn):
    """(1/T) sum_t fn(theta_t), regenerating theta_t from the round keys (the sums start at
    zeros of fn's shapes)."""

    def data(t):
        kl, _, _ = round_keys(seed_key, t)
        return problem.loss_data.sample(for_component(problem.loss_data, kl), t)

    def body(acc, t):
        return jax.tree_util.tree_map(jnp.add, acc, fn(data(t))), None

    ts = jnp.arange(1, horizon + 1, dtype=jnp.int32)
    shapes = jax.eval_shape(lambda: fn(data(ts[0])))
    zeros = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), shapes)
    acc, _ = jax.lax.scan(body, zeros, ts)
    return jax.tree_util.tree_map(lambda a: a / horizon, acc)
