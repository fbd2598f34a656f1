"""Online algorithms: the paper's Algorithm 1 and the baselines of its Table 1, with the
projection-only baselines also in variants that do not know g (``*-xonly``)."""

from jaxbco.algorithms._base import AbstractAlgorithm as AbstractAlgorithm
from jaxbco.algorithms._base import RoundInput as RoundInput
from jaxbco.algorithms.rectified_bco import RectifiedBCO as RectifiedBCO
from jaxbco.algorithms.rectified_bco import two_point_gradient as two_point_gradient
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
from jaxbco.algorithms.yu_neely import YuNeely as YuNeely
from jaxbco.algorithms.yu_neely import YuNeelyHyper as YuNeelyHyper
from jaxbco.algorithms.yuan_lamperski import YuanLamperski as YuanLamperski
from jaxbco.algorithms.yuan_lamperski import YuanLamperskiHyper as YuanLamperskiHyper

ALGORITHMS = {
    "rectified-bco": RectifiedBCO,
    "flaxman-bgd": FlaxmanBGD,
    "agarwal-2pt": AgarwalTwoPoint,
    "mahdavi-pd": MahdaviPrimalDual,
    "recoo": RECOO,
    "yuan-lamperski": YuanLamperski,
    "yu-neely": YuNeely,
    "flaxman-bgd-xonly": FlaxmanBGDXOnly,  # the fair (g not known) variants of the two above
    "agarwal-2pt-xonly": AgarwalTwoPointXOnly,
}


def display_name(name: str) -> str:
    """An algorithm's name in tables and legends: oracle baselines (given g in advance,
    ``knows_constraint``) say so, since their V_T = 0 holds by construction."""
    cls = ALGORITHMS.get(name)
    return f"{name} (g known in advance)" if getattr(cls, "knows_constraint", False) else name
