"""The memory a run holds at its peak, estimated from shapes before anything is compiled;
the memory the machine offers (host RAM, or the devices' limit); and the refusal, with the
numbers, of a run that cannot fit.
"""

from __future__ import annotations

import os

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import comparator as _comparator
from jaxbco._src import checks
from jaxbco.engine import METRICS


def _elements(tree) -> int:
    return int(
        sum(np.prod(np.shape(leaf), dtype=np.int64) for leaf in jax.tree_util.tree_leaves(tree))
    )


def run_sizes(problem, algorithm, hyper) -> tuple[int, int, int]:
    """Elements of one run's algorithm state and of one round's loss and constraint data
    (shapes only: nothing is computed)."""
    one = jax.tree_util.tree_map(lambda v: jax.ShapeDtypeStruct((), jnp.result_type(v)), hyper)
    x1 = problem.initial_point()
    key, t1 = checks.threefry_key(0), jnp.asarray(1, jnp.int32)
    try:
        state = _elements(jax.eval_shape(lambda h: algorithm.init(problem, h, x1), one))
    except Exception:  # an algorithm whose init cannot be traced alone: a few vectors
        state = 4 * problem.dim
    theta = _elements(jax.eval_shape(problem.loss_data.sample, key, t1))
    phi = _elements(jax.eval_shape(problem.constraint_data.sample, key, t1))
    return state, theta, phi


def memory_estimate(
    problem,
    n_grid: int,
    n_seeds: int,
    n_checkpoints: int,
    sizes,
    *,
    itemsize: int = 4,
    record_decisions: bool = False,
    directions: int = 0,
    comparator: bool = True,
) -> int:
    """Bytes of memory a sweep holds at its peak, roughly: the carry 1.5 times (donated from
    chunk to chunk, plus the copies around it), one round's temporaries and a block of draws,
    the curves (and decisions) at the checkpoints, the outputs, the problem's data and
    replayed directions.  ``sizes``: ``run_sizes``; ``n_seeds`` padded; ``directions``:
    elements of u_t.  On CPU (quadratic-ball, d = 10, 2^18 to 2^20 runs) 1.2 to 1.4 times
    the measured peak RSS increase."""
    state, theta, phi = sizes
    d, G, S, K = problem.dim, n_grid, n_seeds, n_checkpoints
    R = G * S
    stream = comparator and _comparator.streams(problem)  # running sums of theta_t for x*
    carry = (
        R * (state + 6)
        + len(METRICS) * K * R
        + (K * R * d if record_decisions else 0)
        + S * phi
        + (S * (theta + 1) * (K + 1) if stream else 0)
    )
    work = (
        R * (6 * d + 2 * theta) + S * (2 * theta + 2 * phi + 2 * d) + 8 * S * (theta + d)
    )  # one round's values, and a block of draws (``backends.seeds_minor.BLOCK``)
    if comparator:  # the offline pre-pass: a few vectors per seed, a Hessian for Newton
        work += S * (2 * d * d if problem.loss.offline == "newton" else 10 * d)
    outputs = R * d + S * d + len(METRICS) * K * R
    data = sum(leaf.nbytes for leaf in jax.tree_util.tree_leaves(problem) if eqx.is_array(leaf))
    return int(itemsize * (1.5 * carry + work + outputs + 3 * directions) + data)


def memory_limit(devices=None) -> tuple[int, str] | None:
    """(bytes, what) the run may use: host RAM on CPU, the devices' ``bytes_limit`` on an
    accelerator (summed over the devices the seeds are sharded on); None if unknown."""
    devs = jax.local_devices() if devices is None else list(devices)
    if not devs:
        return None
    if devs[0].platform == "cpu":
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "host RAM"
        except (ValueError, OSError, AttributeError):
            return None
    try:
        limit = sum(int(dev.memory_stats()["bytes_limit"]) for dev in devs)
    except (TypeError, KeyError, AttributeError, RuntimeError, NotImplementedError):
        return None
    return limit, f"memory of {len(devs)} {devs[0].platform} device(s)"


def _gb(n: int) -> str:
    return f"{n / 1e9:.3g} GB ({n} bytes)"


def check_memory(estimate: int, limit, what: str) -> None:
    """Refuse up front a run that cannot fit (``memory_limit``)."""
    if limit is None or estimate <= limit[0]:
        return
    raise ValueError(
        f"the run needs about {_gb(estimate)} of memory ({what}), more than the "
        f"{_gb(limit[0])} of {limit[1]}: lower seeds, checkpoints or the grid "
        f"(or run the seeds in batches of ids)"
    )
