"""Whether a grid of hyperparameters can run: the algorithm's own class, finite values in range,
steps the run's dtype can resolve, and x_1 inside the shrunk set (``validation`` calls these)."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks


def check_hyper_values(hyper, algorithm, problem, dtype=None) -> None:
    """``sweep``'s and ``make_run``'s one check of hyperparameters: of the algorithm's own type;
    concrete values are re-validated (the class's field ranges, which a ``tree_map`` or
    ``eqx.tree_at`` bypasses, and the algorithm's ``check_hyper``); tracers pass."""
    cls = getattr(algorithm, "hyper_class", None)  # known without computing the defaults
    if cls is not None and not isinstance(hyper, cls):
        raise checks.KindError(
            f"hyper must be a {cls.__name__} for "
            f"{type(algorithm).__name__} (e.g. jaxbco.grid(...) or "
            f"theorem_defaults(...)); got {checks.describe(hyper)}"
        )
    checks.check_grid(hyper, "hyper")
    if checks.is_concrete(hyper) and dataclasses.is_dataclass(hyper):
        dataclasses.replace(hyper)  # runs the class's own checks (``__check_init__``) again
    algorithm.check_hyper(hyper, problem)
    _check_x1_in_shrunk_set(hyper, problem)
    _check_delta_normal(hyper, dtype)
    _check_step_reach(hyper, problem, dtype)


def _check_step_reach(hyper, problem, dtype) -> None:
    """The first prox step moves y = x_1 - g^_1 / alpha_1 up to (d / delta) / alpha_1 per unit
    of f's slope (the two-point estimate is at most d / delta times f's change over 2 delta);
    past the square root of the dtype's largest number, ||x - y||^2 overflows and every run
    stays at x_1 whatever alpha_scale is: refused, naming alpha_scale and the bound."""
    scale, delta = getattr(hyper, "alpha_scale", None), getattr(hyper, "delta", None)
    if dtype is None or scale is None or delta is None or not checks.is_concrete((scale, delta)):
        return
    limit = 1e-3 * float(np.sqrt(np.finfo(np.dtype(dtype)).max))
    reach = problem.domain.hull_dim / (
        np.asarray(delta, np.float64) * np.asarray(scale, np.float64)
    )
    if np.any(reach > limit):
        low = float(np.max(problem.domain.hull_dim / (np.asarray(delta, np.float64) * limit)))
        raise ValueError(
            f"alpha_scale must be at least {low:.3g} in {np.dtype(dtype).name} with delta = "
            f"{np.min(np.asarray(delta)):.3g}: the first step x_1 - g^_1 / alpha_1 would reach "
            f"(d / delta) / alpha_1 = {np.max(reach):.3g} units of f's slope, past "
            f"1e-3 sqrt(max) = {limit:.3g}, where squared distances overflow; got alpha_scale = "
            f"{np.min(np.asarray(scale)):.3g}"
        )


def _check_delta_normal(hyper, dtype) -> None:
    """A query radius delta below the smallest normal number of the run's dtype flushes to 0
    on the CPU, and every gradient estimate (d / 2 delta) (f(x + delta u) - f(x - delta u))
    becomes 0 / 0: refused before the run, not found as NaN on every seed after it."""
    delta = getattr(hyper, "delta", None)
    if dtype is None or delta is None or not checks.is_concrete(delta):
        return
    tiny = float(np.finfo(np.dtype(dtype)).tiny)
    small = np.asarray(delta, np.float64)
    if np.any(small < tiny):
        raise ValueError(
            f"delta must be at least {tiny:g} in {np.dtype(dtype).name} (smaller "
            f"values flush to zero and every gradient estimate divides by 0); got "
            f"{', '.join(f'{v:.3g}' for v in small[small < tiny])}"
        )


def _check_x1_in_shrunk_set(hyper, problem) -> None:
    """A given x1 must lie in (1 - xi) X for every setting's xi (round 1 queries x1 +- delta u,
    which stays in X only there); checked on concrete values of algorithms that shrink X."""
    xi = getattr(hyper, "xi", None)
    if problem.x1 is None or xi is None or not checks.is_concrete((xi, problem.x1)):
        return
    x1 = np.asarray(problem.x1, np.float64)
    c, _ = problem.domain.inscribed_ball()
    c = np.asarray(c, np.float64)
    for value in np.unique(np.asarray(xi, np.float64).ravel()):
        # x1 in (1 - xi) X  <=>  c + (x1 - c) / (1 - xi) in X
        z = c + (x1 - c) / (1.0 - value)
        dist = float(
            np.linalg.norm(np.asarray(problem.domain.project(jnp.asarray(z)), np.float64) - z)
        )
        if dist > 1e-6 * (1.0 + float(np.linalg.norm(z))):
            raise ValueError(
                f"x1 must lie in the shrunk set (1 - xi) X for xi = {value:g} (round "
                f"1 queries x1 +- delta u, which stay in X only there); it lies "
                f"{dist * (1.0 - value):.3g} outside it: move x1 towards the centre "
                f"or use a smaller xi"
            )


def check_hyper(hyper, algorithm, problem, horizon, dtype):
    """The algorithm's hyperparameters (its defaults for None), of its own type, with
    consistent grid lengths; returns (hyper, G)."""
    if hyper is None:
        hyper = algorithm.default_hyper(problem, horizon)
    check_hyper_values(hyper, algorithm, problem, dtype)
    return hyper, checks.check_grid(hyper, "hyper")
