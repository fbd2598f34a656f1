"""Threefry-2x32-20 as element-wise uint32 ops (Salmon et al. 2011).

Rotations R = (13, 15, 26, 6 | 17, 29, 16, 24), key schedule k2 = k0 ^ k1 ^ 0x1BD11BDA, a key
injection every 4 rounds: the function behind ``jax.random``'s threefry keys, here as
straight-line code that XLA fuses and vectorises (JAX's own CPU lowering rolls the rounds
into a loop).  Tested against Random123's known-answer vectors; ``jaxbco._src.prng`` builds
``jax.random``'s fold_in, split, bits and uniform on it.
"""

from __future__ import annotations

import numpy as np

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _rotl(v, r):
    return (v << np.uint32(r)) | (v >> np.uint32(32 - r))


def threefry2x32_unrolled(k0, k1, x0, x1):
    """Threefry-2x32-20 of the counter pair (x0, x1) under key (k0, k1), elementwise."""
    ks = (k0, k1, k0 ^ k1 ^ np.uint32(0x1BD11BDA))
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = _rotl(x1, r) ^ x0
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1
