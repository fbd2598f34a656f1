"""Log-wealth loss of online portfolio selection: f_t(x) = -log <r_t, x> (Cover 1991)."""

import jax.numpy as jnp
import numpy as np

from jaxbco import _checks, _ops
from jaxbco.losses._base import AbstractLoss


class LogWealth(AbstractLoss):
    """f(x, r) = -log <r, x> for price relatives r > 0 (gross returns of day t) and a portfolio x
    on the probability simplex: sum_t f_t(x_t) = -log(final wealth of the sequence x_t).

    Convex (not strongly), grad = -r / <r, x>, Hessian r r^T / <r, x>^2.  On the simplex
    <r, x> >= min_i r_i, so F_t <= ||r_t|| / min_i r_t,i and the curvature is at most
    (||r_t|| / min_i r_t,i)^2: these bounds hold on X (where jaxbco evaluates f; the queries
    x +- delta u stay in X), not on a ball about 0, which ``lipschitz`` ignores.

    >>> LogWealth().value(jnp.full(2, 0.5), jnp.asarray([1.1, 0.9]))   # -log 1.0 = 0
    """

    blocks = True

    def value(self, x, theta):
        return -jnp.log(_ops.inner(theta, x))

    def curvature(self, theta):
        return (jnp.linalg.norm(theta) / jnp.min(theta)) ** 2

    def data_shape(self, dim):
        return _checks.shape(dim)

    def check_data(self, theta, name):
        r = np.asarray(theta)
        if np.any(r <= 0):
            raise ValueError(f"{name} (price relatives r_t of LogWealth: -log <r_t, x>) must lie in "
                             f"(0, inf); got min {float(np.min(r)):g}")

    def lipschitz(self, theta, radius):
        return jnp.linalg.norm(theta) / jnp.min(theta)
