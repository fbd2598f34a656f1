"""The comparison study: every algorithm of ``ALGORITHMS`` on one problem, against theory.

``driver``: ``compare`` and its ``Comparison``; ``theory``: the bound constants and curves of
Thms. 1-4; ``fits``: log-log slopes; ``ladder``: exponents across horizons; ``report``: Markdown, LaTeX, JSON and the figure (tables built once,
``table``; exponents or what replaces them, ``findings``).  The command
line is ``jaxbco compare --problem NAME --seeds N --horizon T [--out DIR] [--dtype float64]``
[--latex] (``jaxbco.cli.compare``); ``python -m jaxbco.compare --all --out docs/`` regenerates
docs/results.md (every preset of ``PRESETS`` at the sizes given there; ``--presets a,b`` picks
some, and ``--seeds``, ``--horizon``, ``--algorithms`` and ``--horizons`` replace their sizes).
"""

from jaxbco.compare.comparison import Comparison as Comparison
from jaxbco.compare.driver import LADDER_SEEDS as LADDER_SEEDS
from jaxbco.compare.driver import PRESETS as PRESETS
from jaxbco.compare.driver import compare as compare
from jaxbco.compare.driver import default_hyper as default_hyper
from jaxbco.compare.driver import make_algorithm as make_algorithm
from jaxbco.compare.fits import exponent_across_horizons as exponent_across_horizons
from jaxbco.compare.fits import fit_exponent as fit_exponent
from jaxbco.compare.ladder import Ladder as Ladder
from jaxbco.compare.ladder import ladder as ladder
from jaxbco.compare.ladder import ladder_markdown as ladder_markdown
from jaxbco.compare.ladder import ladder_table as ladder_table
from jaxbco.compare.portfolios import summary_findings as summary_findings
from jaxbco.compare.portfolios import summary_markdown as summary_markdown
from jaxbco.compare.report import display_name as display_name
from jaxbco.compare.report import portfolio_set as portfolio_set
from jaxbco.compare.report import results_page as results_page
from jaxbco.compare.report import results_table as results_table
from jaxbco.compare.report import section_markdown as section_markdown
from jaxbco.compare.report import slug as slug
from jaxbco.compare.report import table_latex as table_latex
from jaxbco.compare.report import table_markdown as table_markdown
from jaxbco.compare.report import theory_markdown as theory_markdown
from jaxbco.compare.report import wealth_markdown as wealth_markdown
from jaxbco.compare.report import write as write
from jaxbco.compare.theory import LITERATURE as LITERATURE
from jaxbco.compare.theory import bound_constants as bound_constants
from jaxbco.compare.theory import bound_curves as bound_curves
from jaxbco.compare.theory import theorem as theorem
from jaxbco.offline.problem_constants import outer_radius as outer_radius
