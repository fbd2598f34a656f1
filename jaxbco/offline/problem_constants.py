"""A problem's constants, as the theorems' step sizes use them: F, G, D and a value bound.

    F = max_t Lip(f_t) over X,   G = max_t Lip(g_t) over X,   D = diam X,   C >= max_t |f_t(x)| on X

F and G: the maximum over the rounds of the loss's and constraint's ``lipschitz`` bounds on a
ball about 0 that contains X (``outer_radius``), or of sampled gradient norms at points of X
when a family has no bound; the rounds are every one of replayed data, else up to ``rounds``
evenly spaced ones of seeds 0..``seeds``-1 with the engine's keys (random data: an estimate).
C = max_t |f_t(c)| + F max_{x in X} ||x - c|| with c the inscribed-ball centre.  Used by the
baselines' ``default_hyper`` and by ``jaxbco.compare``'s theorem bounds.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks
from jaxbco.draws import CONSTRAINT, LOSS, sample
from jaxbco.keys import seed_keys


def outer_radius(domain) -> float:
    """max_{x in X} ||x||: the radius of a ball about 0 containing X (for ``lipschitz``)."""
    if domain.form == "l2-ball":
        return float(np.linalg.norm(np.asarray(domain.center)) + float(domain.radius))
    if domain.form == "box":
        return float(
            np.linalg.norm(
                np.maximum(np.abs(np.asarray(domain.lower)), np.abs(np.asarray(domain.upper)))
            )
        )
    if domain.form == "simplex":
        return float(domain.total)
    c, _ = domain.inscribed_ball()
    return float(np.linalg.norm(np.asarray(c)) + float(domain.diameter()))


def _round_data(seq, horizon, stream, seeds, rounds=20000):
    """The data of rounds 1..T (at most ``rounds`` evenly spaced ones) for seeds 0..seeds-1, with
    the run's draws (``jaxbco.draws``: stream LOSS or CONSTRAINT); leading axis seeds x rounds."""
    table = seq.recorded(horizon)
    if table is not None:  # a fixed, replayed or cycled sequence: its rounds' own data
        return table
    ts = np.unique(np.linspace(1, horizon, min(horizon, rounds)).astype(np.int32))
    keys = seed_keys(checks.threefry_key(0), jnp.arange(seeds))
    data = _draw(seq, keys, jnp.asarray(ts), stream)
    return jax.tree_util.tree_map(lambda v: v.reshape((-1,) + v.shape[2:]), data)


@eqx.filter_jit  # one program (op by op, the key hashes alone compiled dozens of small ones)
def _draw(seq, keys, ts, stream: int):
    """``seq``'s data at rounds ``ts`` for each seed key, (seeds, rounds, ...)."""
    return jax.vmap(lambda k: jax.vmap(lambda t: sample(seq, k, t, stream))(ts))(keys)


def _sampled_gradient_norm(fn, data, domain, n_points=64):
    """max ||grad_x fn(x, data_i)|| over points of X (projected Gaussians) and the data."""
    c, _ = domain.inscribed_ball()
    z = jax.random.normal(checks.threefry_key(1), (n_points, c.shape[0]), c.dtype)
    pts = jax.vmap(domain.project)(c + float(domain.diameter()) * z)
    grad = jax.grad(fn)
    norms = jax.vmap(lambda d: jax.vmap(lambda x: jnp.linalg.norm(grad(x, d)))(pts))(data)
    return float(jnp.max(norms))


def _lipschitz(family, what: str, data, domain, radius):
    """(max over the rounds' data of the family's Lipschitz bound, how it was obtained)."""
    try:
        return float(
            np.max(jax.vmap(lambda v: family.lipschitz(v, radius))(data))
        ), f"{what}.lipschitz"
    except NotImplementedError:
        return _sampled_gradient_norm(family.value, data, domain), "sampled gradients"


def problem_constants(problem, horizon: int, *, seeds: int = 4, rounds: int = 20000) -> dict:
    """{"F", "G", "D", "C", "radius", "F_from", "G_from"} of ``problem`` over T = ``horizon``
    rounds (see the module docstring)."""
    radius = outer_radius(problem.domain)
    theta = _round_data(problem.loss_data, horizon, LOSS, seeds, rounds)
    phi = _round_data(problem.constraint_data, horizon, CONSTRAINT, seeds, rounds)
    F, f_how = _lipschitz(problem.loss, "loss", theta, problem.domain, radius)
    G, g_how = _lipschitz(problem.constraint, "constraint", phi, problem.domain, radius)
    c, _ = problem.domain.inscribed_ball()
    f_c = float(np.max(np.abs(jax.vmap(lambda th: problem.loss.value(c, th))(theta))))
    reach = float(np.linalg.norm(np.asarray(c))) + radius  # >= max_{x in X} ||x - c||
    return dict(
        F=F,
        G=G,
        D=float(problem.domain.diameter()),
        C=f_c + F * reach,
        radius=radius,
        F_from=f_how,
        G_from=g_how,
    )
