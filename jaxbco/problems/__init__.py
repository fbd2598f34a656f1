"""Named problem instances: a registry feeding the CLI, the comparisons and the tests.

Each entry of ``PROBLEMS`` (name ↦ builder) builds a ``Problem`` for a dimension d (where the
instance allows); its ``strongly_convex`` flag says whether the Theorem 3-4 schedule is the
one to run on it.  A researcher's own problem is registered the same way
(``register("my-problem", builder)``) or named on any command as ``mypkg.problems:my_problem``
(a ``Problem`` or a function returning one, taking ``dim`` and ``horizon`` if it uses them);
installed packages may publish problems by entry point (group ``jaxbco.problems``).  ``make``
resolves all of them.

Example:
    >>> from jaxbco import problems
    >>> problem = problems.make("quadratic-ball", dim=4)
    >>> problem.dim, problem.strongly_convex
    (4, False)
    >>> "hutchinson-toy" in problems.names()
    True
"""

from __future__ import annotations

# the built-in instances: this study's (synthetic) and the published ones (literature),
# registered below
from jaxbco.problems.literature import _fixed_dim as _fixed_dim
from jaxbco.problems.literature import _portfolio as _portfolio
from jaxbco.problems.literature import hutchinson_toy as hutchinson_toy
from jaxbco.problems.literature import online_logistic as online_logistic
from jaxbco.problems.literature import yu_neely as yu_neely
from jaxbco.problems.registry import MAX_DIM as MAX_DIM
from jaxbco.problems.registry import PROBLEMS as PROBLEMS
from jaxbco.problems.registry import Record as Record
from jaxbco.problems.registry import check as check
from jaxbco.problems.registry import make as make
from jaxbco.problems.registry import names as names
from jaxbco.problems.registry import register as register
from jaxbco.problems.registry import unregister as unregister
from jaxbco.problems.synthetic import logistic_ball as logistic_ball
from jaxbco.problems.synthetic import portfolio_simplex as portfolio_simplex
from jaxbco.problems.synthetic import quadratic_ball as quadratic_ball
from jaxbco.problems.synthetic import strongly_convex_ball as strongly_convex_ball
from jaxbco.problems.synthetic import strongly_convex_time_varying as strongly_convex_time_varying
from jaxbco.problems.synthetic import switching_box as switching_box
from jaxbco.problems.synthetic import time_varying_ball as time_varying_ball

__all__ = [
    "MAX_DIM",
    "PROBLEMS",
    "Record",
    "check",
    "make",
    "names",
    "register",
    "unregister",
    "quadratic_ball",
    "strongly_convex_ball",
    "time_varying_ball",
    "strongly_convex_time_varying",
    "switching_box",
    "logistic_ball",
    "portfolio_simplex",
    "yu_neely",
    "hutchinson_toy",
    "online_logistic",
]

for _name, _builder in (
    ("quadratic-ball", quadratic_ball),
    ("strongly-convex-ball", strongly_convex_ball),
    ("time-varying-ball", time_varying_ball),
    ("strongly-convex-time-varying", strongly_convex_time_varying),
):
    register(_name, _builder)
register("switching-box", switching_box, min_dim=2)
register("logistic-ball", logistic_ball)
register("simplex-quadratic", portfolio_simplex, min_dim=2)
register("yu-neely", yu_neely, takes_horizon=True, min_dim=None)
register("hutchinson-toy", hutchinson_toy, min_dim=None)
register("online-logistic", online_logistic)
register("nyse-portfolio", _portfolio("nyse_o"), takes_horizon=True, min_dim=2)
for _name in ("nyse_o", "nyse_n", "djia", "sp500", "tse", "msci"):
    register(f"portfolio:{_name}", _portfolio(_name), takes_horizon=True, min_dim=2)
