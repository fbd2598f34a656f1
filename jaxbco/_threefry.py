"""Unrolled Threefry-2x32 lowering for the CPU (same numbers, no loop).

JAX lowers its ``threefry2x32`` primitive on the CPU with the 20 rounds rolled into a
5-iteration ``while`` loop (to save compile time).  Inside a scan over rounds that loop is run
for every random draw, and its small per-iteration kernels cost more than the hashing: in the
throughput workload threefry took about 2/3 of the time.  This module registers, for the CPU
only, a straight-line lowering of the same function (Salmon et al. 2011, Threefry-2x32 with
20 rounds: rotations R = (13, 15, 26, 6 | 17, 29, 16, 24), key schedule k2 = k0 ^ k1 ^
0x1BD11BDA, injection every 4 rounds).  The bits are identical: the tests check Random123's
known-answer vectors and equality with JAX's own lowering.

Set JAXBCO_ROLLED_THREEFRY=1 before importing jaxbco to keep JAX's rolled lowering.
"""

from __future__ import annotations

import os

import jax.numpy as jnp
import numpy as np
from jax.extend.random import threefry2x32_p
from jax.interpreters import mlir

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


def _lowering(k0, k1, x0, x1):
    return list(threefry2x32_unrolled(k0, k1, x0, x1))


def install() -> bool:
    """Register the unrolled CPU lowering (idempotent); False if disabled by the environment."""
    if os.environ.get("JAXBCO_ROLLED_THREEFRY", "0") == "1":
        return False
    mlir.register_lowering(threefry2x32_p, mlir.lower_fun(_lowering, multiple_results=True),
                           platform="cpu")
    return True


INSTALLED = install()
del jnp
