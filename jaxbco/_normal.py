"""Standard normal draws for the hot path: ``jax.random.normal``'s uniforms, a vectorisable erf^-1.

    z = sqrt(2) erfinv(u),   u ~ U(-1, 1)   (exactly the uniforms ``jax.random.normal`` uses),
    erfinv(u) = u p(w),      w = -log((1 - u)(1 + u)),

p: Giles' single-precision approximation (M. Giles, "Approximating the erfinv function",
GPU Computing Gems, 2011): a degree-8 polynomial in w - 5/2 for w < 5, in sqrt(w) - 3 beyond
(the coefficients XLA's own float32 ``erf_inv`` uses).  XLA computes w with ``log1p(-u^2)``;
on the CPU backend, fused with the Threefry hash into a (seeds, d) loop with a short minor
axis, that ``log1p`` costs ~17 ns/value against ~2 for ``log`` (benchmarks/NOTES.md), which
made the per-seed normal draws the largest cost of a round.  Giles' original form with
``log`` vectorises.  Values agree with ``jax.random.normal`` to a few float32 ulps (tested),
not bitwise; a seed's draws still depend only on its key.  float64 (and other dtypes) use
``jax.random.normal`` unchanged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

# Giles (2011), single precision; highest degree first.
_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
            -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
         -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def erfinv_f32(u: jax.Array) -> jax.Array:
    """erf^-1(u) for float32 u in [-1, 1] (Giles 2011); +-inf at +-1."""
    w = -jnp.log((1.0 - u) * (1.0 + u))
    central = w < 5.0
    w = jnp.where(central, w - 2.5, jnp.sqrt(w) - 3.0)
    p = jnp.where(central, np.float32(_CENTRAL[0]), np.float32(_TAIL[0]))
    for a, b in zip(_CENTRAL[1:], _TAIL[1:]):
        p = jnp.where(central, np.float32(a), np.float32(b)) + p * w
    return jnp.where(jnp.abs(u) == 1.0, jnp.inf * u, p * u)


def normal(key: jax.Array, shape=(), dtype=jnp.float32) -> jax.Array:
    """Standard normal array of ``shape``: ``jax.random.normal``'s uniforms through
    ``erfinv_f32`` for float32, ``jax.random.normal`` itself for other dtypes."""
    dtype = jnp.dtype(dtype)
    if dtype != jnp.float32:
        return jax.random.normal(key, shape, dtype)
    lo = np.nextafter(np.float32(-1.0), np.float32(0.0))
    u = jax.random.uniform(key, shape, dtype, lo, np.float32(1.0))
    return np.float32(np.sqrt(2.0)) * erfinv_f32(u)
