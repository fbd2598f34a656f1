"""Issue 56's example: a researcher's own non-smooth problem and own algorithm, on which
the pathwise gradient of J through a whole run has the wrong sign.

Problem: X = [-1, 1]^5, f_t(x) = ||x - theta_t||_1 with theta_t ~ N(m, 0.3^2 I) i.i.d., and
the smooth constraint g(x) = logsumexp(A x) - b (A: 3 x 5, fixed), which binds at the
optimum.  Algorithm ("polyak-two-point"): the two-point estimate (Eq. 4), a gradient step of
size eta, then a Polyak step towards {g <= 0} scaled by rho, then the projection onto
(1 - xi) X:

    y       = x_t - eta g~_t
    x_{t+1} = Pi_{(1-xi)X}( y - rho [g(y)]_+ grad g(y) / ||grad g(y)||^2 )

``PolyakHyper`` declares its fields' ranges (``ranges``), so ``jaxbco tune --free rho`` needs
no transform.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import jaxbco
from jaxbco import constraints, losses, sequences, sets
from jaxbco.algorithms import AbstractAlgorithm, toolkit

DIM = 5
_rng = np.random.default_rng(56)
A = _rng.normal(size=(3, DIM)).astype(np.float32)
MEAN = np.full(DIM, 0.6, np.float32)


def _lse(x, b):
    return jax.nn.logsumexp(jnp.asarray(A, x.dtype) @ x) - b


def problem(dim: int = DIM, horizon: int = 1000) -> jaxbco.Problem:
    """The example problem (``dim`` must be 5; ``horizon`` is unused: i.i.d. data)."""
    if dim != DIM:
        raise ValueError(f"dim: this example is defined for dim = {DIM}; got {dim}")
    b = float(jax.nn.logsumexp(A @ MEAN)) - 0.5  # binds: the data's mean is infeasible
    return jaxbco.Problem(
        sets.Box(-jnp.ones(DIM), jnp.ones(DIM)),
        losses.Absolute(),
        sequences.IIDNormal(jnp.asarray(MEAN), jnp.full(DIM, 0.3)),
        constraints.CustomConstraint(_lse),
        sequences.Fixed(jnp.asarray(b, jnp.float32)),
    )


class PolyakHyper(eqx.Module):
    """eta, rho > 0; delta > 0; xi in (0, 1)."""

    eta: jax.Array = eqx.field(converter=toolkit.real)
    rho: jax.Array = eqx.field(converter=toolkit.real)
    delta: jax.Array = eqx.field(converter=toolkit.real)
    xi: jax.Array = eqx.field(converter=toolkit.real)
    ranges: ClassVar[dict] = {
        "eta": "positive",
        "rho": "positive",
        "delta": "positive",
        "xi": (0.0, 1.0),
    }

    def __check_init__(self):
        for name in ("eta", "rho", "delta"):
            toolkit.positive(name, getattr(self, name))
        toolkit.unit_open("xi", self.xi)


class PolyakState(NamedTuple):
    x: jax.Array


class PolyakTwoPoint(AbstractAlgorithm):
    """Two-point gradient step, then a Polyak feasibility step (see the module docstring)."""

    hyper_class: ClassVar[type] = PolyakHyper

    def default_hyper(self, problem, horizon):
        eta = float(problem.domain.diameter()) / np.sqrt(horizon)  # D / sqrt(T)
        delta = 1.0 / horizon
        return PolyakHyper(
            eta=eta, rho=1.0, delta=delta, xi=toolkit.shrinkage(problem.domain, delta)
        )

    def check_hyper(self, hyper, problem):
        toolkit.check_type("PolyakTwoPoint", hyper, PolyakHyper)
        toolkit.check_perturbation(hyper, problem.domain)

    def init(self, problem, hyper, x1):
        return PolyakState(x=x1)

    def step(self, state, problem, hyper, inp):
        grad_f = toolkit.loss_gradient(problem, inp.theta, state.x, inp.u, hyper.delta, True)
        y = state.x - hyper.eta * grad_f
        g, grad_g = toolkit.constraint_value_and_grad(problem, y, inp.phi)
        y = y - hyper.rho * jnp.maximum(g, 0.0) * grad_g / (jnp.sum(grad_g**2) + 1e-12)
        return PolyakState(x=toolkit.project(problem.domain, y, hyper.xi, True))

    def decision(self, state):
        return state.x

    def multiplier(self, state):
        return jnp.zeros_like(state.x[0])
