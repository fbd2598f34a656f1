"""The unrolled CPU threefry lowering gives exactly Threefry-2x32-20's bits."""

import subprocess
import sys

import jax.numpy as jnp
import numpy as np
from jax.extend.random import threefry_2x32

import jaxbco  # noqa: F401  (installs the lowering)
from jaxbco import _threefry


def test_known_answer_vectors():
    """Random123's KAT for threefry2x32_20."""
    assert _threefry.INSTALLED
    cases = [((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
             ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
             ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0))]
    for key, ctr, expected in cases:
        out = threefry_2x32(jnp.asarray(key, jnp.uint32), jnp.asarray(ctr, jnp.uint32))
        assert tuple(int(v) for v in out) == expected


def test_same_bits_as_jax_rolled_lowering():
    code = ("import jax, numpy as np; k = jax.random.key(123); "
            "print(np.asarray(jax.random.bits(jax.random.fold_in(k, 9), (257,))).tolist())")
    rolled = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, env={"JAXBCO_ROLLED_THREEFRY": "1", "PATH": ""}).stdout
    unrolled = subprocess.run([sys.executable, "-c", "import jaxbco; " + code],
                              capture_output=True, text=True, check=True).stdout
    assert rolled == unrolled and len(eval(rolled)) == 257
    np.testing.assert_array_equal(np.asarray(eval(rolled)), np.asarray(eval(unrolled)))
