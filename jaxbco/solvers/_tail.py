"""A lane-wise ``while_loop`` on a seeds-minor block whose tail runs on the open lanes only.

An iterative solver on a block runs each lane until it converges and freezes it there (its
body leaves a finished lane as it is), so the loop makes as many trips as the slowest lane,
each over every lane.  Most lanes finish in one or two trips and a few take many: ``tail``
runs the loop over the whole block while more than ``lanes`` lanes are open, then gathers
the open ones into a chunk of ``lanes`` lanes (a static shape), finishes them there and
scatters them back.  A lane's arithmetic is the same in either loop (element-wise over the
lanes), so its answer does not depend on the lanes beside it, nor on which loop ran it.

Example:
    >>> import jax.numpy as jnp
    >>> body = lambda consts, c: (jnp.where(c[1], c[0], c[0] + consts[0]),   # x += step
    ...                            c[1] | (c[0] + consts[0] >= 10.0))            # done at 10
    >>> steps = jnp.array([1.0, 5.0, 2.0, 10.0])
    >>> x, done = tail(body, (steps,), (True,), (jnp.zeros(4), jnp.zeros(4, bool)),
    ...                lambda c: c[1], lanes=2)
    >>> x.tolist()
    [10.0, 10.0, 10.0, 10.0]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def tail(body, consts, per_lane, carry, done, lanes: int | None):
    """The fixed point of ``carry = body(consts, carry)`` run until ``done(carry)`` holds in
    every lane.

    Args:
        body: (consts, carry) -> carry, element-wise over the lanes; a lane already done must
            come out unchanged.
        consts: the loop's data (a pytree).
        per_lane: a pytree of bools like ``consts``: whether the leaf has the lanes as its
            last axis (True) or is shared by every lane (False).
        carry: the loop's state, every leaf with the lanes as its last axis.
        done: carry -> (n,) bool.
        lanes: the chunk's size.  None, one run or a block of fewer than 2 ``lanes`` lanes:
            one loop over the whole block; so too on any platform but a CPU (a GPU's trip
            over every lane costs about what one over a few does).

    Returns:
        The final carry.
    """
    shape = done(carry).shape  # () for one run (under ``vmap``)
    n = shape[0] if len(shape) == 1 else 0
    step = lambda cs: lambda c: body(cs, c)
    whole = lambda consts, carry: jax.lax.while_loop(
        lambda c: ~jnp.all(done(c)), step(consts), carry
    )
    if lanes is None or n < 2 * lanes:  # one run, or a block too small to gain
        return whole(consts, carry)

    def compacted(consts, carry):
        many = lambda c: jnp.sum((~done(c)).astype(jnp.int32)) > lanes
        carry = jax.lax.while_loop(many, step(consts), carry)
        idx = open_first(done(carry), lanes)
        take = lambda a: jnp.take(a, idx, axis=-1)
        part = whole(
            jax.tree_util.tree_map(lambda a, f: take(a) if f else a, consts, per_lane),
            jax.tree_util.tree_map(take, carry),
        )
        return jax.tree_util.tree_map(lambda a, p: a.at[..., idx].set(p), carry, part)

    return jax.lax.platform_dependent(consts, carry, cpu=compacted, default=whole)


def open_first(done, k: int):
    """The first ``k`` of the lanes in the order open ones first, each group in lane order
    (``argsort(done, stable=True)[:k]`` without a sort: two running counts and a scatter;
    also the interior point's binding-lanes-first order)."""
    n = done.shape[0]
    open_ = (~done).astype(jnp.int32)
    rank_open = jnp.cumsum(open_) - 1
    rank_done = jnp.sum(open_) + jnp.cumsum(1 - open_) - 1
    slot = jnp.where(done, rank_done, rank_open)
    return jnp.zeros(k, jnp.int32).at[slot].set(jnp.arange(n, dtype=jnp.int32), mode="drop")
