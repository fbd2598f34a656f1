"""The algorithm author's toolkit: the pieces every bandit method with constraints is built
from, public and documented, and the ones the built-in algorithms use themselves.

Each works on one run (vectors (d,)) and on a seeds-minor block (vectors (d, runs), per-run
scalars (runs,); ``jaxbco._blocks``), so an algorithm written with them can declare
``blocks = True`` (and check it with ``jaxbco.check_component``).

    estimates      two_point_gradient (Eq. 4 of Hikima et al.; Agarwal et al. 2010),
                   one_point_gradient (Flaxman et al. 2004), loss_gradient (either, or
                   jax.grad of f for a full-information method), estimator_dim
    constraints    constraint_value_and_grad (g and a (sub)gradient), constraint_rows (one
                   (g_k, grad g_k) per row of a linear family), rowwise
    sets           project (onto the shrunk set (1-xi)X of a bandit method, else X),
                   project_shrunk, shrinkage (xi = delta / r, checked < 1)
    hyperparameters  real (the converter of a hyperparameter field), positive, unit_open,
                   check_perturbation (delta <= xi r), check_type, given_or, constants
                   (the problem's F, G, D, C for default step sizes)

Example (the heart of a two-point primal-dual method's ``step``)::

    from jaxbco.algorithms import toolkit as tk

    grad_f = tk.loss_gradient(problem, inp.theta, x, inp.u, hyper.delta, bandit=True)
    g, grad_g = tk.constraint_value_and_grad(problem, x, inp.phi)
    x_next = tk.project(problem.domain, x - hyper.eta * (grad_f + lam * grad_g), hyper.xi, True)
    lam_next = jnp.maximum(lam + hyper.eta * g, 0.0)
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbco import _checks, _ops
from jaxbco._checks import real as real
from jaxbco.constants import problem_constants
from jaxbco.hyper import check_against_domain
from jaxbco.sets import project_shrunk as project_shrunk


def two_point_gradient(loss, theta, x, u, delta, d_hull):
    """Eq. (4) of Hikima et al. (Agarwal et al. 2010): the two-point estimate

        g~ = d / (2 delta) [f(x + delta u) - f(x - delta u)] u.

    Args: ``loss`` (a ``jaxbco.losses`` family), its data ``theta``, the point ``x``, a
    direction ``u`` uniform on the unit sphere of X's hull, ``delta`` > 0, ``d_hull`` (the
    hull's dimension: ``estimator_dim``).  Returns g~, shaped as ``x``."""
    f_plus = loss.value(x + delta * u, theta)  # Alg. 1 line 4
    f_minus = loss.value(x - delta * u, theta)
    return (d_hull / (2.0 * delta)) * (f_plus - f_minus) * u  # Alg. 1 line 5


def one_point_gradient(loss, theta, x_played, u, delta, d_hull):
    """Flaxman, Kalai, McMahan (2004): g^ = (d / delta) f(x_played) u, with x_played = y +
    delta u the point actually played (one query per round).  Returns g^, shaped as ``u``."""
    return (d_hull / delta) * loss.value(x_played, theta) * u


def estimator_dim(domain, dtype):
    """d of the estimates: the dimension of X's affine hull (d - 1 on the simplex), as an
    array of ``dtype``."""
    return jnp.asarray(domain.hull_dim, dtype)


def loss_gradient(problem, theta, x, u, delta, bandit: bool):
    """``two_point_gradient`` at x when ``bandit``, else the true gradient jax.grad(f)(x) (a
    full-information method)."""
    if bandit:
        return two_point_gradient(problem.loss, theta, x, u, delta,
                                  estimator_dim(problem.domain, x.dtype))
    return _ops.value_and_grad(lambda z: problem.loss.value(z, theta), x)[1]


def project(domain, x, xi, bandit: bool):
    """Pi_{(1-xi)X}(x) when ``bandit`` (so that x +- delta u stays in X), else Pi_X(x)."""
    return project_shrunk(domain, x, xi) if bandit else domain.project(x)


def constraint_value_and_grad(problem, x, phi):
    """(g(x, phi), grad_x g(x, phi)) by a VJP (a subgradient where g = max of rows)."""
    return _ops.value_and_grad(lambda z: problem.constraint.value(z, phi), x)


def rowwise(constraint) -> bool:
    """Whether the family is linear rows (each row one constraint g_k of the paper)."""
    return constraint.kind in ("linear", "polyhedral")


def constraint_rows(problem, x, phi):
    """(g_k(x))_k and the rows grad g_k(x) (shapes (m,), (m, d), with the run axes after):
    the rows A x - b and A of a linear or polyhedral family, else the one g and its gradient."""
    if rowwise(problem.constraint):
        A, b = problem.constraint.rows(phi)
        A = jnp.asarray(A, x.dtype)
        return jnp.sum(A * x[None], axis=1) - jnp.asarray(b, x.dtype), A
    g, grad = constraint_value_and_grad(problem, x, phi)
    return g[None], grad[None]


def shrinkage(domain, delta, what: str = "delta") -> float:
    """xi = delta / r (the smallest admissible shrinkage: r is X's inscribed radius), with a
    clear error if it is >= 1."""
    _, r = domain.inscribed_ball()
    xi = float(delta) / float(r)
    if xi >= 1.0:
        raise ValueError(f"xi = {what} / r = {xi:g} must lie in (0, 1); choose a smaller {what} "
                         f"(the inscribed radius of X is r = {float(r):g})")
    return xi


def check_type(name: str, hyper, cls) -> None:
    """ValueError unless ``hyper`` is an instance of ``cls`` (an algorithm's hyperparameters)."""
    if not isinstance(hyper, cls):
        raise ValueError(f"{name} needs {cls.__name__} hyperparameters; got {type(hyper).__name__}")


def check_perturbation(hyper, domain, bandit: bool = True) -> None:
    """delta in (0, xi r] so that the queried points stay in X (bandit methods only)."""
    if bandit:
        check_against_domain(hyper, domain)


def positive(name, value):
    """ValueError naming ``name`` unless every entry of ``value`` is > 0 (concrete values)."""
    _checks.check_range(name, value, low=0.0, low_open=True)


def unit_open(name, value):
    """ValueError naming ``name`` unless every entry of ``value`` lies in (0, 1)."""
    _checks.check_range(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


def given_or(value, name: str, default: float) -> float:
    """A user's constant (checked > 0) or the problem's ``default``."""
    if value is None:
        return float(default)
    _checks.check_range(name, value, low=0.0, low_open=True)
    return float(value)


def constants(problem, horizon: int) -> dict:
    """The problem's F, G, D, C (``jaxbco.constants.problem_constants``) for default step
    sizes: 2 seeds and at most 512 rounds of random data (replayed data: all rounds)."""
    return problem_constants(problem, horizon, seeds=2, rounds=512)
