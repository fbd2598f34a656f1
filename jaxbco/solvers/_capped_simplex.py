"""The capped simplex Delta = {nu >= 0, sum nu <= beta}, where the polyhedral dual lives.

``project_capped_simplex``: Euclidean projection onto Delta (optax's simplex projection when the
cap binds).  ``model_step``: the exact maximiser over Delta of a concave quadratic model
q(z) = G.(z - nu) - (1/2)(z - nu)^T K (z - nu), K SPD, by enumerating Delta's 2^(m+1) faces
(``face_step`` solves the model on one face, ``spd_solve`` the face's linear system).
``into_capped_simplex``: clips a point that lies in Delta up to round-off.

Layout (seeds-minor blocks): the m-vector axis first, run axes last (nu (m, *runs), K (m, m,
*runs)), so the same code takes one run or a seeds-minor block; a face axis, where there is
one, sits after the vector axes.  Sums over the short m axes are chains of adds
(``ops.sum_axis``) and each face's system is materialised before the elimination: XLA's CPU
code reduces (m, m, faces, runs) arrays over a middle axis slowly, and would fuse the
system's construction into every use inside the unrolled elimination (both several times
slower).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax.projections as proj

from jaxbco._src import ops


def project_capped_simplex(nu, cap):
    """Projection onto {nu >= 0, sum nu <= cap} (cap = 0: the origin); nu (m, *runs)."""
    return ops.columns(_project_one, nu, cap)


def _project_one(nu, cap):
    pos = jnp.maximum(nu, 0.0)
    on_simplex = proj.projection_simplex(nu, jnp.where(cap > 0, cap, 1.0)).astype(nu.dtype)
    return jnp.where(cap > 0, jnp.where(jnp.sum(pos) <= cap, pos, on_simplex), jnp.zeros_like(nu))


def spd_solve(K, R):
    """X = K^{-1} R for symmetric positive definite K (m, m, ...), R (m, k, ...).

    Gaussian elimination without pivoting (stable for SPD K), unrolled over the static m:
    element-wise ops only, so a lane's answer does not depend on its batch.
    """
    m = K.shape[0]
    rows = [jnp.concatenate([K[i], R[i]], axis=0) for i in range(m)]  # each (m + k, ...)
    for k in range(m):
        for i in range(k + 1, m):
            rows[i] = rows[i] - (rows[i][k] / rows[k][k]) * rows[k]
    X = [None] * m
    for k in reversed(range(m)):
        acc = rows[k][m:]
        for j in range(k + 1, m):
            acc = acc - rows[k][j] * X[j]
        X[k] = acc / rows[k][k]
    return jnp.stack(X, axis=0)


def face_step(nu, G, K, beta, f, sat):
    """Maximiser of the model q(z) = G.(z - nu) - (1/2)(z - nu)^T K (z - nu) on faces of Delta.

    The face: z_i = 0 off F (f its 0/1 mask) and, when ``sat``, sum z = beta.  Stationarity on F:
    K_FF (z - nu)_F = r_F - tau 1_F, r_F = G_F + K_{F,F^c} nu_{F^c}, tau = 0 off the cap, else
    chosen so that sum z = beta: z_F = nu_F + p - tau q with p = K_FF^{-1} r_F, q = K_FF^{-1} 1_F.
    nu, G (m, *runs), K (m, m, *runs), beta (*runs); f (m, faces, ...) and sat (faces, ...)
    broadcast over the runs.  K_FF is embedded as f f^T K + diag(1 - f).  Returns z (m, faces,
    *runs) and whether each face's system was solvable.
    """
    m = nu.shape[0]
    lift = lambda a: jnp.expand_dims(a, 1)  # the face axis after the vector axis
    eye = jnp.eye(m, dtype=nu.dtype).reshape((m, m) + (1,) * (f.ndim - 1))
    Kf = f[:, None] * f[None, :] * jnp.expand_dims(K, 2) + (1.0 - f)[:, None] * eye
    r = f * (lift(G) + ops.sum_axis(jnp.expand_dims(K, 2) * ((1.0 - f) * lift(nu))[None], 1))
    system = jax.lax.optimization_barrier((Kf, jnp.stack([r, jnp.broadcast_to(f, r.shape)], 1)))
    PQ = spd_solve(*system)
    p, q = PQ[:, 0], PQ[:, 1]
    z = f * (lift(nu) + p)
    sq = ops.sum_axis(f * q, 0)
    tau = (ops.sum_axis(z, 0) - beta) / jnp.where(sq > 0, sq, 1.0)
    return jnp.where(sat, z - tau * q, z), sq > 0


def model_step(nu, G, K, beta):
    """(argmax_{z in Delta} q(z), q there) for q(z) = G.(z - nu) - (1/2)(z - nu)^T K (z - nu),
    K SPD (see ``face_step``).  The maximiser is the stationary point of the face of Delta in
    whose relative interior it lies; so the best of the 2^(m+1) face stationary points, each
    clipped into Delta (a no-op, up to round-off, for the maximiser), is the maximiser.

    On a seeds-minor block the 2^m faces off the cap come first: their best point is the
    maximiser over {z >= 0}, and where it satisfies sum z <= beta in every lane it is the
    maximiser over Delta, so the cap's faces are enumerated only when some lane needs them
    (late in a run beta is large and the cap never binds), and only those lanes take them.
    One run (under ``vmap``, where a ``cond`` would compute both branches) enumerates all
    faces at once."""
    runs = nu.ndim - 1
    if runs == 0:
        return _best_face(nu, G, K, beta, (False, True))
    z, value = _best_face(nu, G, K, beta, (False,))
    over = ops.sum_axis(z, 0) > beta
    some = jnp.max(over.astype(jnp.int32)) > 0
    every = jax.lax.cond(
        some, lambda: _best_face(nu, G, K, beta, (False, True)), lambda: (z, value)
    )
    # a lane takes every face's answer only where it needs it: the same answer whatever lanes
    # share its block (the two enumerations can pick different points at a tie of round-off)
    return jnp.where(over, every[0], z), jnp.where(over, every[1], value)


def _best_face(nu, G, K, beta, caps):
    """The best stationary point over Delta's faces off the cap (``caps`` (False,): each
    clipped into {z >= 0}, the best is the maximiser over that orthant) or all of them
    ((False, True): each clipped into Delta, the best is the maximiser over Delta)."""
    m, runs = nu.shape[0], nu.ndim - 1
    bits = (np.arange(2**m)[None, :] >> np.arange(m)[:, None]) & 1  # (m, 2^m)
    f = jnp.asarray(np.concatenate([bits] * len(caps), axis=1), nu.dtype)
    f = f.reshape(f.shape + (1,) * runs)
    sat = jnp.asarray(np.repeat(np.asarray(caps), 2**m)).reshape((-1,) + (1,) * runs)
    z, ok = face_step(nu, G, K, beta, f, sat)
    ok = (ok | ~sat) & jnp.all(jnp.isfinite(z), axis=0)
    z = jnp.where(ok, z, 0.0)
    z = into_capped_simplex(z, beta) if True in caps else jnp.maximum(z, 0.0)
    d = z - jnp.expand_dims(nu, 1)
    Kd = ops.sum_axis(jnp.expand_dims(K, 2) * d[None], 1)
    value = ops.sum_axis(jnp.expand_dims(G, 1) * d - 0.5 * d * Kd, 0)
    value = jnp.where(ok & ~jnp.isnan(value), value, -jnp.inf)
    # the first best face, as a running maximum (element-wise; no gather)
    z_best, v_best = z[:, 0], value[0]
    for i in range(1, value.shape[0]):
        better = value[i] > v_best
        z_best, v_best = jnp.where(better, z[:, i], z_best), jnp.where(better, value[i], v_best)
    return z_best, v_best


def into_capped_simplex(z, beta):
    """Clip a point that lies in Delta up to round-off: z_+, scaled down onto sum = beta if over."""
    z = jnp.maximum(z, 0.0)
    s = ops.sum_axis(z, 0)
    return jnp.where(s > beta, z * (beta / jnp.where(s > beta, s, 1.0)), z)
