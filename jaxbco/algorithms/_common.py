"""Pieces the oracle baselines share (private; an author's toolkit is
``jaxbco.algorithms.toolkit``): the static test for a constraint known in advance and the set
a method given g in advance projects onto, warm-started."""

from __future__ import annotations

from jaxbco.sets import project_shrunk
from jaxbco.solvers.dual import Dual, project_feasible


def is_fixed(problem) -> bool:
    """True when g is the same every round (a static, Python-level check)."""
    return problem.constraint_data.constant


def fixed_phi(problem):
    """The fixed constraint's data (None when g varies over rounds)."""
    return problem.constraint_data.every_round() if is_fixed(problem) else None


def known_set_projector(problem, xi, phi):
    """z -> Pi_{(1-xi)X n {g ≤ 0}}(z) when g is fixed (known in advance; ``phi`` its data),
    else z -> Pi_{(1-xi)X}(z): the set a projection-only bandit method can use."""
    if is_fixed(problem):
        return lambda z: project_feasible(problem.domain, xi, problem.constraint, phi, z)
    return lambda z: project_shrunk(problem.domain, z, xi)


def oracle_methods(problem, knows_constraint: bool) -> tuple:
    """The prox method ``known_set_projector`` calls (``AbstractAlgorithm.prox_methods``)."""
    if knows_constraint and is_fixed(problem):
        return (Dual.method(problem.domain, problem.constraint),)
    return ()


def projector(problem, xi, phi, knows_constraint: bool):
    """``known_set_projector`` for an algorithm given g in advance, else z -> Pi_{(1-xi)X}(z)."""
    if knows_constraint:
        return known_set_projector(problem, xi, phi)
    return lambda z: project_shrunk(problem.domain, z, xi)


def projection_warm(problem, dtype, knows_constraint: bool):
    """The state ``warm_projector`` carries between rounds: the projection's multiplier where
    its method keeps one (several halfspaces: ``Dual.init_warm``), else ()."""
    if knows_constraint and is_fixed(problem):
        return Dual().init_warm(problem, dtype)
    return ()


def warm_projector(problem, xi, phi, knows_constraint: bool):
    """``projector`` as (z, warm) -> (x, warm'): the projection onto a fixed g started from
    last round's multiplier (``projection_warm``; consecutive projections differ little, so the
    dual Newton takes a step or two instead of a cold ascent)."""
    if knows_constraint and is_fixed(problem):
        return lambda z, warm: project_feasible(
            problem.domain, xi, problem.constraint, phi, z, warm
        )
    plain = projector(problem, xi, phi, knows_constraint)
    return lambda z, warm: (plain(z), warm)
