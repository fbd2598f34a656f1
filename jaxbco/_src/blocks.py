"""Seeds-minor blocks: the layout, and what a component declares about it.

On a block the runs sit on the trailing axes of every array and the vector axis leads:

    vectors (d, runs),   per-run scalars and hyperparameters (runs,),
    the problem's own arrays with one trailing unit axis per run axis (``expand``),

so broadcasting lines up and reductions over the vector axis are taken over axis 0
(``jaxbco._src.ops.inner``).  Code written this way is one function for one run (no run axes)
and for a block; the engine's seeds-minor back-end (``jaxbco._minor``) and the fused GPU
kernel (``jaxbco.fused``) call it on blocks, the ``vmap`` back-end per run.

A component says so with class attributes, each declared by its class itself (a subclass
that re-implements methods declares again; until then it runs under ``vmap``):

    blocks = True   its methods take blocks (sets, losses, constraints, sequences, prox
                    methods, algorithms); a component holding others (``Shifted``'s base)
                    runs on blocks when they do too;
    shared = True   a sequence whose data do not depend on the key: sampled once per round
                    and broadcast to every seed, never copied per seed;
    kernel = True   its block code also runs inside the fused GPU kernel (``jaxbco.fused``):
                    it lowers to Pallas' Triton (no slices, gathers, sorts or LAPACK calls;
                    power-of-two shapes, the coordinates padded) and keeps padded rows zero.
                    Each declaration is checked by the kernel's tests (interpreted against
                    the scan engine, and lowered for a GPU).
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

BATCH = 1  # trailing run axes of a block in the engine: the runs, grid-major (run g * S + s)


def own(component, flag: str) -> bool:
    """The class's own declaration of ``flag`` (not inherited)."""
    return bool(type(component).__dict__.get(flag, False))


def undeclared(component, flag: str = "blocks"):
    """The first of ``component`` and the components it holds that does not declare ``flag``
    itself, or None."""
    if not own(component, flag):
        return component
    if dataclasses.is_dataclass(component):
        for field in dataclasses.fields(component):
            child = getattr(component, field.name, None)
            if isinstance(child, eqx.Module) and hasattr(type(child), flag):
                bad = undeclared(child, flag)
                if bad is not None:
                    return bad
    return None


def shared(sequence) -> bool:
    """Whether a data sequence is the same for every seed (``shared`` declared)."""
    return own(sequence, "shared")


def expand(tree, n: int = BATCH):
    """Every array leaf of rank >= 1 with ``n`` trailing unit axes (the problem's own data,
    shared by all runs of a block); scalars broadcast as they are."""

    def f(leaf):
        if (
            isinstance(leaf, jax.Array)
            and leaf.ndim >= 1
            and not jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key)
        ):
            return jnp.reshape(leaf, leaf.shape + (1,) * n)
        return leaf

    return jax.tree_util.tree_map(f, tree)


def to_minor(tree, n: int):
    """Move the ``n`` leading (batch) axes of every leaf to the end."""
    return jax.tree_util.tree_map(
        lambda a: jnp.moveaxis(a, tuple(range(n)), tuple(range(a.ndim - n, a.ndim))), tree
    )


def from_minor(tree, n: int):
    """Inverse of ``to_minor``."""
    return jax.tree_util.tree_map(
        lambda a: jnp.moveaxis(a, tuple(range(a.ndim - n, a.ndim)), tuple(range(n))), tree
    )


def all_finite(leaf, n: int):
    """isfinite over a leaf's non-batch axes (its last ``n`` axes are batch axes): a count of
    non-finite entries (Pallas' Triton lowering has no and-reduction, ``jaxbco.fused``)."""
    bad = (~jnp.isfinite(leaf)).astype(jnp.int32)
    return jnp.sum(bad, axis=tuple(range(jnp.ndim(leaf) - n))) == 0


def blocker(problem, algorithm, flag: str = "blocks") -> str | None:
    """Why a run cannot take the back-end that needs ``flag``, or None when it can.

    Each component (set, loss, loss data, constraint, constraint data, algorithm) and each prox
    method the algorithm calls must declare ``flag = True``; the first that does not is named.
    Replayed directions run on either back-end.

    Args:
        problem: the problem.
        algorithm: the algorithm.
        flag: "blocks" for the seeds-minor back-end, "kernel" for the fused GPU kernel's
            declaration.

    Returns:
        None, or one phrase naming the component that keeps the run off.

    Example:
        >>> import jax.numpy as jnp, jaxbco
        >>> from jaxbco import backends, constraints, losses, sequences, sets
        >>> from jaxbco.algorithms import RectifiedBCO
        >>> loss = losses.CustomLoss(lambda x, theta: jnp.sum((x - theta) ** 4))   # runs per seed
        >>> theta = sequences.IIDNormal(jnp.zeros(2), jnp.ones(2))
        >>> halfspace = sequences.Fixed((jnp.ones(2), jnp.asarray(0.5)))
        >>> X = sets.L2Ball(jnp.zeros(2), 1.0)
        >>> problem = jaxbco.Problem(X, loss, theta, constraints.Linear(), halfspace)
        >>> backends.blocker(problem, RectifiedBCO())
        'CustomLoss does not declare blocks = True (the loss)'
    """
    parts = (
        ("set", problem.domain),
        ("loss", problem.loss),
        ("loss data", problem.loss_data),
        ("constraint", problem.constraint),
        ("constraint data", problem.constraint_data),
        ("algorithm", algorithm),
    )
    for role, component in parts:
        bad = undeclared(component, flag)
        if bad is not None:
            where = (
                f"the {role}"
                if bad is component
                else f"inside the {role} {type(component).__name__}"
            )
            return f"{type(bad).__name__} does not declare {flag} = True ({where})"
    for method in algorithm.prox_methods(problem):
        if not method.__dict__.get(flag, False):
            what = getattr(method, "name", method.__name__)
            where = "on blocks" if flag == "blocks" else "in the fused kernel"
            return (
                f"the prox method {method.__name__} ({what}) for "
                f"{type(problem.constraint).__name__} on {type(problem.domain).__name__} "
                f"does not run {where}"
            )
    return None


class Lanes(eqx.Module):
    """A block's pytree split for code written for one run: ``shared`` (the leaves whose run
    axes are all 1, those axes dropped, and scalars) and ``lanes`` (the others, the runs
    flattened onto a leading axis of ``n`` lanes); ``join(shared, lanes_of_one_run)`` puts one
    run's tree back together (static)."""

    shared: tuple
    lanes: tuple
    treedef: object = eqx.field(static=True)
    per_lane: tuple = eqx.field(static=True)

    def join(self, shared, lanes):
        """One run's tree from the shared leaves and one lane's leaves (inside a ``vmap``)."""
        s, ln = iter(shared), iter(lanes)
        leaves = [next(ln) if flag else next(s) for flag in self.per_lane]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)

    def take(self, idx):
        """The lanes ``idx`` only (shared leaves as they are)."""
        return dataclasses.replace(self, lanes=tuple(jnp.take(a, idx, axis=0) for a in self.lanes))

    def map(self, fn, n: int, *mapped):
        """``fn(one run's tree, *one lane of mapped)`` under ``vmap`` over the ``n`` lanes
        (``mapped``: arrays with a leading lane axis); the outputs with the lanes leading."""
        one = lambda ln, *m: fn(self.join(self.shared, ln), *m)
        return jax.vmap(one, axis_size=n)(self.lanes, *mapped)


def lanes(tree, runs: tuple[int, ...]) -> Lanes:
    """``tree`` (a block's data: each leaf of rank >= 1 with trailing run axes ``runs``, each of
    size 1 or the runs') as ``Lanes``; a leaf whose trailing axes are neither is an error."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    k, n = len(runs), int(np.prod(runs, dtype=np.int64))
    shared, per, flags = [], [], []
    for leaf in leaves:
        leaf = jnp.asarray(leaf)
        tail = leaf.shape[leaf.ndim - k :] if leaf.ndim >= k else ()
        if leaf.ndim == 0 or all(a == 1 for a in tail):
            shared.append(jnp.reshape(leaf, leaf.shape[: max(leaf.ndim - k, 0)]))
            flags.append(False)
            continue
        if len(tail) != k or any(a not in (1, r) for a, r in zip(tail, runs)):
            raise ValueError(
                f"a block's data leaf of shape {leaf.shape} does not end in the run axes "
                f"{runs} (or axes of size 1)"
            )
        own = leaf.shape[: leaf.ndim - k]
        full = jnp.broadcast_to(leaf, own + tuple(runs)).reshape(own + (n,))
        per.append(jnp.moveaxis(full, -1, 0))
        flags.append(True)
    return Lanes(tuple(shared), tuple(per), treedef, tuple(flags))


def per_run(fn, x, tree):
    """``fn(x, tree)`` written for one run (x (d,)) on a block, x (d, *runs) and ``tree`` laid
    out for blocks (``lanes``): fn under ``vmap`` over the runs, its value with the runs last.

    Example:
        >>> import jax.numpy as jnp
        >>> fn = lambda x, r: jnp.sum(x * x) - r   # one run's g
        >>> per_run(fn, jnp.ones((2, 3)), jnp.array([[1.0, 2.0, 3.0]])[0]).tolist()
        [1.0, 0.0, -1.0]
    """
    runs = x.shape[1:]
    xl = jnp.reshape(x, (x.shape[0], -1)).T
    return runs_last(lanes(tree, runs).map(lambda t, xi: fn(xi, t), xl.shape[0], xl), runs)


def per_run_data(fn, tree, runs: tuple[int, ...]):
    """``fn(tree)``, written for one run's data, on a block's data laid out for blocks
    (``lanes``): each output leaf with the runs last (None passes through).  For a function of
    the data alone (a family's ``interior_point``), which cannot tell a block from its shapes."""
    n = int(np.prod(runs, dtype=np.int64))
    return runs_last(lanes(tree, runs).map(fn, n), runs)


def runs_last(tree, runs: tuple[int, ...]):
    """Every leaf's leading lane axis as trailing run axes ``runs``."""
    return jax.tree_util.tree_map(
        lambda a: jnp.reshape(jnp.moveaxis(a, 0, -1), a.shape[1:] + tuple(runs)), tree
    )
