"""Feasible sets X: box, L1 and L2 balls, simplex; projections from ``optax.projections`` (the
simplex's own sort-free form up to d = 64, the ball's column by column on seeds-minor blocks)."""

from jaxbco.sets._base import AbstractSet as AbstractSet
from jaxbco.sets._base import project_shrunk as project_shrunk
from jaxbco.sets.box import Box as Box
from jaxbco.sets.l1_ball import L1Ball as L1Ball
from jaxbco.sets.l2_ball import L2Ball as L2Ball
from jaxbco.sets.simplex import Simplex as Simplex
