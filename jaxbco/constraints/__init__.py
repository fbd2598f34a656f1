"""Constraint families g(x, φ): the round's constraint is gₜ(x) = g(x, φₜ) ≤ 0."""

from jaxbco.constraints._base import AbstractConstraint as AbstractConstraint
from jaxbco.constraints._base import structured as structured
from jaxbco.constraints._base import unshifted as unshifted
from jaxbco.constraints.custom import CustomConstraint as CustomConstraint
from jaxbco.constraints.custom import Shifted as Shifted
from jaxbco.constraints.linear import Linear as Linear
from jaxbco.constraints.linear import MultiLinear as MultiLinear
from jaxbco.constraints.quadratic import Ball as Ball
from jaxbco.constraints.quadratic import Ellipsoid as Ellipsoid
