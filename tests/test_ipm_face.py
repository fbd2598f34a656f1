"""The interior point's checked face (``solvers._ipm_face``): semismooth Newton from the face of
the last round's answer, kept only where the KKT conditions of Eq. (5) hold to round-off.

Checked where it is hardest: along a warm chain of a real run of Algorithm 1 (dense, slowly
rotating P_t binding in most rounds, beta/alpha growing) solved through the block path, every
step against cvxpy; the face's own answers against cvxpy and against the interior point on
boxes (d <= UNROLLED: the face serves no larger d); a lane alone
against the same lane in a block, bitwise; and the derivative the face's state gives against
the interior point's."""

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco.solvers import _ipm, _ipm_face, _ipm_tangent
from jaxbco.solvers._ipm_data import Data

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))


def _box_data(K, d, seed, dtype):
    """K prox problems on [-1, 1]^d with a dense ellipsoid (eigenvalues 0.1 .. 10) cutting the
    corner y points to, lanes major, and b = beta / alpha from 1e-1 to 1e4 (some saturate)."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    P = (Q * np.geomspace(0.1, 10.0, d)) @ Q.T
    P = 0.5 * (P + P.T)
    y = 0.6 + 0.5 * rng.normal(size=(K, d))
    b = np.geomspace(1e-1, 1e4, K)
    c = lambda a: jnp.asarray(a, dtype)
    return Data(
        c(P), c(np.zeros(d)), c(2.0), c(y), c(b), -jnp.ones(d, dtype), jnp.ones(d, dtype), None
    )


def _ipm_answer(data):
    return _ipm.solve(data, 80)


def _np_kkt(data, x, mu, nu=0.0):
    """Stationarity on the free coordinates, the bounds' multipliers' signs, g's row and mu's
    range, in NumPy float64 (relative to 1 + |y|)."""
    P, y, b = (np.asarray(a, np.float64) for a in (data.P, data.y, data.b))
    lo = np.asarray(data.lo, np.float64)
    hi = None if data.hi is None else np.asarray(data.hi, np.float64)
    out = []
    for k in range(x.shape[0]):
        xk = np.asarray(x[k], np.float64)
        g = xk @ P @ xk - float(data.s)
        v = xk - y[k] + mu[k] * 2.0 * P @ xk + (nu[k] if np.ndim(nu) else 0.0)
        at_lo = xk <= lo + 1e-12
        at_hi = np.zeros_like(at_lo) if hi is None else xk >= hi - 1e-12
        free = ~(at_lo | at_hi)
        res = max(
            np.abs(v[free]).max(initial=0.0),
            max(0.0, -v[at_lo].min(initial=0.0)),
            max(0.0, v[at_hi].max(initial=0.0)),
            abs(g) if mu[k] < b[k] else max(0.0, -g),
            max(0.0, -mu[k]),
        )
        out.append(res / (1.0 + np.abs(y[k]).max()))
    return np.asarray(out)


@pytest.mark.parametrize("d", [6, _ipm_face.UNROLLED])
def test_face_answers_meet_kkt_and_equal_the_interior_point(d):
    """From the interior point's own answer moved by 1e-3 (a last round's answer), the face
    is accepted on most lanes; each accepted lane meets the KKT conditions in NumPy float64
    and equals the interior point's answer to 1e-9 (float64)."""
    with jax.enable_x64(True):
        data = _box_data(48, d, seed=d, dtype=jnp.float64)
        ref = _ipm_answer(data)
        x0 = ref.x + 1e-3 * np.random.default_rng(1).normal(size=ref.x.shape)
        state, ok = jax.jit(lambda data, x0: _ipm_face.solve(data, x0, 8))(data, x0)
        ok = np.asarray(ok)
        assert ok.mean() >= 0.75, ok.mean()
        x = np.asarray(state.x)[ok]
        np.testing.assert_allclose(x, np.asarray(ref.x)[ok], atol=1e-9, rtol=0)
        kkt = _np_kkt(data._replace(y=data.y[ok], b=data.b[ok]), x, np.asarray(state.mu)[ok])
        assert kkt.max() <= 1e-10, kkt.max()


def test_the_face_serves_small_dimensions_only():
    """Above ``UNROLLED`` coordinates (and for a user's g, or a ball) the interior point alone."""
    assert _ipm_face.applies(_box_data(4, _ipm_face.UNROLLED, 0, jnp.float32))
    assert not _ipm_face.applies(_box_data(4, _ipm_face.UNROLLED + 1, 0, jnp.float32))
    ball = _box_data(4, 3, 0, jnp.float32)._replace(lo=None, hi=None, centre=jnp.zeros(3))
    assert not _ipm_face.applies(ball)


def test_a_lane_alone_equals_the_lane_in_a_block():
    """Every operation is element-wise across the lanes: each of the first 5 lanes of a
    48-lane block, solved alone (padded to 16 lanes with copies of itself, as the engine pads
    its seeds), gives the same bits (float32)."""
    for d in (5, _ipm_face.UNROLLED):
        data = _box_data(48, d, seed=3, dtype=jnp.float32)
        ref = _ipm_answer(data)
        x0 = ref.x + 1e-3
        solve = jax.jit(lambda data, x0: _ipm_face.solve(data, x0, 8))
        whole, ok_whole = solve(data, x0)
        for k in range(5):
            pad = np.full(16, k)
            one = data._replace(y=data.y[pad], b=data.b[pad])
            alone, ok_alone = solve(one, x0[pad])
            assert bool(ok_alone[0]) == bool(ok_whole[k])
            np.testing.assert_array_equal(np.asarray(alone.x[0]), np.asarray(whole.x[k]))
            np.testing.assert_array_equal(np.asarray(alone.mu[0]), np.asarray(whole.mu[k]))


def test_the_face_state_gives_the_interior_points_derivative():
    """``_ipm_tangent`` at the face's state equals it at the interior point's state (the
    same active set, read from the multipliers and slacks): dx for tangents of y and b."""
    with jax.enable_x64(True):
        data = _box_data(24, 7, seed=5, dtype=jnp.float64)
        ref = _ipm_answer(data)
        state, ok = _ipm_face.solve(data, ref.x + 1e-4, 8)
        rng = np.random.default_rng(2)
        y_dot = jnp.asarray(rng.normal(size=data.y.shape))
        b_dot = jnp.asarray(rng.normal(size=data.b.shape))
        t_face = np.asarray(_ipm_tangent.tangent(data, state, y_dot, b_dot))
        t_ipm = np.asarray(_ipm_tangent.tangent(data, ref, y_dot, b_dot))
        ok = np.asarray(ok)
        assert ok.mean() >= 0.75
        np.testing.assert_allclose(t_face[ok], t_ipm[ok], atol=1e-6, rtol=1e-6)


def test_block_chain_matches_cvxpy_at_every_step_and_takes_the_face():
    """The warm chain of ``test_quadratic_prox`` (d = 6 simplex, dense rotating P_t, T = 150),
    every step solved as a block of one run (the face first): no relative gap above 1e-6
    against cvxpy and every KKT residual at round-off (float64); and the face alone, from the
    last round's answer, is accepted in most binding rounds, each accepted answer within 1e-9
    of the chain's (which cvxpy checked) and its KKT residual at round-off (before the
    round-off guard, whose pull off g = 0 the block path adds)."""
    import cvxpy  # noqa: F401  (a hard test dependency: missing fails, never skips)

    from benchmarks import _chains
    from jaxbco.solvers.quadratic import set_fields

    insts, answers = _chains.chain("drift", 150, block=True)
    gaps, _ = _chains.gaps(insts, answers)
    assert np.all(gaps <= 1e-6), f"max gap {gaps.max():.3e} at round {int(np.argmax(gaps)) + 1}"
    kkt = np.array([_chains.kkt_residual(inst, x) for inst, x in zip(insts, answers)])
    assert np.all(kkt <= 1e-9), f"max KKT residual {kkt.max():.3e} at round {np.argmax(kkt) + 1}"
    accepted = []
    with jax.enable_x64(True):
        from jaxbco import sets

        domain = sets.Simplex(answers.shape[1], jnp.asarray(1.0, jnp.float64))
        solve = jax.jit(lambda data, x0: _ipm_face.solve(data, x0, 8))
        for t, inst in enumerate(insts[1:], start=1):
            if not inst.active or inst.beta == 0:
                continue
            P, q, s = (jnp.asarray(a, jnp.float64) for a in inst.phi)
            data = Data(
                P,
                q,
                s,
                jnp.asarray(inst.y)[None],
                jnp.asarray([inst.beta / inst.alpha]),
                **set_fields(domain, jnp.asarray(inst.xi), jnp.float64),
            )
            state, ok = solve(data, jnp.asarray(answers[t - 1])[None])
            if bool(ok[0]):  # before the round-off guard: g(x) may be an ulp above 0
                x = np.asarray(state.x[0])
                assert np.abs(x - answers[t]).max() <= 1e-9, t
                assert _chains.kkt_residual(inst, x) <= 1e-9, t
            accepted.append(bool(ok[0]))
    assert np.mean(accepted) >= 0.5, np.mean(accepted)
