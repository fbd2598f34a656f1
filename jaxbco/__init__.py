"""jaxbco: bandit convex optimisation with hard constraints, simulated in JAX.

Algorithm 1 of Hikima (two-point feedback, rectified penalty, proximal step) and its
metrics, run as one compiled ``lax.scan`` over seeds and hyperparameter settings (seeds as the
minor axis where the problem allows, else ``vmap``).  Importing jaxbco changes nothing in JAX.
"""

from jaxbco import algorithms as algorithms
from jaxbco import certificate as certificate
from jaxbco import constraints as constraints
from jaxbco import losses as losses
from jaxbco import sequences as sequences
from jaxbco import sets as sets
from jaxbco import solvers as solvers
from jaxbco._src.compile_cache import compile_cache as compile_cache
from jaxbco._src.shaping import log_checkpoints as log_checkpoints
from jaxbco.check import Check as Check
from jaxbco.check import check_component as check_component
from jaxbco.comparator import offline_optimum as offline_optimum
from jaxbco.hyper import Hyper as Hyper
from jaxbco.hyper import grid as grid
from jaxbco.hyper import grid_of as grid_of
from jaxbco.hyper import theorem_defaults as theorem_defaults
from jaxbco.problem import Problem as Problem
from jaxbco.runner.whole_run import make_run as make_run
from jaxbco.simulate import Result as Result
from jaxbco.simulate import run as run
from jaxbco.simulate import sweep as sweep

__version__ = "0.1.0"
