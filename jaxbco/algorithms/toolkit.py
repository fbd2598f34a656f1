"""The algorithm author's toolkit: the pieces every bandit method with constraints is built
from, public and documented, and the ones the built-in algorithms use themselves.

Each works on one run (vectors (d,)) and on a seeds-minor block (vectors (d, runs), per-run
scalars (runs,)), so an algorithm written with them can declare
``blocks = True`` (and check it with ``jaxbco.check_component``).

* estimates: ``two_point_gradient`` (Eq. (4) of Hikima; Agarwal et al. 2010),
  ``one_point_gradient`` (Flaxman et al. 2004), ``loss_gradient`` (either, or ``jax.grad``
  of f for a full-information method), ``estimator_dim``;
* constraints: ``constraint_value_and_grad`` (g and a (sub)gradient), ``constraint_rows``
  (one (gₖ, ∇gₖ) per row of a linear family), ``rowwise``;
* sets: ``project`` (onto the shrunk set (1 − ξ)X of a bandit method, else X),
  ``project_shrunk``, ``shrinkage`` (ξ = δ/r, checked below 1);
* hyperparameters: ``real`` (the converter of a hyperparameter field), ``positive``,
  ``unit_open``, ``check_perturbation`` (δ ≤ ξr), ``check_type``, ``given_or``,
  ``constants`` (the problem's F, G, D, C for default step sizes).

The heart of a two-point primal-dual method's ``step``, written with them:

.. code-block:: python

    from jaxbco.algorithms import toolkit as tk

    grad_f = tk.loss_gradient(problem, inp.theta, x, inp.u, hyper.delta, bandit=True)
    g, grad_g = tk.constraint_value_and_grad(problem, x, inp.phi)
    x_next = tk.project(problem.domain, x - hyper.eta * (grad_f + lam * grad_g), hyper.xi, True)
    lam_next = jnp.maximum(lam + hyper.eta * g, 0.0)
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbco._src import ops
from jaxbco._src.checks import real as real
from jaxbco.algorithms._toolkit_checks import check_perturbation as check_perturbation
from jaxbco.algorithms._toolkit_checks import check_type as check_type
from jaxbco.algorithms._toolkit_checks import constants as constants
from jaxbco.algorithms._toolkit_checks import given_or as given_or
from jaxbco.algorithms._toolkit_checks import positive as positive
from jaxbco.algorithms._toolkit_checks import shrinkage as shrinkage
from jaxbco.algorithms._toolkit_checks import unit_open as unit_open
from jaxbco.sets import project_shrunk as project_shrunk


def two_point_gradient(loss, theta, x, u, delta, d_hull):
    """The two-point gradient estimate of Eq. (4) (Hikima; Agarwal et al. 2010).

    g̃ = d/(2δ) [f(x + δu) − f(x − δu)] u (Alg. 1 lines 4-5).

    Args:
        loss: a ``jaxbco.losses`` family.
        theta: its data θₜ.
        x: (d,) the point xₜ.
        u: (d,) a direction uniform on the unit sphere of X's hull.
        delta: the perturbation δ > 0, a scalar.
        d_hull: the hull's dimension d, a scalar array (``estimator_dim``).

    Returns:
        g̃, shaped as ``x``.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import losses
        >>> from jaxbco.algorithms import toolkit
        >>> g = toolkit.two_point_gradient(losses.Quadratic(), jnp.zeros(2), jnp.array([1.0, 2.0]),
        ...                                jnp.array([1.0, 0.0]), 0.01, 2.0)
        >>> g.shape   # g ≈ d⟨∇f(x), u⟩u = (4, 0)
        (2,)
    """
    f_plus = loss.value(x + delta * u, theta)  # Alg. 1 line 4
    f_minus = loss.value(x - delta * u, theta)
    return (d_hull / (2.0 * delta)) * (f_plus - f_minus) * u  # Alg. 1 line 5


def one_point_gradient(loss, theta, x_played, u, delta, d_hull):
    """The one-point estimate of Flaxman, Kalai, McMahan (2004): ĝ = (d/δ) f(x_played) u.

    Args:
        loss: a ``jaxbco.losses`` family.
        theta: its data θₜ.
        x_played: (d,) the point actually played, y + δu (one query per round).
        u: (d,) the direction.
        delta: the perturbation δ > 0.
        d_hull: the hull's dimension d (``estimator_dim``).

    Returns:
        ĝ, shaped as ``u``.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import losses
        >>> from jaxbco.algorithms import toolkit
        >>> u = jnp.array([1.0, 0.0])
        >>> toolkit.one_point_gradient(losses.Linear(), jnp.array([2.0, 0.0]), 0.1 * u, u, 0.1, 2.0)
        Array([4., 0.], dtype=float32)
    """
    return (d_hull / delta) * loss.value(x_played, theta) * u


def estimator_dim(domain, dtype):
    """The dimension d of the gradient estimates: that of X's affine hull (d − 1 on the simplex).

    Args:
        domain: a ``jaxbco.sets`` feasible set X.
        dtype: the dtype of the result (that of the iterates).

    Returns:
        d as a scalar array of ``dtype``.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import sets
        >>> from jaxbco.algorithms import toolkit
        >>> float(toolkit.estimator_dim(sets.Simplex(3), jnp.float32))   # the hull of a 3-simplex
        2.0
    """
    return jnp.asarray(domain.hull_dim, dtype)


def loss_gradient(problem, theta, x, u, delta, bandit: bool):
    """The loss gradient a method steps along: estimated (bandit) or exact (full information).

    With ``bandit`` it is ``two_point_gradient`` at x (Eq. (4) of Hikima (2023)); otherwise
    the true gradient ∇fₜ(x) by automatic differentiation.

    Args:
        problem: the ``jaxbco.Problem``.
        theta: the loss data θₜ of the round.
        x: (d,) (or (d, runs)) the point xₜ.
        u: (d,) the direction on the unit sphere (unused when not ``bandit``).
        delta: the perturbation δ > 0 (unused when not ``bandit``).
        bandit: estimate from two loss values rather than differentiate.

    Returns:
        The gradient or its estimate, shaped as ``x``.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import toolkit
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> x, theta = jnp.array([0.5, 0.0]), jnp.zeros(2)
        >>> toolkit.loss_gradient(problem, theta, x, None, None, bandit=False)   # ∇f, exact
        Array([1., 0.], dtype=float32)
    """
    if bandit:
        return two_point_gradient(
            problem.loss, theta, x, u, delta, estimator_dim(problem.domain, x.dtype)
        )
    return ops.value_and_grad(lambda z: problem.loss.value(z, theta), x)[1]


def project(domain, x, xi, bandit: bool):
    """The Euclidean projection of a bandit method (onto (1 − ξ)X) or a full-information one (X).

    Projecting onto the shrunk set (1 − ξ)X keeps the queried points x ± δu in X when
    δ ≤ ξr.

    Args:
        domain: a ``jaxbco.sets`` feasible set X.
        x: (d,) (or (d, runs)) the point to project.
        xi: the shrinkage ξ ∈ (0, 1) (unused when not ``bandit``).
        bandit: project onto (1 − ξ)X rather than X.

    Returns:
        Π₍₁₋ξ₎ₓ(x) or Πₓ(x), shaped as ``x``.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import sets
        >>> from jaxbco.algorithms import toolkit
        >>> X = sets.L2Ball(jnp.zeros(2), 1.0)
        >>> toolkit.project(X, jnp.array([2.0, 0.0]), 0.5, bandit=True)   # onto (1 − ξ)X
        Array([0.5, 0. ], dtype=float32)
    """
    return project_shrunk(domain, x, xi) if bandit else domain.project(x)


def constraint_value_and_grad(problem, x, phi):
    """The constraint value g(x, φ) and its gradient ∇ₓg(x, φ), by one VJP.

    Where g is a maximum of rows the gradient is a subgradient.

    Args:
        problem: the ``jaxbco.Problem``.
        x: (d,) (or (d, runs)) the point.
        phi: the constraint data φₜ of the round.

    Returns:
        (g, ∇ₓg): a scalar (or (runs,)) and an array shaped as ``x``.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import toolkit
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> phi = problem.constraint_data.value   # a fixed halfspace (a, b)
        >>> g, grad = toolkit.constraint_value_and_grad(problem, jnp.zeros(2), phi)
        >>> g.shape, grad.shape
        ((), (2,))
    """
    return ops.value_and_grad(lambda z: problem.constraint.value(z, phi), x)


def rowwise(constraint) -> bool:
    """Whether a constraint family is linear rows, each row one constraint gₖ of Hikima (2023).

    Args:
        constraint: a ``jaxbco.constraints`` family.

    Returns:
        True for a linear or polyhedral family, else False.

    Example:
        >>> from jaxbco import constraints
        >>> from jaxbco.algorithms import toolkit
        >>> toolkit.rowwise(constraints.MultiLinear()), toolkit.rowwise(constraints.Ball())
        (True, False)
    """
    return constraint.kind in ("linear", "polyhedral")


def constraint_rows(problem, x, phi):
    """The constraints row by row: (gₖ(x))ₖ and the gradients ∇gₖ(x).

    For a linear or polyhedral family these are Ax − b and A; for any other family the one
    g and its gradient (m = 1).

    Args:
        problem: the ``jaxbco.Problem``.
        x: (d,) (or (d, runs)) the point.
        phi: the constraint data φₜ of the round.

    Returns:
        (values, rows): shapes (m,) and (m, d), the run axes after.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import toolkit
        >>> problem = problems.make("quadratic-ball", dim=2)   # one linear row
        >>> phi = problem.constraint_data.value
        >>> values, rows = toolkit.constraint_rows(problem, jnp.zeros(2), phi)
        >>> values.shape, rows.shape
        ((1,), (1, 2))
    """
    if rowwise(problem.constraint):
        A, b = problem.constraint.rows(phi)
        A = jnp.asarray(A, x.dtype)
        return jnp.sum(A * x[None], axis=1) - jnp.asarray(b, x.dtype), A
    g, grad = constraint_value_and_grad(problem, x, phi)
    return g[None], grad[None]
