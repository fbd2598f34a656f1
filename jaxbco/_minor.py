"""Seeds as the minor axis: the engine's fast layout for problems whose code allows it.

Under ``vmap`` a run's vectors live in (grid, seeds, d) arrays, and XLA's CPU code loops with
the short coordinate axis d innermost: every reduction over d is a horizontal sum of d lanes
(d = 10 on the throughput workload).  Laid out (d, grid, seeds) instead, the same reduction is
d vector adds across seeds (2.4x on the bare subgradient loop, benchmarks/NOTES.md).  ``vmap``
cannot give that layout (JAX moves batch axes to the front wherever shapes differ), so for the
components below the engine calls the per-run code directly on seeds-minor blocks:

    vectors (d, R),   per-run scalars and hyperparameters (R,),   the problem's arrays (d, 1),

over the R = G x S runs (a seed's data repeated over the grid), which broadcasting lines up
(a separate unit grid axis, (d, 1, S), measured 3.5x slower on XLA's CPU backend), with
every reduction over d taken over the leading axis (``jaxbco._ops.inner``).  A component
qualifies when its per-run code is written that way; ``applies`` lists them (Algorithm 1 with
the ``Dual`` closed form on a ball with one halfspace or with ``Subgradient``; quadratic or
linear losses with i.i.d. normal or fixed data; a fixed linear constraint).  Everything else
runs under ``vmap``.  The carry keeps the usual (G, S, ...) layout between chunks (transposed
once per chunk, not per round), so resume, sharding and results do not depend on the layout;
a seed's numbers still depend only on its key (the random bits are ``jax.random.bits``' own,
computed by ``jaxbco._random``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco import _normal, _ops, _random

BATCH = 1  # trailing batch axes of a block: the runs, grid-major (run g * S + s)
BLOCK = 8  # rounds drawn at once (measured best of 4-100 on the throughput workload)


def applies(problem, algorithm, directions=None) -> bool:
    """Whether the engine may run ``algorithm`` on ``problem`` seeds-minor (a static test)."""
    from jaxbco import constraints as C
    from jaxbco import losses as L
    from jaxbco import sequences as Seq
    from jaxbco.algorithms import RectifiedBCO
    from jaxbco.sets import L2Ball
    from jaxbco.solvers import BallHalfspace, Dual, Subgradient

    if directions is not None or type(algorithm) is not RectifiedBCO:
        return False
    if not (type(problem.domain) is L2Ball and type(problem.loss) in (L.Quadratic, L.Linear)
            and type(problem.loss_data) in (Seq.IIDNormal, Seq.Fixed)
            and type(problem.constraint) is C.Linear and type(problem.constraint_data) is Seq.Fixed):
        return False
    solver = algorithm.solver
    return type(solver) is Subgradient or (
        type(solver) is Dual and Dual.method(problem.domain, problem.constraint) is BallHalfspace)


def round_key_words(k0, k1, t, stream: int):
    """Key data words of ``fold_in(fold_in(seed_key, t), stream)`` for seed keys with data
    words ``k0``, ``k1`` (S,): ``jaxbco.keys``' round streams, bitwise, without ``vmap``."""
    r0, r1 = _random.fold_in_words(k0, k1, t)
    return _random.fold_in_words(r0, r1, stream)


def normal_block(k0, k1, d: int, dtype):
    """(..., d, S) standard normals, ``jaxbco._normal.normal(key, (d,))`` of each key, for key
    words (..., S) (a leading axis: several rounds at once)."""
    width = 32 if jnp.dtype(dtype) == jnp.float32 else 64
    return _normal.normal_from_bits(_random.bits_words(k0, k1, (d,), width), dtype)


def draw_rounds(problem, k0, k1, ts, dtype):
    """theta_t and u_t of the rounds ``ts`` (B,) for every seed, each (B, d, S): one hash over
    the whole (B, d, S) grid (large enough for XLA to split across cores), computed once."""
    t = ts[:, None]
    theta = sample_block(problem.loss_data, *round_key_words(k0, k1, t, 0))
    u = direction_block(problem.domain, *round_key_words(k0, k1, t, 1), dtype)
    return jax.lax.optimization_barrier((theta, u))


def sample_block(sequence, k0, k1):
    """A seed's data of this round for every seed, (..., d, S): ``IIDNormal.sample`` or
    ``Fixed.sample`` (the two sequences ``applies`` admits), the same values."""
    from jaxbco import sequences as Seq

    if isinstance(sequence, Seq.Fixed):
        shape = k0.shape[:-1] + sequence.value.shape + k0.shape[-1:]
        return jnp.broadcast_to(sequence.value[:, None], shape)
    z = normal_block(k0, k1, sequence.mean.shape[0], sequence.mean.dtype)
    return sequence.mean[:, None] + sequence.std[..., None] * z


def direction_block(domain, k0, k1, dtype):
    """u_t for every seed, (..., d, S): ``L2Ball.sample_direction`` (a normalised normal vector)."""
    z = normal_block(k0, k1, domain.dim, dtype)
    return z / jnp.sqrt(jnp.expand_dims(_ops.sum_axis(z * z, -2), -2))


def over_runs(per_run, problem, hyper, x_star, n_grid: int, n_seeds: int, record_decisions: bool):
    """``per_run`` on blocks over the R = G S runs (run g * S + s): vectors (d, R), per-run
    scalars and hyperparameters (R,); a seed's data repeated over the grid (common random
    numbers).  The function the engine's round calls with the (S,)-batched draws."""
    runs = lambda a: jnp.tile(a, (1,) * (a.ndim - 1) + (n_grid,))  # (..., S) -> (..., R)
    hyper_b = jax.tree_util.tree_map(lambda v: jnp.repeat(v, n_seeds), hyper)
    phi_fixed = expand(problem.constraint_data.value)
    xs_block = runs(jnp.moveaxis(x_star, 0, -1))  # used only without a streaming x*

    def call(states, acc, failed, theta, phi, phi_next, u, ka, t):
        states, acc, now_failed, rec, x = per_run(
            hyper_b, states, acc, failed, jax.tree_util.tree_map(runs, theta), phi_fixed,
            phi_fixed, runs(u), ka, xs_block, t)
        if record_decisions:
            x = jnp.moveaxis(x, 0, -1).reshape(n_grid, n_seeds, -1)
        return states, acc, now_failed, rec, x

    return call


def scan_blocks(round_, problem, keys, carry, ts, length: int, dtype, unroll: int = 1):
    """The rounds ``ts`` (a chunk of ``length``) seeds-minor: the carry transposed once each way,
    the draws made for blocks of ``BLOCK`` rounds aligned to round 1 (``draw_rounds``), a
    block's rounds outside the chunk run but change nothing.  So every round of every
    chunking runs the same compiled block body: bitwise the same results."""
    words = jax.random.key_data(keys)
    k0, k1 = words[:, 0], words[:, 1]
    n_grid, n_seeds = carry.failed.shape
    t_end = ts[0] + length  # first round after the chunk
    first = ((ts[0] - 1) // BLOCK) * BLOCK + 1

    def block_body(c, k):
        t_block = first + k * BLOCK + jnp.arange(BLOCK, dtype=jnp.int32)
        drawn = draw_rounds(problem, k0, k1, t_block, dtype)

        def one(c, xs):
            t = xs[0]
            active = (t >= ts[0]) & (t < t_end)
            new = round_(c, t, None, xs[1:], active)
            keep = lambda a, b: jnp.where(active, a, b)
            return new._replace(states=jax.tree_util.tree_map(keep, new.states, c.states),
                                acc=jax.tree_util.tree_map(keep, new.acc, c.acc),
                                failed=keep(new.failed, c.failed),
                                failed_round=keep(new.failed_round, c.failed_round),
                                sums=jax.tree_util.tree_map(keep, new.sums, c.sums)), None

        c, _ = jax.lax.scan(one, c, (t_block,) + drawn, unroll=unroll)
        return c, None

    n_blocks = -(-(length + BLOCK - 1) // BLOCK)  # blocks enough for any alignment of t0
    carry = carry_to_runs(carry)
    carry, _ = jax.lax.scan(block_body, carry, jnp.arange(n_blocks, dtype=jnp.int32))
    return carry_from_runs(carry, n_grid, n_seeds)


def expand(tree, n: int = BATCH):
    """Every array leaf of rank >= 1 with ``n`` trailing unit axes (the problem's own data,
    shared by all runs of a block); scalars broadcast as they are."""
    def f(leaf):
        if isinstance(leaf, jax.Array) and leaf.ndim >= 1 and not jax.dtypes.issubdtype(
                leaf.dtype, jax.dtypes.prng_key):
            return jnp.reshape(leaf, leaf.shape + (1,) * n)
        return leaf

    return jax.tree_util.tree_map(f, tree)


def to_minor(tree, n: int):
    """Move the ``n`` leading (batch) axes of every leaf to the end."""
    return jax.tree_util.tree_map(lambda a: jnp.moveaxis(a, tuple(range(n)),
                                                         tuple(range(a.ndim - n, a.ndim))), tree)


def from_minor(tree, n: int):
    """Inverse of ``to_minor``."""
    return jax.tree_util.tree_map(lambda a: jnp.moveaxis(a, tuple(range(a.ndim - n, a.ndim)),
                                                         tuple(range(n))), tree)


def all_finite(leaf, n: int):
    """isfinite over a leaf's non-batch axes (its last ``n`` axes are batch axes): a count of
    non-finite entries (Pallas' Triton lowering has no and-reduction, ``jaxbco.fused``)."""
    bad = (~jnp.isfinite(leaf)).astype(jnp.int32)
    return jnp.sum(bad, axis=tuple(range(jnp.ndim(leaf) - n))) == 0


def carry_to_runs(carry):
    """The engine's carry, (G, S, ...) leaves, as seeds-minor blocks over the R = G S runs."""
    G, S = carry.failed.shape
    flat = lambda a: a.reshape((G * S,) + a.shape[2:])
    return carry._replace(
        states=to_minor(jax.tree_util.tree_map(flat, carry.states), 1),
        acc=jax.tree_util.tree_map(flat, carry.acc), failed=flat(carry.failed),
        failed_round=flat(carry.failed_round),
        bufs=carry.bufs.reshape(carry.bufs.shape[:2] + (G * S,)),
        sums=to_minor(carry.sums, 1),
        sbuf=jax.tree_util.tree_map(lambda a: jnp.moveaxis(a, 1, -1), carry.sbuf))


def carry_from_runs(carry, G: int, S: int):
    """Inverse of ``carry_to_runs``."""
    unflat = lambda a: a.reshape((G, S) + a.shape[1:])
    return carry._replace(
        states=jax.tree_util.tree_map(unflat, from_minor(carry.states, 1)),
        acc=jax.tree_util.tree_map(unflat, carry.acc), failed=unflat(carry.failed),
        failed_round=unflat(carry.failed_round),
        bufs=carry.bufs.reshape(carry.bufs.shape[:2] + (G, S)),
        sums=from_minor(carry.sums, 1),
        sbuf=jax.tree_util.tree_map(lambda a: jnp.moveaxis(a, -1, 1), carry.sbuf))
