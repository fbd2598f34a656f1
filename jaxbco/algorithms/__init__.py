"""Online algorithms: the paper's Algorithm 1 (and, later, the baselines of its Table 1)."""

from jaxbco.algorithms._base import AbstractAlgorithm as AbstractAlgorithm
from jaxbco.algorithms._base import RoundInput as RoundInput
from jaxbco.algorithms.rectified_bco import RectifiedBCO as RectifiedBCO
from jaxbco.algorithms.rectified_bco import two_point_gradient as two_point_gradient

ALGORITHMS = {"rectified-bco": RectifiedBCO}
