"""Abstract online algorithm: ``init`` and a pure ``step`` that the engine scans over rounds."""

from __future__ import annotations

import abc
from typing import ClassVar, NamedTuple

import equinox as eqx
import jax


class RoundInput(NamedTuple):
    """What round t gives the learner: t, the loss data theta_t (to be used only through f's
    values, or through jax.grad of f for full-information methods), this round's and next
    round's constraint data, the direction u_t (drawn by the engine or replayed) and a key for
    any other randomness of the algorithm's own."""

    t: jax.Array
    theta: object
    phi: object
    phi_next: object
    u: jax.Array
    key: jax.Array


class AbstractAlgorithm(eqx.Module):
    """``state = init(problem, hyper, x1)``; ``state = step(state, problem, hyper, inp)``;
    ``decision(state)`` is x_t; ``multiplier(state)`` the penalty or dual variable (or 0).

    ``knows_constraint`` (class level, for tables and plots): True for an oracle baseline that
    is given a fixed g in advance and projects onto (1-xi)X n {g <= 0} (its violation is then 0
    by construction, not learned); False for the methods that see g only through its values."""

    knows_constraint: ClassVar[bool] = False
    #: declared by each class itself (``jaxbco._blocks``): play/step/init take seeds-minor blocks
    blocks: ClassVar[bool] = False
    #: declared by each class itself: its block code also runs inside the fused GPU kernel
    #: (``jaxbco._blocks``, ``jaxbco.fused``)
    kernel: ClassVar[bool] = False
    hyper_class: ClassVar[type | None] = None  # the hyperparameters' class (None: unknown)

    @abc.abstractmethod
    def default_hyper(self, problem, horizon: int):
        """The algorithm's hyperparameters (a pytree of arrays) at the orders its paper proves."""

    def check_hyper(self, hyper, problem) -> None:
        """Raise ValueError for hyperparameters outside their allowed ranges (concrete only)."""

    def prox_methods(self, problem) -> tuple:
        """The prox solvers (classes) ``step`` calls on ``problem`` (``jaxbco.backend`` checks
        that they run on blocks): the method its ``solver`` picks, if it has one."""
        solver = getattr(self, "solver", None)
        if solver is None:
            return ()
        pick = getattr(solver, "method", None)
        return (type(solver) if pick is None else pick(problem.domain, problem.constraint),)

    def play(self, state, problem, hyper, inp: RoundInput) -> jax.Array:
        """The point played in round t (x_t; a one-point method plays a perturbed point)."""
        return self.decision(state)

    @abc.abstractmethod
    def init(self, problem, hyper, x1):
        """The state before round 1."""

    @abc.abstractmethod
    def step(self, state, problem, hyper, inp: RoundInput):
        """Round t: from the state holding x_t to the state holding x_{t+1}."""

    @abc.abstractmethod
    def decision(self, state) -> jax.Array:
        """x_t."""

    @abc.abstractmethod
    def multiplier(self, state) -> jax.Array:
        """lambda_t (or the algorithm's dual variable)."""

    def prox_certificate(self, state):
        """The worst certificate of the prox steps so far (``jaxbco.solvers.gap``: relative
        duality gap or distance from the set), or None for a method without a prox solve."""
        return None
