"""Data sequences of published problem instances.

``YuNeelyCost``: the loss vectors of Yu & Neely (2020)'s 2-D example (JMLR 21, Sec. 6),

    c_t = c1_t + c2_t + c3_t,
    c1_t ~ U[-t^(1/10), t^(1/10)]^2                      (coordinate-wise)
    c2_t ~ U[-1, 0]^2  for t in [1, 1500] u [2000, 3500] u [4000, 5000],   U[0, 1]^2 otherwise
    c3_t = (-1)^mu(t) (1, 1),   mu a random permutation of 1..T,

for the linear loss f_t(x) = <c_t, x>.  The switching regimes are computed from t, the random
parts from the round's key; the signs (-1)^mu(t) are a fixed array built once from a fixed-seed
permutation (``yu_neely_signs``), so every seed sees the same c3 and its own c1, c2.

>>> seq = YuNeelyCost(yu_neely_signs(5000))
>>> c = seq.sample(jax.random.key(0), jnp.asarray(1600, jnp.int32))   # a U[0, 1] round
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks, prng
from jaxbco.sequences import AbstractSequence

#: Yu & Neely's horizon and the rounds (inclusive) where c2 ~ U[-1, 0]^2.
YU_NEELY_T = 5000
YU_NEELY_WINDOWS = ((1, 1500), (2000, 3500), (4000, 5000))


def yu_neely_signs(horizon: int, seed: int = 0) -> np.ndarray:
    """(-1)^mu(t) for t = 1..T, mu a permutation of 1..T drawn from a fixed seed (float64)."""
    horizon = checks.check_positive_int("horizon T", horizon)
    mu = np.random.default_rng(seed).permutation(horizon) + 1
    return np.where(mu % 2 == 0, 1.0, -1.0)


def yu_neely_windows(horizon: int) -> np.ndarray:
    """The published c2 windows for T = 5000, scaled to another horizon by T / 5000 (so the
    regime pattern keeps its shape); shape (3, 2) int32, inclusive [first, last] rounds."""
    horizon = checks.check_positive_int("horizon T", horizon)
    w = np.asarray(YU_NEELY_WINDOWS, np.float64)
    if horizon != YU_NEELY_T:
        w = np.stack(
            [
                np.round((w[:, 0] - 1) * horizon / YU_NEELY_T) + 1,
                np.round(w[:, 1] * horizon / YU_NEELY_T),
            ],
            axis=1,
        )
    return w.astype(np.int32)


class YuNeelyCost(AbstractSequence):
    """c_t of Yu & Neely's 2-D example (see the module docstring); d = 2 by default.

    ``signs``: (-1)^mu(t), one per round (length T; round t > T reuses them cyclically);
    ``windows``: (k, 2) inclusive round ranges where c2 ~ U[-1, 0]^d (else U[0, 1]^d);
    ``exponent``: the growth 1/10 of c1's range t^exponent.
    """

    blocks = True

    signs: jax.Array = eqx.field(converter=jnp.asarray)
    windows: jax.Array = eqx.field(
        converter=lambda w: jnp.asarray(w, jnp.int32), default=YU_NEELY_WINDOWS
    )
    exponent: jax.Array = eqx.field(converter=jnp.asarray, default=0.1)
    dim: int = eqx.field(static=True, default=2)

    def __check_init__(self):
        if jnp.ndim(self.signs) != 1 or self.signs.shape[0] < 1:
            raise ValueError(f"signs must be a non-empty vector; got shape {jnp.shape(self.signs)}")
        if jnp.ndim(self.windows) != 2 or self.windows.shape[1] != 2:
            raise ValueError(f"windows must have shape (k, 2); got {jnp.shape(self.windows)}")
        checks.check_finite("signs", self.signs)
        checks.check_range("exponent", self.exponent, low=0.0)
        if isinstance(self.dim, bool) or not isinstance(self.dim, int) or self.dim < 1:
            raise ValueError(f"dim must be an integer >= 1; got {self.dim!r}")
        if checks.is_concrete(self.windows) and self.windows.size:
            w = np.asarray(self.windows)
            if np.any(w[:, 0] < 1):
                raise ValueError(
                    f"windows must be inclusive round ranges [first, last] with "
                    f"first >= 1 (rounds count from 1); got {w.tolist()}"
                )

    def negative(self, t: jax.Array) -> jax.Array:
        """True when round t lies in one of the windows (c2 ~ U[-1, 0]^d)."""
        return jnp.any((t >= self.windows[:, 0]) & (t <= self.windows[:, 1]))

    def sample(self, key, t):
        dtype = self.signs.dtype
        k1, k2 = prng.split(key)
        tf = t.astype(dtype)
        c1 = tf**self.exponent * prng.uniform(k1, (self.dim,), dtype, -1.0, 1.0)
        u2 = prng.uniform(k2, (self.dim,), dtype)
        c2 = jnp.where(self.negative(t), u2 - 1.0, u2)
        c3 = self.signs[(t - 1) % self.signs.shape[0]]
        return c1 + c2 + c3
