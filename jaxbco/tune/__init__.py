"""Differentiable hyperparameter tuning through whole runs, and the grid / random search it
is measured against.

The objective J(h) = (1/|S|) ∑ₛ [R_T(h) + κ V_T(h)] / T, a mean over a batch S of seeds of
the regret R_T and the violation V_T, is minimised over the free continuous hyperparameters
h (moved in an unconstrained coordinate z, ``transforms``) by an optax optimiser on gradients
of the whole run, pathwise or smoothed, chosen by a check against central differences
(``gradient``, ``descent``, ``estimators``; the objective and its seed sets: ``objective``;
the returned point, never worse than the start on held-out seeds: ``selection``);
``search`` holds the grid and random search baselines and ``report`` the comparison of all
of them on held-out seeds.  ``jaxbco tune`` (``python -m jaxbco.tune``) is the command line
(``jaxbco.cli.tune``).

Example:
    .. code-block:: python

        from jaxbco import problems, tune

        problem = problems.make("quadratic-ball", 10)
        res = tune.tune(problem, 500, free=("c", "eps", "alpha_scale"), kappa=1.0, steps=20)
        res.heldout_start.J, res.heldout_end.J, res.hyper
"""

from jaxbco.tune.estimators import AUTO as AUTO
from jaxbco.tune.estimators import PATHWISE as PATHWISE
from jaxbco.tune.estimators import SMOOTHED as SMOOTHED
from jaxbco.tune.estimators import Check as Check
from jaxbco.tune.gradient import FORWARD as FORWARD
from jaxbco.tune.gradient import REMAT_EXTRA as REMAT_EXTRA
from jaxbco.tune.gradient import REVERSE as REVERSE
from jaxbco.tune.gradient import REVERSE_COST as REVERSE_COST
from jaxbco.tune.gradient import TuneResult as TuneResult
from jaxbco.tune.gradient import TuningWarning as TuningWarning
from jaxbco.tune.gradient import default_optimizer as default_optimizer
from jaxbco.tune.gradient import measure_cost as measure_cost
from jaxbco.tune.gradient import tune as tune
from jaxbco.tune.objective import HELDOUT_OFFSET as HELDOUT_OFFSET
from jaxbco.tune.objective import Evaluation as Evaluation
from jaxbco.tune.objective import heldout_ids as heldout_ids
from jaxbco.tune.objective import make_objective as make_objective
from jaxbco.tune.objective import training_ids as training_ids
from jaxbco.tune.report import Row as Row
from jaxbco.tune.report import compare_methods as compare_methods
from jaxbco.tune.report import format_table as format_table
from jaxbco.tune.report import paired_difference as paired_difference
from jaxbco.tune.search import SearchResult as SearchResult
from jaxbco.tune.search import grid_search as grid_search
from jaxbco.tune.search import random_search as random_search
from jaxbco.tune.selection import VALIDATION_OFFSET as VALIDATION_OFFSET
from jaxbco.tune.selection import validation_ids as validation_ids
from jaxbco.tune.transforms import Space as Space
from jaxbco.tune.transforms import Transform as Transform
from jaxbco.tune.transforms import declared_range as declared_range
from jaxbco.tune.transforms import default_transforms as default_transforms
from jaxbco.tune.transforms import delta_ratio as delta_ratio
from jaxbco.tune.transforms import from_range as from_range
from jaxbco.tune.transforms import interval as interval
from jaxbco.tune.transforms import make_space as make_space
from jaxbco.tune.transforms import positive_log as positive_log
from jaxbco.tune.transforms import positive_softplus as positive_softplus
from jaxbco.tune.transforms import unbounded as unbounded
from jaxbco.tune.transforms import unit_interval as unit_interval
