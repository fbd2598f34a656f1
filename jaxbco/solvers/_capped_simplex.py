"""The capped simplex Delta = {nu >= 0, sum nu <= beta}, where the polyhedral dual lives.

``project_capped_simplex``: Euclidean projection onto Delta (optax's simplex projection when the
cap binds).  ``model_step``: the exact maximiser over Delta of a concave quadratic model
q(z) = G.(z - nu) - (1/2)(z - nu)^T K (z - nu), K SPD: one guessed face whose point is checked
against the model's KKT conditions (``kkt_face``), else by enumerating Delta's 2^(m+1) faces
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
from jaxbco.solvers._tail import open_first


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
    z, ok, _ = _face_parts(nu, G, K, beta, f, sat)
    return z, ok


def _face_parts(nu, G, K, beta, f, sat):
    """``face_step``'s z and solvability, and the cap's multiplier tau (0 off the cap)."""
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
    return jnp.where(sat, z - tau * q, z), sq > 0, jnp.where(sat, tau, 0.0)


def model_step(nu, G, K, beta):
    """(argmax_{z in Delta} q(z), q there) for q(z) = G.(z - nu) - (1/2)(z - nu)^T K (z - nu),
    K SPD (see ``face_step``).  The maximiser is the stationary point of the face of Delta in
    whose relative interior it lies; so the best of the 2^(m+1) face stationary points, each
    clipped into Delta (a no-op, up to round-off, for the maximiser), is the maximiser.

    On a seeds-minor block on a CPU with m >= 3 rows, each lane first tries one face, its
    guess of the maximiser's (``kkt_face``: nu's own face with the rows whose G is positive):
    where that face's stationary point satisfies the model's KKT conditions it is the
    maximiser (q is strictly concave), the point the enumeration would pick.  The other lanes
    enumerate (``enumerate_block``), gathered into chunks of the block (``_tail.open_first``'s
    order).  Two rows (eight faces), one run (under ``vmap``, where a ``cond`` would compute
    every branch) and other platforms enumerate every face at once; one row has a closed
    form.

    Args:
        nu: the current point (m, *runs), in Delta.
        G: the model's gradient at nu (m, *runs).
        K: its curvature (m, m, *runs), symmetric positive definite.
        beta: the cap (*runs) or a scalar.

    Returns:
        (z (m, *runs), q(z) (*runs)).

    Example:
        >>> import jax.numpy as jnp
        >>> z, q = model_step(jnp.zeros(2), jnp.array([1.0, -1.0]), jnp.eye(2), 0.5)
        >>> [float(v) for v in z], float(q)
        ([0.5, 0.0], 0.375)
    """
    runs = nu.ndim - 1
    if nu.shape[0] == 1:
        return _one_row(nu, G, K, beta)
    if runs == 0:
        return _best_face(nu, G, K, beta, (False, True))
    if runs > 1 or nu.shape[0] < 3:  # two rows: eight faces at most, cheaper than the check
        return enumerate_block(nu, G, K, beta)
    return jax.lax.platform_dependent(nu, G, K, beta, cpu=_kkt_first, default=enumerate_block)


def _one_row(nu, G, K, beta):
    """``model_step`` for m = 1: z = clip(nu + G/K, 0, beta), exact to round-off (the block
    enumeration's compiled code was off the maximiser in some lanes at m = 1)."""
    z = jnp.clip(nu + G / K[0], 0.0, beta)
    d = z - nu
    return z, (G * d - 0.5 * d * (K[0] * d))[0]


def _kkt_first(nu, G, K, beta):
    """``model_step`` on a block (m, n): one guessed face per lane; the lanes where it is not
    the maximiser enumerate, gathered ``_tail.open_first``'s way into chunks of ~n/8 lanes,
    one chunk after another (one enumeration in the program, whatever their number)."""
    n = nu.shape[-1]
    z, value, ok = kkt_face(nu, G, K, beta)
    # n/8 lanes a chunk, in whole vectors of 16 (a seeds-minor block's padding, SEED_PAD): the
    # lanes of a chunk take the vector code the whole block takes, bitwise the same answers
    lanes = min(n, max(16, n // 8 // 16 * 16))
    beta = jnp.broadcast_to(beta, (n,)) if jnp.ndim(beta) else beta

    def chunk(c):
        z, value, need = c
        idx = open_first(~need, lanes)
        take = lambda a: jnp.take(a, idx, axis=-1) if jnp.ndim(a) else a
        z_s, v_s = enumerate_block(take(nu), take(G), take(K), take(beta))
        keep = need[idx]
        return (
            z.at[:, idx].set(jnp.where(keep, z_s, z[:, idx])),
            value.at[idx].set(jnp.where(keep, v_s, value[idx])),
            need.at[idx].set(False),
        )

    z, value, _ = jax.lax.while_loop(lambda c: jnp.any(c[2]), chunk, (z, value, ~ok))
    return z, value


def kkt_face(nu, G, K, beta):
    """(z, q(z), ok) per lane: the stationary point of one face of Delta, clipped as the
    enumeration clips it, and ``ok`` where it satisfies the model's KKT conditions (z_F >= 0;
    off the cap sum z <= beta and dq/dz_i <= 0 off F; on the cap tau >= 0 and dq/dz_i <= tau
    off F), so that it is the model's maximiser over Delta.  The face: F = {nu_i > 0 or
    G_i > 0}, on the cap where nu is (sum nu >= beta (1 - 64 eps)); where that face's point
    has a negative coordinate, once more without those rows (one active-set step)."""
    eps = jnp.finfo(nu.dtype).eps
    sat = ops.sum_axis(nu, 0) >= beta * (1 - 64 * eps)
    f = ((nu > 0) | (G > 0)).astype(nu.dtype)
    z, ok, value, negative = _checked_face(nu, G, K, beta, f, sat)
    z_next, ok_next, value_next, _ = _checked_face(nu, G, K, beta, jnp.where(negative, 0.0, f), sat)
    return jnp.where(ok, z, z_next), jnp.where(ok, value, value_next), ok | ok_next


def _checked_face(nu, G, K, beta, f, sat):
    """(z clipped as the enumeration clips it (into Delta on the cap, into z >= 0 off it), KKT
    holds, q there, the coordinates that came out negative) on the face f (m, *runs), ``sat``."""
    z, solvable, tau = _face_parts(nu, G, K, beta, f[:, None], sat[None])
    z, solvable, tau = z[:, 0], solvable[0], tau[0]
    grad = G - ops.sum_axis(K * (z - nu)[None], 1)  # dq/dz at z
    level = jnp.where(sat, tau, 0.0)
    inside = jnp.all(jnp.where(f > 0, z >= 0, grad <= level), axis=0)
    ok = (solvable | ~sat) & jnp.all(jnp.isfinite(z), axis=0) & inside
    ok = ok & jnp.where(sat, tau >= 0, ops.sum_axis(z, 0) <= beta)
    clipped = jnp.where(sat, into_capped_simplex(z, beta), jnp.maximum(z, 0.0))
    d = clipped - nu
    value = ops.sum_axis(G * d - 0.5 * d * ops.sum_axis(K * d[None], 1), 0)
    return clipped, ok & jnp.isfinite(value), value, z < 0


def enumerate_block(nu, G, K, beta):
    """``model_step`` on a block by enumeration: the 2^m faces off the cap first; their best
    point is the maximiser over {z >= 0}, and where it satisfies sum z <= beta in every lane
    it is the maximiser over Delta, so the cap's faces are enumerated only when some lane
    needs them (late in a run beta is large and the cap never binds), and only those lanes
    take them."""
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
