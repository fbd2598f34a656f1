"""Loss families f(x, θ): the round's loss is fₜ(x) = f(x, θₜ)."""

from jaxbco.losses._base import AbstractLoss as AbstractLoss
from jaxbco.losses.custom import CustomLoss as CustomLoss
from jaxbco.losses.linear import Linear as Linear
from jaxbco.losses.logistic import Logistic as Logistic
from jaxbco.losses.portfolio import LogWealth as LogWealth
from jaxbco.losses.quadratic import Quadratic as Quadratic
from jaxbco.losses.quadratic import strongly_convex_quadratic as strongly_convex_quadratic
from jaxbco.losses.robust import Absolute as Absolute
from jaxbco.losses.robust import Huber as Huber
