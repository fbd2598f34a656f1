"""Online algorithms: the paper's Algorithm 1 and the baselines of its Table 1, with the
projection-only baselines also in variants that do not know g (``*-xonly``).

Each is one record of the registry (``registry``: ``register``, ``get``, ``ALGORITHMS``),
which the CLI, the comparison tables, the figures and the tests read; an author's own
algorithm uses the public ``toolkit`` (estimates, constraint values, projections,
hyperparameter checks) and is registered or named as ``module:Name`` (the own-algorithm guide).
"""

import importlib
import pkgutil

from jaxbco.algorithms import toolkit as toolkit
from jaxbco.algorithms._base import AbstractAlgorithm as AbstractAlgorithm
from jaxbco.algorithms._base import RoundInput as RoundInput
from jaxbco.algorithms.agarwal import AgarwalHyper as AgarwalHyper
from jaxbco.algorithms.agarwal import AgarwalTwoPoint as AgarwalTwoPoint
from jaxbco.algorithms.agarwal import AgarwalTwoPointXOnly as AgarwalTwoPointXOnly
from jaxbco.algorithms.flaxman import FlaxmanBGD as FlaxmanBGD
from jaxbco.algorithms.flaxman import FlaxmanBGDXOnly as FlaxmanBGDXOnly
from jaxbco.algorithms.flaxman import FlaxmanHyper as FlaxmanHyper
from jaxbco.algorithms.mahdavi import MahdaviHyper as MahdaviHyper
from jaxbco.algorithms.mahdavi import MahdaviPrimalDual as MahdaviPrimalDual
from jaxbco.algorithms.recoo import RECOO as RECOO
from jaxbco.algorithms.recoo import RecooHyper as RecooHyper
from jaxbco.algorithms.rectified_bco import RectifiedBCO as RectifiedBCO
from jaxbco.algorithms.rectified_bco import two_point_gradient as two_point_gradient
from jaxbco.algorithms.registry import ALGORITHMS as ALGORITHMS
from jaxbco.algorithms.registry import Record as Record
from jaxbco.algorithms.registry import get as get
from jaxbco.algorithms.registry import register as register
from jaxbco.algorithms.registry import unregister as unregister
from jaxbco.algorithms.yu_neely import YuNeely as YuNeely
from jaxbco.algorithms.yu_neely import YuNeelyHyper as YuNeelyHyper
from jaxbco.algorithms.yuan_lamperski import YuanLamperski as YuanLamperski
from jaxbco.algorithms.yuan_lamperski import YuanLamperskiHyper as YuanLamperskiHyper

#: The paper's algorithm: the default of every command, and the one the theorem bounds are for.
DEFAULT = "rectified-bco"


def display_name(name: str) -> str:
    """An algorithm's name in tables and legends (``Record.label``): oracle baselines (given g in
    advance, ``knows_constraint``) say so, since their V_T = 0 holds by construction."""
    try:
        return get(name).label
    except ValueError:
        return name


def _import_all() -> None:
    """Import every algorithm module of this package, so that each registers itself: a new
    baseline is one module (plus its tests and docs), listed nowhere else."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_import_all()
