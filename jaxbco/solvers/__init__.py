"""Solvers for the proximal subproblem of Eq. (5)."""

from jaxbco.solvers._base import AbstractProxSolver as AbstractProxSolver
from jaxbco.solvers._base import prox_objective as prox_objective
from jaxbco.solvers.dual import Dual as Dual
from jaxbco.solvers.dual import project_feasible as project_feasible
from jaxbco.solvers.subgradient import Subgradient as Subgradient

SOLVERS = {"dual": Dual, "subgradient": Subgradient}


def solver_path(solver, problem) -> str:
    """Which method ``solver`` takes on ``problem``'s prox step (for benchmarks and reports)."""
    path = getattr(solver, "path", None)
    return type(solver).__name__ if path is None else path(problem.domain, problem.constraint)
