"""Abstract online algorithm: ``init`` and a pure ``step`` that the engine scans over rounds."""

from __future__ import annotations

import abc
from typing import ClassVar, NamedTuple

import equinox as eqx
import jax


class RoundInput(NamedTuple):
    """What round t gives the learner (built by the engine, read by ``step`` and ``play``).

    Args:
        t: the round, an int32 scalar in 1..T.
        theta: the loss data θₜ, to be used only through f's values (or through ``jax.grad``
            of f for a full-information method).
        phi: this round's constraint data φₜ.
        phi_next: next round's constraint data φₜ₊₁ (Alg. 1 line 9 reads gₜ₊₁).
        u: (d,) the direction uₜ, uniform on the unit sphere of X's hull (drawn by the engine
            or replayed; Alg. 1 line 3).
        key: a PRNG key for any other randomness of the algorithm's own.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import RectifiedBCO, RoundInput
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> algorithm = RectifiedBCO()
        >>> hyper = algorithm.default_hyper(problem, 10)
        >>> state = algorithm.init(problem, hyper, problem.initial_point())
        >>> phi = problem.constraint_data.value
        >>> inp = RoundInput(t=jnp.int32(1), theta=jnp.ones(2), phi=phi, phi_next=phi,
        ...                  u=jnp.array([1.0, 0.0]), key=jax.random.key(0))
        >>> algorithm.decision(algorithm.step(state, problem, hyper, inp)).shape   # x₂
        (2,)
    """

    t: jax.Array
    theta: object
    phi: object
    phi_next: object
    u: jax.Array
    key: jax.Array


class AbstractAlgorithm(eqx.Module):
    """An online algorithm: a pure ``step`` that the engine scans over the rounds.

    ``state = init(problem, hyper, x1)``; then per round ``state = step(state, problem, hyper,
    inp)``; ``decision(state)`` is xₜ and ``multiplier(state)`` the penalty or dual variable
    (or 0).  An algorithm of your own subclasses this (an equinox module: its fields are its
    configuration), implements ``default_hyper``, ``init``, ``step``, ``decision`` and
    ``multiplier``, and is registered with ``registry.register``.

    ``knows_constraint`` (class level, for tables and plots): True for an oracle baseline that
    is given a fixed g in advance and projects onto (1 − ξ)X ∩ {g ≤ 0} (its violation is then
    0 by construction, not learned); False for the methods that see g only through its values.
    ``hyper_class``: the hyperparameters' class (None: unknown).

    Example:
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import AbstractAlgorithm, RectifiedBCO
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> algorithm = RectifiedBCO()
        >>> isinstance(algorithm, AbstractAlgorithm), algorithm.blocks, algorithm.knows_constraint
        (True, True, False)
        >>> hyper = algorithm.default_hyper(problem, 10)
        >>> state = algorithm.init(problem, hyper, problem.initial_point())
        >>> algorithm.decision(state).shape, float(algorithm.multiplier(state))   # x₁, λ₁ = 0
        ((2,), 0.0)
    """

    knows_constraint: ClassVar[bool] = False
    #: declared by each class itself: play/step/init also take seeds-minor blocks (vectors
    #: (d, runs), per-run scalars (runs,))
    blocks: ClassVar[bool] = False
    #: declared by each class itself: its block code also runs inside the fused GPU kernel
    #: (``jaxbco.fused``)
    kernel: ClassVar[bool] = False
    hyper_class: ClassVar[type | None] = None  # the hyperparameters' class (None: unknown)

    @abc.abstractmethod
    def default_hyper(self, problem, horizon: int):
        """The algorithm's hyperparameters at the orders its paper proves.

        Args:
            problem: the ``Problem``.
            horizon: T.

        Returns:
            A pytree of arrays (an instance of ``hyper_class``).
        """

    def check_hyper(self, hyper, problem) -> None:
        """Raise ValueError for hyperparameters outside their allowed ranges (concrete only)."""

    def prox_methods(self, problem) -> tuple:
        """The prox solvers (classes) ``step`` calls on ``problem`` (``jaxbco.backends`` checks
        that they run on blocks): the method its ``solver`` picks, if it has one."""
        solver = getattr(self, "solver", None)
        if solver is None:
            return ()
        pick = getattr(solver, "method", None)
        return (type(solver) if pick is None else pick(problem.domain, problem.constraint),)

    def play(self, state, problem, hyper, inp: RoundInput) -> jax.Array:
        """The point played in round t, (d,): xₜ (a one-point method plays a perturbed point)."""
        return self.decision(state)

    @abc.abstractmethod
    def init(self, problem, hyper, x1):
        """The state before round 1.

        Args:
            problem: the ``Problem``.
            hyper: the hyperparameters (``default_hyper``'s class).
            x1: (d,) the initial decision x₁.

        Returns:
            The state: a pytree of arrays (e.g. a ``NamedTuple`` holding x₁ and λ₁ = 0).
        """

    @abc.abstractmethod
    def step(self, state, problem, hyper, inp: RoundInput):
        """Round t: from the state holding xₜ to the state holding xₜ₊₁.

        Args:
            state: the state holding xₜ (of ``init``'s structure).
            problem: the ``Problem``.
            hyper: the hyperparameters.
            inp: the round's ``RoundInput``.

        Returns:
            The state holding xₜ₊₁, of the same structure, shapes and dtypes.
        """

    @abc.abstractmethod
    def decision(self, state) -> jax.Array:
        """The decision xₜ held by ``state``, (d,)."""

    @abc.abstractmethod
    def multiplier(self, state) -> jax.Array:
        """The penalty λₜ (or the algorithm's dual variable; 0 for none), a scalar."""

    def light(self) -> AbstractAlgorithm:
        """This algorithm with what rarely runs left out of its compiled rounds (the
        default: itself).  The runners run it first and run ``self`` only where its
        ``prox_certificate`` fails (``solvers.gap.needs_refinement``): the steps, hence every
        curve, are the same; a certificate may differ in its round-off digits."""
        return self

    def prox_certificate(self, state):
        """The worst certificate of the prox steps so far (``jaxbco.solvers.gap``: relative
        duality gap or distance from the set), or None for a method without a prox solve."""
        return None
