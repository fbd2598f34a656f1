"""The whole run as one jitted, transformable function: ``make_run`` gives
``fn(key, hyperparameters, seed ids) -> dict of curves``, one compiled program over all T
rounds (``dispatch.whole``: ``engine.start`` -> the back-end's ``advance`` -> ``engine.finish``), to
transform with ``jax.grad``, ``jax.jacfwd`` or ``jax.vmap``.  Its inputs are validated, cast
and shaped as ``sweep``'s are (``prepare``, which ``jaxbco.simulate`` shares).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import backends, fused
from jaxbco._src import xla
from jaxbco._src.shaping import SEED_PAD, cast, grid, pad_seeds
from jaxbco.algorithms import AbstractAlgorithm
from jaxbco.comparator import check_supported, select
from jaxbco.problem import Problem, check_feasible
from jaxbco.runner import dispatch, memory, validation
from jaxbco.solvers.gap import needs_refinement


class Setup(NamedTuple):
    """Validated, cast inputs shared by ``sweep`` and ``make_run``."""

    problem: Problem  # cast to dtype
    algorithm: AbstractAlgorithm  # cast to dtype
    horizon: int
    checkpoints: np.ndarray
    dtype: np.dtype
    x_star_given: object  # a seed-independent x* solved on the host (``method.fixed``) or None
    method: object  # x*'s method (``comparator.select``, once, on the cast problem) or None


def prepare(problem, horizon, algorithm, checkpoints, dtype, comparator, validated=None) -> Setup:
    """The checked inputs (``validation.validated``, unless given) cast to dtype, x*'s method
    selected once (``comparator.select``; ValueError where the problem has none), and a
    seed-independent x* solved on the host where the method is one (``Setup``)."""
    horizon, algorithm, checkpoints, dtype = validated or validation.validated(
        problem, horizon, algorithm, checkpoints, dtype
    )
    problem_c, algorithm_c = cast((problem, algorithm), dtype)
    method = select(problem_c, horizon) if comparator else None
    if comparator and method is None:
        check_supported(problem_c, horizon)  # raises, naming why
    # on the problem as given: a portfolio's float64 data, not their cast
    given = method.fixed(problem, horizon) if method is not None and method.outside else None
    return Setup(problem_c, algorithm_c, horizon, checkpoints, dtype, given, method)


def make_run(
    problem: Problem,
    horizon: int,
    *,
    algorithm: AbstractAlgorithm | None = None,
    checkpoints=None,
    dtype="float32",
    comparator: bool = True,
    seed_pad: bool = True,
    scan_unroll: int = 1,
    kernel: bool | None = None,
):
    """The whole run as one jitted function ``fn(key, hyper, seed_ids) -> dict of curves``.

    A pure function of the key, the hyperparameters and the seed ids, to transform with
    ``jax.grad``, ``jax.jacfwd`` or ``jax.vmap`` (the hyperparameters are traced arrays, never
    static).  The curves regret, hard_violation, soft_violation, lam and loss have shape
    (G, S, K), with ``failed`` (G, S), ``x_star`` (S, d) and ``x_final`` (G, S, d).  Inputs are
    validated once here; the hyperparameters are not (they may be tracers).  Called on
    concrete inputs, ``fn`` is compiled with jaxbco's XLA options (``fn.compiler_options``);
    inside the caller's own ``jit``, ``grad`` or ``vmap`` JAX takes options on the outermost
    ``jax.jit`` only, so wrap it as ``jax.jit(g, compiler_options=fn.compiler_options)``.
    A concrete call compiles the algorithm's light version (``AbstractAlgorithm.light``), and
    the algorithm itself only where a prox certificate fails: the same curves either way.

    Args:
        problem: the set X, the loss family and the constraint family with their data sequences.
        horizon: the number of rounds T.
        algorithm: the algorithm to run (default ``RectifiedBCO()``).
        checkpoints: the rounds to record (default: about 100 log-spaced rounds).
        dtype: "float32" or "float64".
        comparator: False measures regret against x₁ instead of x*.
        seed_pad: pad the seeds to a multiple of ``SEED_PAD`` so that a seed's result does not
            depend on how many seeds run beside it.
        scan_unroll: rounds per iteration of the round scan.
        kernel: None runs the fused kernel on a GPU for concrete calls only (under the caller's
            transformations the scan engine, so ``jax.grad`` works); True also under ``jit``
            (no derivatives); False never.

    Returns:
        ``fn(key, hyper, seed_ids)``: key a typed ``jax.random.key`` or an int; hyper the
        algorithm's hyperparameters (a ``Hyper`` without a grid axis is given one); seed_ids
        integer ids of shape (S,).  It returns the dict of curves described above.

    Raises:
        ValueError: the problem, horizon or checkpoints are out of range.
        TypeError: an input of the wrong kind.

    Example:
        >>> import jax, jax.numpy as jnp, jaxbco
        >>> from jaxbco import problems
        >>> problem = problems.make("quadratic-ball", 3)
        >>> fn = jaxbco.make_run(problem, 50, checkpoints=[50])
        >>> ids = jnp.arange(4)
        >>> hyper = lambda c: jaxbco.theorem_defaults(problem.domain, 50, c=c)
        >>> mean_regret = lambda c: fn(jax.random.key(0), hyper(c), ids)["regret"][..., -1].mean()
        >>> slope = jax.grad(mean_regret)(0.6)  # d E[R_T] / dc through the whole run
        >>> bool(jnp.isfinite(slope))
        True
    """
    validated, scan_unroll = validation.check_make_run(
        problem, horizon, algorithm, checkpoints, dtype, comparator, seed_pad, scan_unroll
    )
    horizon, algorithm, checkpoints, dtype = validated
    setup_algorithm = algorithm
    kernel = fused.check(kernel)
    chosen = backends.select(
        problem, algorithm, platform=jax.default_backend(), kernel=kernel, dtype=dtype
    )
    undecided = check_feasible(problem, horizon, 0.0, comparator)
    setup = prepare(problem, horizon, algorithm, checkpoints, dtype, comparator, validated)
    cps = jnp.asarray(setup.checkpoints)
    options = xla.options()
    try:
        sizes = memory.run_sizes(problem, algorithm, algorithm.default_hyper(problem, horizon))
    except ValueError:  # no default hyperparameters at this horizon: a few vectors
        sizes = (4 * problem.dim, problem.dim, problem.dim + 1)
    limit = memory.memory_limit()

    def fn(key, hyper, seed_ids):
        lanes = SEED_PAD if seed_pad else 1
        key, n_grid = validation.check_call(
            key, hyper, seed_ids, problem, setup_algorithm, setup, comparator, sizes, lanes, limit
        )
        hyper = grid(hyper, setup.dtype)  # arrays (or the caller's tracers): never static
        seed_ids = jnp.asarray(seed_ids, jnp.uint32)
        ids = pad_seeds(seed_ids, SEED_PAD if seed_pad else 1)
        # XLA options go on the outermost jit only: called inside the caller's transformation
        # (traced inputs), the program is compiled with the caller's options.
        traced = any(
            isinstance(leaf, jax.core.Tracer)
            for leaf in jax.tree_util.tree_leaves((key, hyper, seed_ids))
        )
        # under the caller's transformations the scan (derivatives), unless kernel= asked
        use = chosen.backend if (kernel is not None or not traced) else chosen.scan
        args = lambda algorithm: (
            setup.problem,
            algorithm,
            cps,
            setup.x_star_given,
            key,
            hyper,
            ids,
            seed_ids.shape[0],
            setup.horizon,
            setup.method or False,  # selected once (prepare)
            scan_unroll,
        )

        def call(use, algorithm=setup.algorithm):
            try:
                return _whole_jitted(() if traced else options)(*args(algorithm), use)
            except ValueError as err:  # concrete inputs inside the caller's jit: no options here
                if "compiler_options" not in str(err) or not options:
                    raise
                return _whole_jitted(())(*args(algorithm), use)

        light = setup.algorithm.light()
        if not traced and light is not setup.algorithm:  # the light program first
            out = fused.call_with_fallback(lambda b: call(b, light), use, chosen.scan, traced)
            if not needs_refinement(out["prox_certificate"], setup.dtype):
                return out
        return fused.call_with_fallback(call, use, chosen.scan, traced)

    fn.compiler_options = dict(options)
    fn.feasibility_undecided = undecided
    return fn


@functools.cache
def _whole_jitted(options: tuple):
    kw = {"compiler_options": dict(options)} if options else {}
    return eqx.filter_jit(dispatch.whole, **kw)
