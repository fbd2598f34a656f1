"""Hyperparameters of Algorithm 1 as a pytree of arrays (vmappable, differentiable, no recompiles).

The schedules are those of Theorems 1-4 of Hikima (2023).  For convex losses (Theorems 1-2)
αₜ = a·tᶜ, γₜ = g·t^(c+ε) and ηₜ = e·tᶜ; for strongly convex ones (Theorems 3-4) αₜ = a·σt,
with the same γₜ and ηₜ.  The multiplicative scales a, g, e are 1 in the theorems; δ = 1/T
(Theorems 1, 3) and the shrinkage is the smallest admissible, ξ = δ/r (r the inscribed radius
of X), so that x ± δu stays in X.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks

_asarray = checks.real  # ints become floats; a str or complex is named by the check


class Hyper(eqx.Module):
    """The hyperparameters of Algorithm 1, a pytree of arrays (vmappable, differentiable, and a new
    value never recompiles).

    The schedules of Hikima, Thms. 1-4: convex (Thms. 1-2) αₜ = a·tᶜ, strongly convex
    (Thms. 3-4) αₜ = a·σ·t; in both γₜ = g·t^(c+ε) and ηₜ = e·tᶜ, with scales a, g, e (1 in the
    theorems).  The queried points x ± δu stay in X when δ ≤ ξ·r (r: the inscribed radius of X;
    checked against the problem by ``sweep``).  Each field may carry a leading grid axis of G
    settings (``grid``); the ranges are checked at construction.

    Args:
        c: the schedule exponent c ∈ [1/2, 1).
        eps: ε > 0 in γₜ = t^(c+ε).
        xi: the shrinkage ξ ∈ (0, 1): the prox step projects onto (1 − ξ)X.
        delta: the exploration radius δ ∈ (0, ξr] of the two-point estimate.
        sigma: σ > 0, the loss's modulus in the strongly convex schedule αₜ = σt (unused by the
            convex one).
        alpha_scale: the scale a > 0 on αₜ.
        gamma_scale: the scale g > 0 on γₜ.
        eta_scale: the scale e > 0 on ηₜ.

    Raises:
        ValueError: a value out of its range, or fields whose grid axes differ in length.

    Example:
        >>> import jaxbco
        >>> h = jaxbco.Hyper(c=0.5, eps=0.1, xi=1e-3, delta=1e-3)
        >>> float(h.c), float(h.alpha_scale)
        (0.5, 1.0)
    """

    c: jax.Array = eqx.field(converter=_asarray)
    eps: jax.Array = eqx.field(converter=_asarray)
    xi: jax.Array = eqx.field(converter=_asarray)
    delta: jax.Array = eqx.field(converter=_asarray)
    sigma: jax.Array = eqx.field(converter=_asarray, default=1.0)
    alpha_scale: jax.Array = eqx.field(converter=_asarray, default=1.0)
    gamma_scale: jax.Array = eqx.field(converter=_asarray, default=1.0)
    eta_scale: jax.Array = eqx.field(converter=_asarray, default=1.0)

    def __check_init__(self):
        checks.check_grid(self, "Hyper")
        checks.check_range("c", self.c, low=0.5, high=1.0, high_open=True)
        checks.check_range("eps", self.eps, low=0.0, low_open=True)
        checks.check_range("xi", self.xi, low=0.0, high=1.0, low_open=True, high_open=True)
        checks.check_range("delta", self.delta, low=0.0, low_open=True)
        checks.check_range("sigma", self.sigma, low=0.0, low_open=True)
        for name in ("alpha_scale", "gamma_scale", "eta_scale"):
            checks.check_range(name, getattr(self, name), low=0.0, low_open=True)


def theorem_defaults(
    domain,
    horizon: int,
    *,
    c=0.5,
    eps=0.1,
    sigma=1.0,
    delta=None,
    xi=None,
    alpha_scale=1.0,
    gamma_scale=1.0,
    eta_scale=1.0,
) -> Hyper:
    """The theorems' hyperparameters for a domain and horizon: δ = 1/T and ξ = δ/r.

    Hikima, Thms. 1 and 3 take δ = 1/T; ξ = δ/r (r: the inscribed radius of X) is the
    smallest shrinkage that keeps x ± δu in X.  c = 1/2 gives the O(√T) regret of Thm. 1.
    Any argument may be a list of values, which becomes the grid axis (all lists of one length).

    Args:
        domain: the set X (its ``inscribed_ball`` gives r).
        horizon: the number of rounds T.
        c: the schedule exponent c ∈ [1/2, 1).
        eps: ε > 0 in γₜ = t^(c+ε).
        sigma: σ > 0 of the strongly convex schedule αₜ = σt.
        delta: the exploration radius δ (default 1/T).
        xi: the shrinkage ξ (default δ/r).
        alpha_scale: the scale on αₜ.
        gamma_scale: the scale on γₜ.
        eta_scale: the scale on ηₜ.

    Returns:
        The ``Hyper``.

    Raises:
        ValueError: ξ = δ/r outside (0, 1) (δ ≥ r, or δ so small that ξ rounds to 0), or any
            value out of its range.

    Example:
        >>> import jaxbco
        >>> from jaxbco import sets
        >>> import jax.numpy as jnp
        >>> h = jaxbco.theorem_defaults(sets.L2Ball(jnp.zeros(3), 2.0), 1000)
        >>> round(float(h.delta), 6), round(float(h.xi), 6)  # float32 arrays
        (0.001, 0.0005)
    """
    horizon = checks.check_horizon(horizon)
    _, r = domain.inscribed_ball()
    r = float(r)
    given = delta is not None
    if given:
        checks.check_range("delta", delta, low=0.0, low_open=True)
    else:
        delta = 1.0 / horizon
    if xi is None:
        xi = np.asarray(delta, np.float64) / r
        tiny = float(np.finfo(jnp.result_type(float)).tiny)  # Hyper's arrays: the default float
        if np.any(xi < tiny):
            raise ValueError(
                f"delta must be at least r * {tiny:.3g} = {r * tiny:.3g} in "
                f"{np.dtype(jnp.result_type(float)).name}: xi = delta / r (r = {r:g}, the "
                f"inscribed radius of X) would round to 0; got delta = {np.asarray(delta).tolist()}"
            )
        if np.any(xi >= 1.0):
            why = (
                f"got delta = {np.asarray(delta).tolist()}"
                if given
                else f"the default delta = 1/T = {1.0 / horizon:g} (horizon T = {horizon}) is too "
                f"large: pass delta < r or a horizon T > 1/r = {1.0 / r:g}"
            )
            raise ValueError(
                f"xi = delta / r = {xi.tolist()} must lie in (0, 1), so delta must lie in (0, r) = "
                f"(0, {r:g}) (r: the inscribed radius of X); {why}"
            )
    return Hyper(
        c=c,
        eps=eps,
        xi=xi,
        delta=delta,
        sigma=sigma,
        alpha_scale=alpha_scale,
        gamma_scale=gamma_scale,
        eta_scale=eta_scale,
    )


def problem_modulus(problem) -> float:
    """sigma of the strongly convex schedule (Thms. 3-4: alpha_t = sigma t) for ``problem``: the
    loss's modulus where the problem asks for that schedule (``problem.strongly_convex``) and
    the loss has one, else 1."""
    if not getattr(problem, "strongly_convex", False):
        return 1.0
    sigma = float(problem.loss.strong_convexity())
    return sigma if sigma > 0 else 1.0


def check_against_domain(hyper: Hyper, domain) -> None:
    """delta <= xi r, so the queried points x +- delta u stay in X."""
    if not checks.is_concrete(hyper):
        return
    _, r = domain.inscribed_ball()
    xi, delta = np.broadcast_arrays(np.asarray(hyper.xi, float), np.asarray(hyper.delta, float))
    bad = delta > xi * float(r) * (1 + 1e-6)
    if np.any(bad):
        raise ValueError(
            f"delta must lie in (0, xi * r] = (0, {float(np.min(xi[bad]) * float(r)):g}] so that "
            f"x +- delta u stays in X (r = {float(r):g} is the inscribed radius); got delta = "
            f"{delta[bad].tolist()}"
        )


def grid(**values) -> Hyper:
    """The Cartesian product of ``Hyper`` values, flattened to one leading grid axis.

    The first name varies slowest.  Every field of ``Hyper`` without a default (c, eps, xi,
    delta) must be named.

    Args:
        **values: field name -> a number or a list of values.

    Returns:
        A ``Hyper`` whose fields have a leading axis of ∏ len(values) settings.

    Raises:
        ValueError: an unknown field, an empty list, or a value out of its range.
        TypeError: values that are not numbers.

    Example:
        >>> import jaxbco
        >>> h = jaxbco.grid(c=[0.5, 0.75], eps=[0.1, 1.0], xi=1e-3, delta=1e-3)
        >>> h.c.tolist(), h.eps.shape
        ([0.5, 0.5, 0.75, 0.75], (4,))
    """
    return grid_of(Hyper, **values)


def grid_of(hyper, **values):
    """The Cartesian product of value lists for any hyperparameter Module, flattened to one leading
    grid axis (the first name varies slowest).

    The range checks of the Module run on the result.

    Args:
        hyper: the hyperparameter class (then every field without a default must be named) or
            an instance, whose other fields are kept.
        **values: field name -> a number or a list of values.

    Returns:
        An instance of the class whose swept fields have a leading axis of ∏ len(values)
        settings.

    Raises:
        ValueError: a name that is not a field, an empty list, or a value out of its range.
        TypeError: values that are not numbers.

    Example:
        >>> import jaxbco
        >>> from jaxbco.algorithms import AgarwalHyper
        >>> h = jaxbco.grid_of(AgarwalHyper(eta=0.1, delta=0.03, xi=0.05), eta=[0.01, 0.1])
        >>> h.eta.shape
        (2,)
    """
    names = list(values)
    cls = hyper if isinstance(hyper, type) else type(hyper)
    fields = [f.name for f in dataclasses.fields(cls)]
    for n in names:
        if n not in fields:
            raise ValueError(f"{cls.__name__} has no hyperparameter {n!r}; its fields are {fields}")
    lists = []
    for n in names:
        try:
            v = np.atleast_1d(np.asarray(values[n], dtype=float))
        except (TypeError, ValueError):
            raise checks.KindError(
                f"grid values of {n} must be numbers; got {checks.describe(values[n])}"
            ) from None
        if v.ndim != 1 or v.size == 0:
            raise ValueError(
                f"grid values of {n} must be a number or a non-empty 1-D list; got "
                f"{np.asarray(values[n]).tolist()!r}"
            )
        lists.append(v)
    mesh = np.meshgrid(*lists, indexing="ij")
    flat = {n: m.reshape(-1) for n, m in zip(names, mesh)}
    if isinstance(hyper, type):
        return hyper(**flat)
    return with_values(hyper, **flat)


def with_values(hyper, **values):
    """``hyper`` (a Module instance) with the named fields replaced, rebuilt so its range checks
    run again."""
    fields = [f.name for f in dataclasses.fields(hyper)]
    return type(hyper)(**{f: values[f] if f in values else getattr(hyper, f) for f in fields})


def schedule(hyper: Hyper, t: jax.Array, strongly_convex: bool):
    """(alpha_t, gamma_t, eta_t) of Theorems 1-2 (convex) or 3-4 (strongly convex)."""
    tf = t.astype(hyper.c.dtype)
    if strongly_convex:
        alpha = hyper.alpha_scale * hyper.sigma * tf  # Thm. 3
    else:
        alpha = hyper.alpha_scale * tf**hyper.c  # Thm. 1
    gamma = hyper.gamma_scale * tf ** (hyper.c + hyper.eps)  # Thm. 1
    eta = hyper.eta_scale * tf**hyper.c  # Thm. 1
    return alpha, gamma, eta
