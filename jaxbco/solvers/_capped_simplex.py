"""The capped simplex Delta = {nu >= 0, sum nu <= beta}, where the polyhedral dual lives.

``project_capped_simplex``: Euclidean projection onto Delta (optax's simplex projection when the
cap binds).  ``model_step``: the exact maximiser over Delta of a concave quadratic model
q(z) = G.(z - nu) - (1/2)(z - nu)^T K (z - nu), K SPD, by enumerating Delta's 2^(m+1) faces
(``face_step`` solves the model on one face, ``spd_solve`` the face's linear system).
``into_capped_simplex``: clips a point that lies in Delta up to round-off.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax.projections as proj

from jaxbco import _ops


def project_capped_simplex(nu, cap):
    """Projection onto {nu >= 0, sum nu <= cap} (cap = 0: the origin)."""
    pos = jnp.maximum(nu, 0.0)
    on_simplex = proj.projection_simplex(nu, jnp.where(cap > 0, cap, 1.0)).astype(nu.dtype)
    return jnp.where(cap > 0, jnp.where(jnp.sum(pos) <= cap, pos, on_simplex), jnp.zeros_like(nu))


def spd_solve(K, R):
    """X = K^{-1} R for symmetric positive definite K (..., m, m), R (..., m, k).

    Gaussian elimination without pivoting (stable for SPD K), unrolled over the static m:
    elementwise ops only, so a lane's answer does not depend on its batch.
    """
    m = K.shape[-1]
    M = jnp.concatenate([K, R], axis=-1)
    below = (jnp.arange(m)[:, None] > jnp.arange(m)[None, :])  # below[i, k]: i > k
    for k in range(m):
        factor = jnp.where(below[:, k:k + 1], M[..., :, k:k + 1] / M[..., k:k + 1, k:k + 1], 0.0)
        M = M - factor * M[..., k:k + 1, :]
    X = [None] * m
    for k in reversed(range(m)):
        acc = M[..., k, m:]
        for j in range(k + 1, m):
            acc = acc - M[..., k, j:j + 1] * X[j]
        X[k] = acc / M[..., k, k:k + 1]
    return jnp.stack(X, axis=-2)


def face_step(nu, G, K, beta, f, sat):
    """Maximiser of the model q(z) = G.(z - nu) - (1/2)(z - nu)^T K (z - nu) on a face of Delta.

    The face: z_i = 0 off F (f its 0/1 mask) and, when ``sat``, sum z = beta.  Stationarity on F:
    K_FF (z - nu)_F = r_F - tau 1_F, r_F = G_F + K_{F,F^c} nu_{F^c}, tau = 0 off the cap, else
    chosen so that sum z = beta: z_F = nu_F + p - tau q with p = K_FF^{-1} r_F, q = K_FF^{-1} 1_F.
    f and sat broadcast over leading axes (faces); K_FF is embedded as f f^T K + diag(1 - f).
    """
    eye = jnp.eye(nu.shape[-1], dtype=nu.dtype)
    Kf = f[..., :, None] * f[..., None, :] * K + (1.0 - f)[..., :, None] * eye
    r = f * (G + jnp.sum(K * ((1.0 - f) * nu)[..., None, :], axis=-1))
    PQ = spd_solve(Kf, jnp.stack([r, jnp.broadcast_to(f, r.shape)], axis=-1))
    p, q = PQ[..., 0], PQ[..., 1]
    z = f * (nu + p)
    sq = jnp.sum(f * q, axis=-1)
    tau = (jnp.sum(z, axis=-1) - beta) / jnp.where(sq > 0, sq, 1.0)
    return jnp.where(sat[..., None], z - tau[..., None] * q, z), sq > 0


def model_step(nu, G, K, beta):
    """(argmax_{z in Delta} q(z), q there) for q(z) = G.(z - nu) - (1/2)(z - nu)^T K (z - nu),
    K SPD (see ``face_step``).  The maximiser is the stationary point of the face of Delta in
    whose relative interior it lies; so the best of the 2^(m+1) face stationary points, each
    clipped into Delta (a no-op, up to round-off, for the maximiser), is the maximiser."""
    m = nu.shape[-1]
    bits = (jnp.arange(2 ** m)[:, None] >> jnp.arange(m)[None, :]) & 1
    f = jnp.concatenate([bits, bits]).astype(nu.dtype)            # (2^(m+1), m)
    sat = jnp.arange(2 ** (m + 1)) >= 2 ** m
    z, ok = face_step(nu, G, K, beta, f, sat)
    ok = (ok | ~sat) & jnp.all(jnp.isfinite(z), axis=-1)
    z = jax.vmap(into_capped_simplex, in_axes=(0, None))(jnp.where(ok[:, None], z, 0.0), beta)
    d = z - nu
    value = _ops.dot(G, d) - 0.5 * _ops.dot(d, jnp.sum(K * d[:, None, :], axis=-1))
    value = jnp.where(ok & ~jnp.isnan(value), value, -jnp.inf)
    best = jnp.argmax(value)
    return z[best], value[best]


def into_capped_simplex(z, beta):
    """Clip a point that lies in Delta up to round-off: z_+, scaled down onto sum = beta if over."""
    z = jnp.maximum(z, 0.0)
    s = jnp.sum(z)
    return jnp.where(s > beta, z * (beta / jnp.where(s > beta, s, 1.0)), z)
