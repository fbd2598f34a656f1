"""jaxbco._src.prng: jax.random's values, bitwise, without touching JAX's own lowering."""

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks, prng
from jaxbco._src.threefry import threefry2x32_unrolled


def test_known_answer_vectors():
    """Random123's KAT for threefry2x32_20."""
    cases = [
        ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
        ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ]
    for key, ctr, expected in cases:
        k = [np.asarray([v], np.uint32) for v in key]
        x = [np.asarray([v], np.uint32) for v in ctr]
        out = threefry2x32_unrolled(*map(jnp.asarray, k), *map(jnp.asarray, x))
        assert tuple(int(v[0]) for v in out) == expected


def _same(a, b) -> bool:
    """Bitwise equal arrays (shape and every element)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))


def test_bitwise_jax_random_one_key_and_vmapped():
    key = jax.random.key(123)
    keys = jax.random.split(jax.random.key(5), 7)
    assert _same(
        jax.random.key_data(prng.fold_in(key, 9)), jax.random.key_data(jax.random.fold_in(key, 9))
    )
    assert _same(
        jax.random.key_data(prng.split(key, 5)), jax.random.key_data(jax.random.split(key, 5))
    )
    assert _same(prng.bits(key, (4, 33)), jax.random.bits(key, (4, 33), jnp.uint32))
    # both compiled (XLA contracts the scale-and-shift into one FMA in both)
    assert _same(
        jax.jit(lambda k: prng.uniform(k, (257,), jnp.float32, -2.0, 3.0))(key),
        jax.jit(lambda k: jax.random.uniform(k, (257,), jnp.float32, -2.0, 3.0))(key),
    )
    fold = jax.jit(jax.vmap(lambda k, i: jax.random.key_data(prng.fold_in(k, i))))
    assert _same(
        fold(keys, jnp.arange(7, dtype=jnp.uint32)),
        jax.vmap(lambda k, i: jax.random.key_data(jax.random.fold_in(k, i)))(
            keys, jnp.arange(7, dtype=jnp.uint32)
        ),
    )
    assert _same(
        jax.jit(jax.vmap(lambda k: prng.uniform(k, (3,))))(keys),
        jax.vmap(lambda k: jax.random.uniform(k, (3,), jnp.float32))(keys),
    )
    with jax.enable_x64(True):  # 64-bit words and float64
        assert _same(prng.bits(key, (9,), 64), jax.random.bits(key, (9,), jnp.uint64))
        assert _same(
            prng.uniform(key, (65,), jnp.float64), jax.random.uniform(key, (65,), jnp.float64)
        )


def test_other_key_implementations_go_to_jax_random():
    key = jax.random.key(4, impl="rbg")
    assert not prng.is_threefry(key)
    assert _same(prng.uniform(key, (5,)), jax.random.uniform(key, (5,), jnp.float32))
    assert _same(
        jax.random.key_data(prng.fold_in(key, 3)), jax.random.key_data(jax.random.fold_in(key, 3))
    )


def test_import_changes_nothing_in_jax():
    """``import jaxbco`` leaves JAX's configuration and its lowering of jax.random alone."""
    code = (
        "import jax, jax.numpy as jnp\n"
        "def snap():\n"
        "    cfg = {k: str(v) for k, v in sorted(jax.config.values.items())}\n"
        "    hlo = jax.jit(lambda k: jax.random.bits(k, (8,))).lower(jax.random.key(1)).as_text()\n"
        "    return cfg, hlo\n"
        "before = snap()\n"
        "import jaxbco, jaxbco.cli, jaxbco.problems\n"
        "p = jaxbco.problems.make('quadratic-ball', 2)\n"
        "jaxbco.sweep(p[0] if isinstance(p, tuple) else p, 3, seeds=2)\n"
        "after = snap()\n"
        "assert before[0] == after[0], set(before[0].items()) ^ set(after[0].items())\n"
        "assert before[1] == after[1]\n"
        "print('ok')\n"
    )
    _runs_ok(code)


def test_import_starts_no_backend():
    """``import jaxbco`` (every module) computes nothing: no XLA backend is started, so a
    multi-host run can still call ``jax.distributed.initialize`` after it (``jaxbco.hosts``)."""
    code = (
        "import importlib, pkgutil\n"
        "import jaxbco\n"
        "for m in pkgutil.walk_packages(jaxbco.__path__, 'jaxbco.'):\n"
        "    if not m.name.endswith('__main__'):\n"
        "        importlib.import_module(m.name)\n"
        "from jax._src import xla_bridge\n"
        "assert not xla_bridge._backends, list(xla_bridge._backends)\n"
        "print('ok')\n"
    )
    _runs_ok(code)


def _runs_ok(code: str) -> None:
    """``code`` in a fresh Python process prints ok."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_master_keys_above_2_32_are_distinct_in_both_modes():
    """A master key given as an int is threefry's key(seed) with all 64 bits of the seed, with
    64-bit JAX off as on (``jax.random.key`` keeps only the low 32 bits with it off, so 0 and
    2^32 would be one stream)."""
    seeds = [0, 1, 2**32 - 1, 2**32, 2**40 + 7, 2**63 - 1]
    off = [np.asarray(jax.random.key_data(checks.check_key(s))) for s in seeds]
    with jax.enable_x64(True):
        on = [np.asarray(jax.random.key_data(jax.random.key(s))) for s in seeds]
    for s, a, b in zip(seeds, off, on):
        np.testing.assert_array_equal(a, b, err_msg=f"seed {s}")
    assert len({a.tobytes() for a in off}) == len(seeds)
