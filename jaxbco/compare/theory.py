"""Theory (Hikima et al., Thms. 1-4) for rectified-bco: the bound constants and bound curves.

With its defaults c = 1/2, eps = 0.1, delta = 1/T (alpha_t = t^c, or sigma t when strongly
convex; gamma_t = t^(c+eps), eta_t = t^c):

    Thm. 1 (convex, fixed g)   R_T <= (9F^2d^2/(4(1-c)) + D^2/2 + 2F) T^max(c,1-c)
                               V_T <= 27F^2d^2/4 + 3FdD(1+eps)/eps + D^2
    Thm. 2 (convex, varying g) V_T <= ((27F^2d^2 + G^2)/4 + 3FdD(8 + 1/eps) + 2D^2) T^(1-c/2)
                               (its regret: Thm. 1's, whose proof never uses a fixed g)
    Thm. 3 (strongly, fixed)   R_T <= (9F^2d^2/(4 sigma) + 2F)(1 + log T)
                               V_T <= 27F^2d^2/(4 sigma) + 3FdD(1+eps)/eps
    Thm. 4 (strongly, varying) V_T <= (27F^2d^2/(4 sigma) + G^2/4 + 3FdD(1 + 1/eps + 4/sigma)
                                      + D^2) sqrt(T (1 + log T))

F, G are estimated from the problem (``bound_constants``): the maximum over the rounds of the
loss's and constraint's ``lipschitz`` bounds on a ball about 0 that contains X (data of seeds
0-3; exact for replayed data), or of sampled gradient norms at points of X when a family has
no bound; D = diameter of X; d = the estimator's dimension (X's affine hull).  ``LITERATURE``:
the orders the baselines' sources state.
"""

from __future__ import annotations

import numpy as np


# Orders the baselines' sources state (exponent of T; see each algorithm's docstring).
LITERATURE = {
    "rectified-bco": ("Thms. 1-4 (this paper)", ""),
    "flaxman-bgd": ("T^(3/4)", "none (projects onto a known set)"),
    "agarwal-2pt": ("T^(1/2) (log T if strongly convex)", "none (projects onto a known set)"),
    "mahdavi-pd": ("T^(1/2)", "soft T^(3/4)"),
    "recoo": ("T^(1/2) (log T) [full information]", "hard T^(3/4) (sqrt(T log T))"),
    "yuan-lamperski": ("T^max(c,1-c) [full information]", "hard T^(1-c/2)"),
    "yu-neely": ("T^(1/2) [full information]", "soft O(1), fixed g"),
    "flaxman-bgd-xonly": ("T^(3/4) (theorem for a known feasible set; here g unused)", "no bound (g unused)"),
    "agarwal-2pt-xonly": ("T^(1/2) (theorem for a known feasible set; here g unused)", "no bound (g unused)"),
}


def outer_radius(domain) -> float:
    """max_{x in X} ||x||: the radius of a ball about 0 containing X (for ``lipschitz``)."""
    from jaxbco import sets

    if isinstance(domain, sets.L2Ball):
        return float(np.linalg.norm(np.asarray(domain.center)) + float(domain.radius))
    if isinstance(domain, sets.Box):
        return float(np.linalg.norm(np.maximum(np.abs(np.asarray(domain.lower)),
                                               np.abs(np.asarray(domain.upper)))))
    if isinstance(domain, sets.Simplex):
        return float(domain.total)
    c, _ = domain.inscribed_ball()
    return float(np.linalg.norm(np.asarray(c)) + float(domain.diameter()))


def _round_data(seq, horizon, stream, seeds):
    """The data of rounds 1..T (at most 20000 evenly spaced ones) for seeds 0..seeds-1, with
    the engine's keys (stream 0: loss, 2: constraint); leading axis seeds x rounds."""
    import jax
    import jax.numpy as jnp

    from jaxbco.keys import round_keys, seed_keys
    from jaxbco.sequences import Fixed, Replay

    if isinstance(seq, Fixed):
        return jax.tree_util.tree_map(lambda v: v[None], seq.value)
    if isinstance(seq, Replay):
        return jax.tree_util.tree_map(lambda v: v[:horizon], seq.values)
    ts = np.unique(np.linspace(1, horizon, min(horizon, 20000)).astype(np.int32))
    keys = seed_keys(jax.random.key(0), jnp.arange(seeds))

    def one(k, t):
        return seq.sample(round_keys(k, t)[stream], t)

    data = jax.vmap(lambda k: jax.vmap(lambda t: one(k, t))(jnp.asarray(ts)))(keys)
    return jax.tree_util.tree_map(lambda v: v.reshape((-1,) + v.shape[2:]), data)


def _sampled_gradient_norm(fn, data, domain, n_points=64):
    """max ||grad_x fn(x, data_i)|| over points of X (projected Gaussians) and the data."""
    import jax
    import jax.numpy as jnp

    c, _ = domain.inscribed_ball()
    z = jax.random.normal(jax.random.key(1), (n_points, c.shape[0]), c.dtype)
    pts = jax.vmap(domain.project)(c + float(domain.diameter()) * z)
    grad = jax.grad(fn)
    norms = jax.vmap(lambda d: jax.vmap(lambda x: jnp.linalg.norm(grad(x, d)))(pts))(data)
    return float(jnp.max(norms))


def bound_constants(problem, horizon: int, *, strongly_convex: bool | None = None, hyper=None,
                    seeds: int = 4):
    """F, G, D, d, sigma, c, eps of Theorems 1-4 for ``problem`` (see the module docstring);
    ``strongly_convex`` None: the problem's own ``strongly_convex`` flag."""
    import jax

    if strongly_convex is None:
        strongly_convex = problem.strongly_convex

    radius = outer_radius(problem.domain)
    theta = _round_data(problem.loss_data, horizon, 0, seeds)
    phi = _round_data(problem.constraint_data, horizon, 2, seeds)
    try:
        F = float(np.max(jax.vmap(lambda th: problem.loss.lipschitz(th, radius))(theta)))
        f_how = "loss.lipschitz"
    except NotImplementedError:
        F = _sampled_gradient_norm(problem.loss.value, theta, problem.domain)
        f_how = "sampled gradients"
    try:
        G = float(np.max(jax.vmap(lambda p: problem.constraint.lipschitz(p, radius))(phi)))
        g_how = "constraint.lipschitz"
    except NotImplementedError:
        G = _sampled_gradient_norm(problem.constraint.value, phi, problem.domain)
        g_how = "sampled gradients"
    c = float(np.asarray(getattr(hyper, "c", 0.5)).ravel()[0])
    eps = float(np.asarray(getattr(hyper, "eps", 0.1)).ravel()[0])
    sigma = float(np.asarray(getattr(hyper, "sigma", 1.0)).ravel()[0]) if strongly_convex else None
    from jaxbco.sequences import Fixed

    return dict(F=F, G=G, D=float(problem.domain.diameter()), d=int(problem.domain.hull_dim),
                sigma=sigma, c=c, eps=eps, fixed_g=isinstance(problem.constraint_data, Fixed),
                strongly_convex=strongly_convex, radius=radius, F_from=f_how, G_from=g_how)


def theorem(k: dict) -> str:
    """Which of Theorems 1-4 covers rectified-bco on this problem."""
    return {(False, True): "Thm. 1", (False, False): "Thm. 2", (True, True): "Thm. 3",
            (True, False): "Thm. 4"}[(k["strongly_convex"], k["fixed_g"])]


def bound_curves(k: dict, t) -> dict:
    """The theorem's bounds on R_t and hard V_t at rounds t (see the module docstring), with
    their orders: {"regret", "hard_violation", "regret_order", "violation_order",
    "regret_exponent", "violation_exponent", "label"}."""
    t = np.asarray(t, np.float64)
    F, G, D, d, c, eps, s = k["F"], k["G"], k["D"], k["d"], k["c"], k["eps"], k["sigma"]
    name = theorem(k)
    if k["strongly_convex"]:
        regret = (9 * F**2 * d**2 / (4 * s) + 2 * F) * (1 + np.log(t))  # Thm. 3
        r_order, r_exp = "log T", 0.0
    else:
        regret = (9 * F**2 * d**2 / (4 * (1 - c)) + D**2 / 2 + 2 * F) * t ** max(c, 1 - c)  # Thm. 1
        r_order, r_exp = f"T^{max(c, 1 - c):g}", max(c, 1 - c)
    if name == "Thm. 1":
        viol = np.full_like(t, 27 * F**2 * d**2 / 4 + 3 * F * d * D * (1 + eps) / eps + D**2)
        v_order, v_exp = "O(1)", 0.0
    elif name == "Thm. 2":
        viol = ((27 * F**2 * d**2 + G**2) / 4 + 3 * F * d * D * (8 + 1 / eps) + 2 * D**2) * t ** (1 - c / 2)
        v_order, v_exp = f"T^{1 - c / 2:g}", 1 - c / 2
    elif name == "Thm. 3":
        viol = np.full_like(t, 27 * F**2 * d**2 / (4 * s) + 3 * F * d * D * (1 + eps) / eps)
        v_order, v_exp = "O(1)", 0.0
    else:
        viol = ((27 * F**2 * d**2 / (4 * s) + G**2 / 4 + 3 * F * d * D * (1 + 1 / eps + 4 / s)
                 + D**2) * np.sqrt(t * (1 + np.log(t))))
        v_order, v_exp = "sqrt(T log T)", 0.5
    return dict(regret=regret, hard_violation=viol, regret_order=r_order, violation_order=v_order,
                regret_exponent=r_exp, violation_exponent=v_exp, label=f"{name} bound (rectified-bco)")
