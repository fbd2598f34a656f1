"""Solvers for the proximal subproblem of Eq. (5)."""

from jaxbco.solvers._base import AbstractProxSolver as AbstractProxSolver
from jaxbco.solvers._base import prox_objective as prox_objective
from jaxbco.solvers.dual import Dual as Dual
from jaxbco.solvers.dual import project_feasible as project_feasible
from jaxbco.solvers.subgradient import Subgradient as Subgradient

SOLVERS = {"dual": Dual, "subgradient": Subgradient}
