"""A user's curvature bound checked where it can be: at X's centre on round 1's data.

``CustomLoss(curvature_bound=...)`` and ``CustomConstraint(curvature_bound=...)`` are first
guesses (the comparator's FISTA and ``SmoothDual`` raise them by backtracking wherever a step
shows them too small; the four built-in sets' prox uses the constraint's Hessian instead), so
a bound below the truth costs steps, not exactness; it is still worth saying:
``CurvatureWarning`` names the component, the bound and the curvature found.
"""

from __future__ import annotations

import warnings

import jax
import numpy as np


class CurvatureWarning(UserWarning):
    """A user's curvature bound is below the curvature found at a point (used as a guess), or
    a problem asks for the strongly convex schedule of a loss with modulus 0."""


def check_modulus(problem) -> None:
    """Warn where ``problem.strongly_convex`` asks for Theorems 3-4's schedule (alpha_t =
    sigma t) but the loss's strong-convexity modulus is 0 (a ``Linear`` loss): the schedule then
    runs with sigma = 1 and the theorems' bounds do not hold."""
    if not problem.strongly_convex:
        return
    sigma = float(problem.loss.strong_convexity())
    if not sigma > 0:
        warnings.warn(
            CurvatureWarning(
                f"strongly_convex=True, but the loss ({type(problem.loss).__name__}) has "
                f"strong-convexity modulus sigma = {sigma:g}: the schedule alpha_t = sigma t runs "
                f"with sigma = 1 and Theorems 3-4 do not apply; set strongly_convex=False, or "
                f"give a loss with sigma > 0"
            ),
            stacklevel=4,
        )


def _curvature(fn, x) -> float:
    """||Hessian of fn at x||_2 (largest eigenvalue in magnitude), in float64 NumPy."""
    H = np.asarray(jax.hessian(fn)(x), np.float64)
    if not np.isfinite(H).all():  # a kink at x (a norm at its centre): no curvature to compare
        return float("nan")
    return float(np.max(np.abs(np.linalg.eigvalsh(0.5 * (H + H.T)))))


def check_bounds(loss, constraint, x, theta, phi) -> None:
    """Warn where a custom loss's or constraint's ``curvature_bound`` is below the curvature
    of its function at ``x`` (X's centre) on round 1's data ``theta`` / ``phi``."""
    for what, family, data in (("CustomLoss", loss, theta), ("CustomConstraint", constraint, phi)):
        if not family.probe_convexity:
            continue
        bound = family.curvature_bound
        if bound is None:
            continue
        found = _curvature(lambda z: family.value(z, data), x)
        if np.isfinite(found) and found > float(bound) * (1.0 + 1e-6):
            warnings.warn(
                CurvatureWarning(
                    f"{what} curvature_bound = {bound:g} is below the curvature of its function at "
                    f"X's centre on round 1's data ({found:.4g}); it is used only as a first guess "
                    f"(raised by backtracking where a step shows it too small): pass a bound >= "
                    f"{found:.4g}{', or none,' if what == 'CustomLoss' else ''} to skip those "
                    f"steps"
                ),
                stacklevel=3,
            )
