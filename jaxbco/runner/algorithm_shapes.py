"""A researcher's own algorithm traced once before a run (``jax.eval_shape``: nothing is
compiled or computed), so that a state or a decision of the wrong shape is one line naming the
class, the method and the shapes, not JAX's "incompatible shapes for broadcasting" from deep
inside the compiled rounds, or a scan carry laid out in seeds-minor blocks.

Checked on one run and one hyperparameter setting, with round 1's data: ``init`` returns a
state; ``decision`` and ``play`` of it are (d,); ``multiplier`` is a scalar; ``step`` takes it
and returns a state of the same structure and shapes.  Dtypes are not compared, and a method
that cannot be traced here is left to the run (the data are not cast to the run's dtype yet).  The built-in algorithms (the
classes of ``jaxbco.algorithms`` themselves) are tested and skipped.

Example:
    >>> from jaxbco import problems
    >>> from jaxbco.algorithms import RectifiedBCO
    >>> from jaxbco.runner.algorithm_shapes import check_algorithm_shapes
    >>> p = problems.make("quadratic-ball", dim=3)
    >>> check_algorithm_shapes(p, RectifiedBCO(), RectifiedBCO().default_hyper(p, 10))
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbco._src import checks
from jaxbco.algorithms import RoundInput


def _built_in(algorithm) -> bool:
    return type(algorithm).__module__.startswith("jaxbco.algorithms.")


def _shapes(tree) -> str:
    paths = jax.tree_util.tree_flatten_with_path(tree)[0]
    return ", ".join(
        f"{jax.tree_util.keystr(p) or 'state'} {tuple(v.shape)} {v.dtype}" for p, v in paths
    )


class _Untraceable(Exception):
    """The method could not be traced alone (this check's data are not cast to the run's dtype
    yet): the run itself reports what fails."""


def _traced(fn, *args):
    """``jax.eval_shape(fn, *args)``; ``_Untraceable`` where tracing fails."""
    try:
        return jax.eval_shape(fn, *args)
    except (TypeError, ValueError, IndexError) as err:
        raise _Untraceable from err


def _check_point(name: str, what: str, out, d: int) -> None:
    if not hasattr(out, "shape") or tuple(out.shape) != (d,):
        shape = tuple(out.shape) if hasattr(out, "shape") else type(out).__name__
        raise ValueError(
            f"algorithm {name}.{what} must return the point x_t of shape ({d},) (d = {d}); "
            f"it returns shape {shape}"
        )


def check_algorithm_shapes(problem, algorithm, hyper) -> None:
    """Raise ValueError where an own algorithm's ``init``, ``step``, ``decision``, ``play`` or
    ``multiplier`` fails on one run or returns a shape the engine cannot carry (module
    docstring).

    Args:
        problem: the (checked) ``Problem``.
        algorithm: the algorithm.
        hyper: its hyperparameters (any grid of settings: one setting is traced).
    """
    if _built_in(algorithm):
        return
    try:
        _check(problem, algorithm, hyper)
    except _Untraceable:
        return


def _check(problem, algorithm, hyper) -> None:
    name, d = type(algorithm).__name__, problem.dim
    one = jax.tree_util.tree_map(lambda v: jax.ShapeDtypeStruct((), jnp.result_type(v)), hyper)
    x1 = problem.initial_point()
    key, t1 = checks.threefry_key(0), jnp.asarray(1, jnp.int32)
    theta = jax.eval_shape(problem.loss_data.sample, key, t1)
    phi = jax.eval_shape(problem.constraint_data.sample, key, t1)
    u = jax.ShapeDtypeStruct((d,), x1.dtype)
    state = _traced(lambda h: algorithm.init(problem, h, x1), one)
    _check_point(name, "decision(state)", _traced(algorithm.decision, state), d)
    lam = _traced(algorithm.multiplier, state)
    if not hasattr(lam, "shape") or tuple(lam.shape) != ():
        raise ValueError(
            f"algorithm {name}.multiplier(state) must return a scalar; it returns shape "
            f"{tuple(getattr(lam, 'shape', ()))}"
        )

    def round_one(s, h, th, ph, u):
        inp = RoundInput(t=t1, theta=th, phi=ph, phi_next=ph, u=u, key=key)
        return algorithm.play(s, problem, h, inp), algorithm.step(s, problem, h, inp)

    played, new = _traced(round_one, state, one, theta, phi, u)
    _check_point(name, "play(state, ...)", played, d)
    same = jax.tree_util.tree_structure(new) == jax.tree_util.tree_structure(state) and all(
        a.shape == b.shape  # dtypes: this check's data are not yet cast to the run's
        for a, b in zip(jax.tree_util.tree_leaves(new), jax.tree_util.tree_leaves(state))
    )
    if not same:
        raise ValueError(
            f"algorithm {name}.step must return a state of init's structure and shapes "
            f"(the engine carries it through the rounds); init gives [{_shapes(state)}], "
            f"step returns [{_shapes(new)}]"
        )
