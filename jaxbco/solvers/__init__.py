"""Solvers for the proximal subproblem of Eq. (5) (Alg. 1 line 6).

Eq. (5): xₜ₊₁ = argmin over x ∈ (1 − ξ)X of ⟨g̃ₜ, x − xₜ⟩ + λₜγₜ[gₜ(x)]₊ + (αₜ/2)‖x − xₜ‖₂².
Completing the square with y = xₜ − g̃ₜ/αₜ, this is argmin over x ∈ S = (1 − ξ)X of
P(x) = (α/2)‖x − y‖₂² + β[g(x)]₊ with β = λₜγₜ, the form every solver here receives.

``Dual`` (the default) picks an exact method for the set and the constraint family
(``Dual.method``); ``Subgradient`` is the inexact fixed-step alternative."""

from jaxbco.solvers._base import AbstractProxSolver as AbstractProxSolver
from jaxbco.solvers._base import prox_objective as prox_objective
from jaxbco.solvers.ball_halfspace import BallHalfspace as BallHalfspace
from jaxbco.solvers.cutting_plane import CuttingPlane as CuttingPlane
from jaxbco.solvers.dual import Dual as Dual
from jaxbco.solvers.dual import project_feasible as project_feasible
from jaxbco.solvers.linear import LinearDual as LinearDual
from jaxbco.solvers.polyhedral import PolyhedralDual as PolyhedralDual
from jaxbco.solvers.quadratic import QuadraticIPM as QuadraticIPM
from jaxbco.solvers.smooth import SmoothDual as SmoothDual
from jaxbco.solvers.smooth_ipm import SmoothIPM as SmoothIPM
from jaxbco.solvers.subgradient import Subgradient as Subgradient
from jaxbco.solvers.two_balls import BallBall as BallBall

SOLVERS = {"dual": Dual, "subgradient": Subgradient}


def solver_path(solver, problem) -> str:
    """Which method ``solver`` takes on ``problem``'s prox step (for benchmarks and reports):
    the ``name`` of ``Dual.method``'s choice, else the solver's class name."""
    method = getattr(solver, "method", None)
    return (
        type(solver).__name__ if method is None else method(problem.domain, problem.constraint).name
    )
