"""A researcher's own algorithm and problems, in a module outside the package (imported by
``module:Name`` specs in tests/test_own_algorithm.py, as a user's ``mypkg.algs`` would be).

``OwnDual`` is Mahdavi, Jin & Yang (2012)'s primal-dual step with one multiplier, written with
the public toolkit only; on a problem with one constraint it is the built-in mahdavi-pd.
"""

from typing import ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import jaxbco
from jaxbco import constraints, losses, sequences, sets
from jaxbco.algorithms import AbstractAlgorithm, register, toolkit


class OwnHyper(eqx.Module):
    eta: jax.Array = eqx.field(converter=toolkit.real)
    delta_m: jax.Array = eqx.field(converter=toolkit.real)
    delta: jax.Array = eqx.field(converter=toolkit.real)
    xi: jax.Array = eqx.field(converter=toolkit.real)

    def __check_init__(self):
        for name in ("eta", "delta_m", "delta"):
            toolkit.positive(name, getattr(self, name))
        toolkit.unit_open("xi", self.xi)


class OwnState(NamedTuple):
    x: jax.Array
    lam: jax.Array


@register(
    "own-dual",
    display="own dual (Mahdavi et al. 2012)",
    regret_order="T^(1/2)",
    violation_order="soft T^(3/4)",
    exponents={"regret": 0.5, "soft_violation": 0.75},
)
class OwnDual(AbstractAlgorithm):
    hyper_class: ClassVar[type] = OwnHyper
    blocks = True

    def default_hyper(self, problem, horizon):
        k = toolkit.constants(problem, horizon)
        g = max(k["F"], k["G"])
        eta = float(problem.domain.diameter()) / (problem.domain.hull_dim * g * np.sqrt(horizon))
        delta = 1.0 / horizon
        return OwnHyper(
            eta=eta, delta_m=2.0 * g * g, delta=delta, xi=toolkit.shrinkage(problem.domain, delta)
        )

    def check_hyper(self, hyper, problem):
        toolkit.check_type("OwnDual", hyper, OwnHyper)
        toolkit.check_perturbation(hyper, problem.domain)

    def init(self, problem, hyper, x1):
        return OwnState(x=x1, lam=jnp.zeros((1,), x1.dtype))

    def step(self, state, problem, hyper, inp):
        x, lam = state
        grad_f = toolkit.loss_gradient(problem, inp.theta, x, inp.u, hyper.delta, True)
        g, grad_g = toolkit.constraint_rows(problem, x, inp.phi)
        pull = jnp.sum(lam[:, None] * grad_g, axis=0)
        x_next = toolkit.project(problem.domain, x - hyper.eta * (grad_f + pull), hyper.xi, True)
        lam_next = jnp.maximum(lam + hyper.eta * (g - hyper.delta_m * hyper.eta * lam), 0.0)
        return OwnState(x=x_next, lam=lam_next)

    def decision(self, state):
        return state.x

    def multiplier(self, state):
        return jnp.sum(state.lam, axis=0)


class Unregistered(OwnDual):
    """The same method, not registered: a spec names it."""

    blocks = True


def box_budget(dim: int = 3, horizon: int | None = None) -> jaxbco.Problem:
    """A box [-1, 1]^d, quadratic losses around 0.5, one fixed halfspace sum x <= 0.2."""
    return jaxbco.Problem(
        sets.Box(-jnp.ones(dim), jnp.ones(dim)),
        losses.Quadratic(),
        sequences.IIDNormal(jnp.full(dim, 0.5), 0.1),
        constraints.Linear(),
        sequences.Fixed((jnp.ones(dim), jnp.asarray(0.2))),
    )


#: A fixed Problem object (``module:FIXED`` names it as it is).
FIXED = box_budget(2)

NOT_A_PROBLEM = 3


class NeedsArg(Unregistered):
    """A user's mistake: a field without a default, so the class does not build bare."""

    window: int


def failing_factory(problem):
    """A user's mistake: an algorithm factory that raises."""
    raise RuntimeError("no algorithm today")


def failing_builder(dim: int = 3):
    """A user's mistake: a problem builder that raises."""
    raise KeyError("missing data file")
