"""The toolkit's hyperparameter helpers: the shrinkage, argument checks and the problem's
constants for default step sizes (each re-exported by ``jaxbco.algorithms.toolkit``)."""

from __future__ import annotations

from jaxbco._src import checks
from jaxbco.hyper import check_against_domain
from jaxbco.offline.problem_constants import problem_constants


def shrinkage(domain, delta, what: str = "delta") -> float:
    """The smallest admissible shrinkage ξ = δ/r, with r the inscribed radius of X.

    Args:
        domain: a ``jaxbco.sets`` feasible set X.
        delta: the perturbation δ > 0, a number.
        what: the name of δ in the error message.

    Returns:
        ξ as a float.

    Raises:
        ValueError: if ξ is 1 or more (δ too large for X).

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import sets
        >>> from jaxbco.algorithms import toolkit
        >>> toolkit.shrinkage(sets.L2Ball(jnp.zeros(2), 2.0), 0.1)   # δ/r
        0.05
    """
    _, r = domain.inscribed_ball()
    xi = float(delta) / float(r)
    if xi >= 1.0:
        raise ValueError(
            f"xi = {what} / r = {xi:g} must lie in (0, 1); choose a smaller {what} "
            f"(the inscribed radius of X is r = {float(r):g})"
        )
    return xi


def check_type(name: str, hyper, cls) -> None:
    """Check that an algorithm was given hyperparameters of its own type.

    Args:
        name: the algorithm's name, for the message.
        hyper: the hyperparameters given.
        cls: the hyperparameter class the algorithm expects.

    Raises:
        ValueError: unless ``hyper`` is an instance of ``cls``.

    Example:
        >>> import jaxbco
        >>> from jaxbco.algorithms import toolkit
        >>> toolkit.check_type("RectifiedBCO", jaxbco.Hyper(c=0.5, eps=0.1, xi=0.1, delta=0.01),
        ...                    jaxbco.Hyper)   # passes: raises only for another type
    """
    if not isinstance(hyper, cls):
        raise ValueError(f"{name} needs {cls.__name__} hyperparameters; got {type(hyper).__name__}")


def check_perturbation(hyper, domain, bandit: bool = True) -> None:
    """Check δ ≤ ξr, so that the queried points x ± δu stay in X (bandit methods only).

    Args:
        hyper: the hyperparameters, with fields ``xi`` and ``delta`` (traced values are not
            checked).
        domain: a ``jaxbco.sets`` feasible set X, with inscribed radius r.
        bandit: check only when True (a full-information method queries no perturbed point).

    Raises:
        ValueError: if δ > ξr.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import sets
        >>> from jaxbco.algorithms import AgarwalHyper, toolkit
        >>> hyper = AgarwalHyper(eta=0.1, delta=0.5, xi=0.1)
        >>> toolkit.check_perturbation(hyper, sets.L2Ball(jnp.zeros(2), 1.0))
        Traceback (most recent call last):
        ValueError: ...
    """
    if bandit:
        check_against_domain(hyper, domain)


def positive(name, value):
    """Check that every entry of a hyperparameter is positive (traced values are not checked).

    Args:
        name: the hyperparameter's name, for the message.
        value: a number or array.

    Returns:
        None (the check raises instead).

    Raises:
        ValueError: if an entry is 0 or less.

    Example:
        >>> from jaxbco.algorithms import toolkit
        >>> toolkit.positive("eta", 0.1)   # passes
        >>> toolkit.positive("eta", 0.0)
        Traceback (most recent call last):
        ValueError: ...
    """
    checks.check_range(name, value, low=0.0, low_open=True)


def unit_open(name, value):
    """Check that every entry of a hyperparameter lies in (0, 1) (traced values are not checked).

    Args:
        name: the hyperparameter's name, for the message.
        value: a number or array.

    Returns:
        None (the check raises instead).

    Raises:
        ValueError: if an entry is 0 or less, or 1 or more.

    Example:
        >>> from jaxbco.algorithms import toolkit
        >>> toolkit.unit_open("xi", 0.5)   # passes
        >>> toolkit.unit_open("xi", 1.0)
        Traceback (most recent call last):
        ValueError: ...
    """
    checks.check_range(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


def given_or(value, name: str, default: float) -> float:
    """A user's constant, checked positive, or the problem's default when none is given.

    Args:
        value: the user's constant, or None.
        name: its name, for the message.
        default: the problem's value (e.g. from ``constants``).

    Returns:
        ``value`` or ``default``, as a float.

    Raises:
        ValueError: if ``value`` is given and not positive.

    Example:
        >>> from jaxbco.algorithms import toolkit
        >>> toolkit.given_or(None, "lipschitz", 2.0), toolkit.given_or(3, "lipschitz", 2.0)
        (2.0, 3.0)
    """
    if value is None:
        return float(default)
    checks.check_range(name, value, low=0.0, low_open=True)
    return float(value)


def constants(problem, horizon: int) -> dict:
    """The problem's constants F, G, D, C, from which default step sizes are set.

    They come from ``jaxbco.offline.problem_constants.problem_constants`` on 2 seeds and at most 512 rounds
    of random data (all rounds of replayed data): F = maxₜ Lip(fₜ) and G = maxₜ Lip(gₜ) over
    X, D = diam X and C ≥ maxₜ |fₜ(x)| on X.

    Args:
        problem: the ``jaxbco.Problem``.
        horizon: the number of rounds T.

    Returns:
        A dict with keys "F", "G", "D", "C", "radius", "F_from" and "G_from".

    Example:
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import toolkit
        >>> k = toolkit.constants(problems.make("quadratic-ball", dim=2), 100)
        >>> sorted(k)
        ['C', 'D', 'F', 'F_from', 'G', 'G_from', 'radius']
    """
    return problem_constants(problem, horizon, seeds=2, rounds=512)
