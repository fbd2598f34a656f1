"""Feasible sets X with projections from ``optax.projections``."""

from jaxbco.sets._base import AbstractSet as AbstractSet
from jaxbco.sets._base import project_shrunk as project_shrunk
from jaxbco.sets.box import Box as Box
from jaxbco.sets.l1_ball import L1Ball as L1Ball
from jaxbco.sets.l2_ball import L2Ball as L2Ball
from jaxbco.sets.simplex import Simplex as Simplex
