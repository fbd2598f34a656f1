"""The interior point's triangular solves: the CPU's row loop and the library's batched solves
(taken off a CPU) against NumPy's dense solve, float64, with ill-conditioned lanes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco.solvers import _cholesky

FLOAT64 = True  # float64 checks against NumPy (tests/conftest.py)


def _systems(seed, lanes=6, d=9):
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.normal(size=(lanes, d, d)))[0]
    eig = np.geomspace(1e-6, 1.0, d) * rng.uniform(0.5, 2.0, size=(lanes, 1))
    M = (Q * eig[:, None, :]) @ np.swapaxes(Q, 1, 2)
    M = 0.5 * (M + np.swapaxes(M, 1, 2))
    return np.linalg.cholesky(M), M, rng.normal(size=(lanes, d))


@pytest.mark.parametrize(
    "fn",
    [_cholesky.solve, _cholesky.solve_rows, _cholesky.solve_library],
    ids=["solve", "rows", "library"],
)
def test_solves_agree_with_numpy(fn):
    L, M, b = _systems(0)
    x = np.asarray(jax.jit(fn)(jnp.asarray(L), jnp.asarray(b)))
    ref = np.linalg.solve(M, b[..., None])[..., 0]
    # backward error of a Cholesky solve: |M x - b| / (|M| |x|) at round-off
    resid = np.linalg.norm(np.einsum("kij,kj->ki", M, x) - b, axis=-1)
    scale = np.linalg.norm(M, axis=(1, 2)) * np.linalg.norm(x, axis=-1)
    assert np.all(resid / scale < 1e-13)
    np.testing.assert_allclose(x, ref, rtol=1e-8, atol=1e-8 * np.abs(ref).max())  # ~ cond(M) eps


def test_library_solve_matches_row_loop_lane_by_lane():
    """Each lane's answer is its own: the batch solved whole = each lane solved alone."""
    L, _, b = _systems(1)
    whole = np.asarray(_cholesky.solve_library(jnp.asarray(L), jnp.asarray(b)))
    alone = np.stack(
        [
            np.asarray(
                _cholesky.solve_library(jnp.asarray(L[k : k + 1]), jnp.asarray(b[k : k + 1]))
            )[0]
            for k in range(L.shape[0])
        ]
    )
    rows = np.asarray(_cholesky.solve_rows(jnp.asarray(L), jnp.asarray(b)))
    np.testing.assert_array_equal(whole, alone)
    np.testing.assert_allclose(whole, rows, rtol=1e-8, atol=0)
