"""The figure of one ``Result``: regret, hard and soft violation against t, drawn as its results
Dataset would be (``plot_dataset``), so ``jaxbco plot`` on the saved file redraws it."""

from __future__ import annotations

import os

from jaxbco.plotting.dataset import plot_dataset
from jaxbco.results import to_dataset

#: The panels of a run's figure (``jaxbco run``).
RUN_METRICS = ("regret", "hard_violation", "soft_violation")


def plot_curves(
    result,
    path,
    *,
    c: float | None = None,
    setting: int = 0,
    title: str | None = None,
    problem=None,
    constraint: str | None = None,
    strongly_convex: bool | None = None,
    band: str | None = "ci",
):
    """Regret Rₜ = ∑ₛ≤ₜ fₛ(xₛ) − fₛ(x*), hard violation ∑ₛ≤ₜ [gₛ(xₛ)]₊ and soft violation
    ∑ₛ≤ₜ gₛ(xₛ) against t of one hyperparameter setting: the mean over seeds with the 95%
    t-interval of the mean (``band``), and only the slope that applies: Theorem 1's regret
    t^max(c, 1−c) (log t when strongly convex: Thm. 3) and, for the hard violation, O(1) for a
    fixed constraint (Thm. 1) or t^(1−c/2) for a time-varying one (Thm. 2), one dash for the
    c in both panels.

    Args:
        result: a ``jaxbco.Result`` (``jaxbco.sweep``).
        path: the PNG's path (the PDF is written beside it).
        c: the exponent c of the slopes (None: the setting's own).
        setting: which hyperparameter setting to draw.
        title: a one-line title.
        problem: the ``Problem`` that was run: tells a fixed from a time-varying constraint
            and a strongly convex loss.
        constraint: "fixed" or "varying" when no ``problem`` is given (None and no problem:
            the violation slope is left out, since it is unknown which theorem applies).
        strongly_convex: likewise for the loss (None: the problem's own flag, else False).
        band: "ci" (95% CI of the mean), "quantiles" (10-90% of seeds) or None.

    Returns:
        ``path``.

    Example:
        >>> import tempfile, os, jax.numpy as jnp, jaxbco
        >>> from jaxbco import sets, losses, constraints, sequences
        >>> a = jnp.ones(2) / 2**0.5
        >>> prob = jaxbco.Problem(domain=sets.L2Ball(jnp.zeros(2), 1.0), loss=losses.Quadratic(),
        ...     loss_data=sequences.IIDNormal(0.6 * a, jnp.full(2, 0.1)),
        ...     constraint=constraints.Linear(),
        ...     constraint_data=sequences.Fixed((a, jnp.asarray(0.3))))
        >>> hyper = jaxbco.grid(c=[0.5], eps=[0.1], delta=[1e-3], xi=[1e-3])
        >>> res = jaxbco.sweep(prob, 50, hyper, seeds=4)
        >>> out = plot_curves(res, os.path.join(tempfile.mkdtemp(), "r.png"), problem=prob)
        >>> out.endswith("r.png")
        True
    """
    if problem is not None:
        if constraint is None:
            constraint = "fixed" if problem.constraint_data.constant else "varying"
        if strongly_convex is None:
            strongly_convex = bool(problem.strongly_convex)
    ds = to_dataset(result).isel(setting=[setting])
    if c is not None:
        ds = ds.assign_coords(c=("setting", [float(c)]))
    root, ext = os.path.splitext(os.fspath(path))
    plot_dataset(
        ds,
        root if ext.lower() == ".png" else os.fspath(path),
        metrics=RUN_METRICS,
        title=title,
        band=band,
        constraint=constraint,
        strongly_convex=bool(strongly_convex),
    )
    return path
