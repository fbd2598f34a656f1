"""A component class that defines how its values are made declares its structure itself
(``jaxbco._src.declarations``): what a parent declared about its own values is not inherited
by a subclass whose ``sample``, ``value``, ``rows`` or ``project`` may break it (issue 57: a
``Fixed`` whose ``sample`` drifted was trusted as constant)."""

import jax.numpy as jnp

from jaxbco import constraints, losses, sequences, sets


class AbsoluteAsQuadratic(losses.Quadratic):
    """Another function under Quadratic's name: x* must not be the mean theta's projection."""

    def value(self, x, theta):
        return jnp.sum(jnp.abs(x - theta))


class ScaledLipschitz(losses.Quadratic):
    """Quadratic's values, one more method: its declarations still hold."""

    def lipschitz(self, theta, radius):
        return 2.0 * super().lipschitz(theta, radius)


class NormBound(constraints.Linear):
    """A curved g under Linear's name: no rows, no halfspace prox."""

    def value(self, x, phi):
        return jnp.sum(x * x) - phi[1]


class Shrunk(sets.L2Ball):
    """A projection of its own: not the L2 ball's closed forms."""

    def project(self, x):
        return 0.5 * super().project(x)


class RestatedReplay(sequences.Replay):
    """Draws what Replay draws and says so."""

    shared = True
    recorded = sequences.Replay.recorded
    length = sequences.Replay.length

    def sample(self, key, t):
        return super().sample(key, t)


def test_a_class_that_makes_its_own_values_does_not_inherit_their_structure():
    assert losses.Quadratic.offline == "quadratic"
    assert AbsoluteAsQuadratic.offline == "first-order"  # the generic comparator
    assert ScaledLipschitz.offline == "quadratic"  # value not redefined: kept
    assert NormBound().kind == "smooth" and constraints.Linear().kind == "linear"
    assert Shrunk.form is None and sets.L2Ball.form == "l2-ball"
    assert sequences.Fixed.constant and sequences.Replay.shared
    replay = RestatedReplay(jnp.ones((5, 2)))
    assert replay.shared and replay.length == 5 and replay.recorded(3).shape == (3, 2)
    assert not replay.constant


def test_the_built_ins_keep_their_declarations():
    """Every built-in subclasses its abstract base directly: nothing of theirs changes."""
    assert (losses.Absolute.l1_breakpoints, losses.Absolute.smooth) == (True, False)
    assert (losses.LogWealth.wealth, losses.Logistic.offline) == (True, "newton")
    assert constraints.MultiLinear().kind == "polyhedral"
    assert constraints.Ellipsoid.quadratic_form == "ellipsoid"
    assert constraints.Shifted.shift
    assert (sets.Box.form, sets.Simplex.form, sets.L1Ball.form) == ("box", "simplex", "l1-ball")
    assert sequences.Slackened.slack and sequences.Fixed.shared
