"""Study files and long runs: what ``jaxbco sweep --config study.toml`` reads and builds, and
the multi-host and resume helpers that ``run`` and ``sweep`` share (``jaxbco.cli.sweep``).

A study file (TOML):

.. code-block:: toml

    problem = "quadratic-ball"      # a name from jaxbco.problems.PROBLEMS, or "mypkg.probs:mine"
    dim = 10                        # optional: the problem's own dimension by default
    horizon = 10000
    seeds = 1000
    algorithm = "rectified-bco"     # a name from jaxbco.algorithms.ALGORITHMS, or "mypkg.algs:Mine"
    dtype = "float32"               # or "float64"
    key = 0                         # master PRNG seed
    checkpoints = 100               # about this many log-spaced rounds are recorded

    [hyper]                         # fixed values replacing the algorithm's defaults
    eta_scale = 2.0

    [grid]                          # swept values: every combination x every seed
    c = [0.5, 0.6, 0.75]
    eps = [0.05, 0.1, 0.5]

The result is ``OUT/results.nc`` (``jaxbco.results.load``) with one dimension per swept name,
a summary table and a figure.  The state after every chunk is kept in ``OUT/state.npz``
(written atomically); ``--resume`` continues an interrupted study from it, bitwise as if it had
never stopped.  Several hosts: start the same command on each with ``--coordinator HOST:PORT
--num-processes N --process-id I``; each host runs its block of the seeds on its local devices
and writes ``results.hostI-of-N.nc``; ``jaxbco.results.merge_seeds`` joins them.
"""

from jaxbco.study.config import KEYS as KEYS
from jaxbco.study.config import REQUIRED as REQUIRED
from jaxbco.study.config import build as build
from jaxbco.study.config import load_config as load_config
from jaxbco.study.outputs import OUTPUTS as OUTPUTS
from jaxbco.study.outputs import STATE as STATE
from jaxbco.study.outputs import Staging as Staging
from jaxbco.study.outputs import clean_leftovers as clean_leftovers
from jaxbco.study.outputs import host_tag as host_tag
from jaxbco.study.outputs import init_hosts as init_hosts
from jaxbco.study.outputs import output_names as output_names
from jaxbco.study.outputs import outputs_in as outputs_in
from jaxbco.study.outputs import prepare_output as prepare_output
from jaxbco.study.outputs import resume_path as resume_path
