"""Differentiable hyperparameter tuning through whole runs, and the grid / random search it
is measured against.

    J(h) = mean over a batch of seeds of  R_T(h) / T + kappa V_T(h) / T,
    R_T = sum_t f_t(x_t) - f_t(x*),   V_T = sum_t [g_t(x_t)]_+   (hard violation),

is minimised over the free continuous hyperparameters h by an optax optimiser (Adam by
default) on gradients taken through the whole run: ``simulate.make_run`` is one pure function
(a ``lax.scan`` over T rounds, vmapped over seeds), so ``jax.jacfwd`` (default; memory
independent of T) or ``jax.grad`` (``mode="reverse"``, with ``jax.checkpoint`` on each
round's ``algorithm.step``) differentiates it.  Constrained form: with ``budget=v``,
"minimise R_T / T subject to mean V_T <= v" by the Lagrangian R_T / T + mu (V_T - v) / T,
descending in h and ascending in mu multiplicatively (scale-free, mu stays > 0):
mu <- mu exp(multiplier_lr clip((mean V_T - v) / v, -1, 1)), mu_0 = kappa.

Free hyperparameters move in an unconstrained coordinate z (``Transform``) that respects
their ranges: c = 1/2 + sigmoid(z) / 2, eps = softplus(z), xi = sigmoid(z), delta = xi r
sigmoid(z) (so delta <= xi r; r: the inscribed radius of X) and exp(z) for the positive
scales and step sizes; any other field of any ``eqx.Module`` hyper pytree (a baseline's) gets
its ``Transform`` from the ``transforms`` dict.

Seeds: training ids 0..S-1 every step (common random numbers, the default) or
step * S + 0..S-1 (``fresh_seeds=True``); the held-out ids start at ``HELDOUT_OFFSET`` = 2^31,
disjoint from every training id.  J on held-out seeds is always that of the exact algorithm
(``smoothing`` only changes the runs the gradients are taken through).

Cost, counted in full runs (one seed x one setting x T rounds): a value-only run is 1; a
forward-mode gradient of k free parameters is k + 1 (one primal and k tangent streams, each
about as costly as the primal); a reverse-mode gradient is 3 (forward + a backward of about
twice the work), 4 with the step recomputed by ``jax.checkpoint``.  These are the usual cost
models, not measurements; ``measure_cost`` measures them (quadratic-ball, k = 3, CPU: forward
2.3, reverse 1.3 value-only runs per seed; see docs/tuning.md), and wall times are reported.

Example::

    from jaxbco import problems, tune
    problem, _ = problems.make("quadratic-ball", 10)
    res = tune.tune(problem, 500, free=("c", "eps", "alpha_scale"), kappa=1.0, steps=20)
    res.heldout_start.J, res.heldout_end.J, res.hyper
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import sys
import time
from typing import Any, Callable, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxbco import _checks, simulate
from jaxbco.algorithms import AbstractAlgorithm, RectifiedBCO
from jaxbco.comparator import has_comparator

HELDOUT_OFFSET = 2**31  # held-out seed ids are HELDOUT_OFFSET + 0..H-1; training ids < 2^31
_ZCLIP = 15.0  # sigmoid arguments are clipped to +-15 (float32 sigmoid(17) rounds to 1)
_ZINV = 12.0  # inverse maps clamp to +-12 (a start at c = 1/2 becomes c = 1/2 + 3e-6)
FORWARD, REVERSE = "forward", "reverse"
REVERSE_COST, REMAT_EXTRA = 3, 1


# ---------------------------------------------------------------------------------------------
# Parameterisations


class Transform(NamedTuple):
    """value = forward(z, hyper, r); z = inverse(value, hyper, r) (NumPy, concrete);
    bounds(value0, hyper0, r) -> (lo, hi): the default search box, in value units.  ``late``:
    forward reads other free fields of ``hyper`` (delta reads xi), so it is applied after them.
    ``start_clip``: (lo, hi) in z for the starting point of gradient tuning only (c's theorem
    value 1/2 is the edge of its range, where sigmoid is flat: tuning starts at z >= -4)."""

    forward: Callable
    inverse: Callable
    bounds: Callable
    late: bool = False
    start_clip: tuple = (-np.inf, np.inf)


def _sigmoid(z):
    return jax.nn.sigmoid(jnp.clip(z, -_ZCLIP, _ZCLIP))


def _logit(p):
    edge = 1.0 / (1.0 + np.exp(_ZINV))
    p = np.clip(np.asarray(p, np.float64), edge, 1.0 - edge)
    return np.log(p) - np.log1p(-p)


def interval(lo: float, hi: float, bounds=None, start_clip=(-np.inf, np.inf)) -> Transform:
    """value = lo + (hi - lo) sigmoid(z), in (lo, hi)."""
    span = hi - lo
    default = ((lambda v, h, r: bounds) if bounds is not None
               else (lambda v, h, r: (lo + 1e-3 * span, hi - 1e-3 * span)))
    return Transform(lambda z, h, r: lo + span * _sigmoid(z),
                     lambda v, h, r: _logit((np.asarray(v, np.float64) - lo) / span), default,
                     start_clip=start_clip)


def positive_softplus(bounds=None) -> Transform:
    """value = softplus(z) > 0."""
    def inverse(v, h, r):
        v = np.maximum(np.asarray(v, np.float64), 1e-30)
        return v + np.log(-np.expm1(-v))

    default = (lambda v, h, r: bounds) if bounds is not None else (lambda v, h, r: (0.01, 2.0))
    return Transform(lambda z, h, r: jax.nn.softplus(z), inverse, default)


def positive_log(factor: float = 100.0) -> Transform:
    """value = exp(z) > 0; default search box [value0 / factor, value0 * factor]."""
    return Transform(lambda z, h, r: jnp.exp(z), lambda v, h, r: np.log(np.asarray(v, np.float64)),
                     lambda v, h, r: (float(v) / factor, float(v) * factor))


def unit_interval(factor: float = 10.0) -> Transform:
    """value = sigmoid(z) in (0, 1); default box [value0 / factor, min(value0 * factor, 1/2)]."""
    return Transform(lambda z, h, r: _sigmoid(z), lambda v, h, r: _logit(v),
                     lambda v, h, r: (float(v) / factor, min(float(v) * factor, 0.5)))


def delta_ratio(lo_ratio: float = 0.01, hi_ratio: float = 0.999) -> Transform:
    """delta = xi r sigmoid(w) in (0, xi r]; default box delta / (xi r) in [0.01, 0.999];
    tuning starts at w <= 3 (the theorem value delta = xi r is the edge, sigmoid is flat)."""
    return Transform(lambda w, h, r: h.xi * r * _sigmoid(w),
                     lambda v, h, r: _logit(np.asarray(v, np.float64) / (float(np.asarray(h.xi)) * r)),
                     lambda v, h, r: (lo_ratio * float(np.asarray(h.xi)) * r,
                                      hi_ratio * float(np.asarray(h.xi)) * r), late=True,
                     start_clip=(-np.inf, 3.0))


def default_transforms() -> dict[str, Transform]:
    """By field name: ``Hyper``'s fields and the baselines' step sizes (all positive ones exp)."""
    log = positive_log()
    out = {"c": interval(0.5, 1.0, bounds=(0.501, 0.99), start_clip=(-4.0, np.inf)),
           "eps": positive_softplus(),
           "xi": unit_interval(), "delta": delta_ratio()}
    for name in ("sigma", "alpha_scale", "gamma_scale", "eta_scale", "eta", "nu", "delta_m",
                 "V", "alpha", "gamma"):
        out[name] = log
    return out


@dataclasses.dataclass(frozen=True)
class Space:
    """The free fields of ``base`` (one setting, no grid axis) and their transforms.
    ``decode(z)`` works on tracers (z: shape (k,); vmap for a batch); ``encode`` is NumPy."""

    base: Any
    names: tuple
    transforms: tuple
    radius: float

    @property
    def k(self) -> int:
        return len(self.names)

    def _order(self):
        idx = range(self.k)
        late = [self.transforms[i].late for i in idx]
        return [i for i in idx if not late[i]] + [i for i in idx if late[i]]

    def decode(self, z):
        h = self.base
        for i in self._order():
            name = self.names[i]
            value = self.transforms[i].forward(z[i], h, self.radius)
            h = eqx.tree_at(lambda m: getattr(m, name), h, value)
        return h

    def encode(self, hyper) -> np.ndarray:
        z = np.zeros(self.k)
        for i in self._order():  # xi is encoded (and set) before delta reads it
            z[i] = self.transforms[i].inverse(getattr(hyper, self.names[i]), hyper, self.radius)
        return z

    def start(self, hyper) -> np.ndarray:
        """``encode`` clipped to each transform's ``start_clip`` (where gradient tuning starts)."""
        z = self.encode(hyper)
        return np.asarray([np.clip(zi, *tr.start_clip) for zi, tr in zip(z, self.transforms)])

    def values(self, hyper) -> dict:
        return {n: float(np.asarray(getattr(hyper, n))) for n in self.names}

    def box(self, bounds: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The search box in z (from value bounds; ``bounds`` overrides the defaults)."""
        bounds = {} if bounds is None else bounds
        lo, hi = np.zeros(self.k), np.zeros(self.k)
        for i, (name, tr) in enumerate(zip(self.names, self.transforms)):
            v0 = np.asarray(getattr(self.base, name))
            b = bounds.get(name) or tr.bounds(v0, self.base, self.radius)
            lo[i] = tr.inverse(b[0], self.base, self.radius)
            hi[i] = tr.inverse(b[1], self.base, self.radius)
            if not lo[i] < hi[i]:
                raise ValueError(f"the search bounds of {name} must satisfy lo < hi inside its "
                                 f"range; got {b}")
        return lo, hi


def make_space(problem, init, free, transforms: dict | None = None) -> Space:
    """Validate ``free`` against the fields of ``init`` and pick each one's transform."""
    if isinstance(free, str):
        free = tuple(f for f in free.split(",") if f)
    free = tuple(free)
    if not free:
        raise ValueError("free must name at least one hyperparameter")
    if len(set(free)) != len(free):
        raise ValueError(f"free names a hyperparameter twice: {list(free)}")
    fields = [f.name for f in dataclasses.fields(init)]
    table = {**default_transforms(), **(transforms or {})}
    for name in free:
        if name not in fields:
            raise ValueError(f"free hyperparameter {name!r} is not a field of {type(init).__name__}; "
                             f"choose from: {', '.join(fields)}")
        if name not in table:
            raise ValueError(f"no parameterisation for {name!r}: pass "
                             f"transforms={{{name!r}: Transform(...)}}")
        if np.ndim(getattr(init, name)) != 0:
            raise ValueError(f"the initial hyperparameters must be one setting (scalars); {name} has "
                             f"shape {np.shape(getattr(init, name))}")
    if "delta" in free and table["delta"].late and not hasattr(init, "xi"):
        raise ValueError("delta's default parameterisation needs a field xi (delta = xi r sigmoid(w))")
    _, r = problem.domain.inscribed_ball()
    base = jax.tree_util.tree_map(lambda v: jnp.asarray(v), init)
    return Space(base, free, tuple(table[n] for n in free), float(r))


# ---------------------------------------------------------------------------------------------
# Objective and evaluation


class Evaluation(NamedTuple):
    """Mean over the seeds that did not fail: J, R_T / T, V_T; the number of failed seeds; the
    standard error of J's mean; ``per_seed`` J (NaN for failed seeds)."""

    J: float
    regret: float
    violation: float
    failed: int
    se: float
    per_seed: np.ndarray


def _evaluation(r, v, failed, kappa, horizon) -> Evaluation:
    """From per-seed R_T / T, V_T and failed flags of one setting."""
    j = np.where(failed, np.nan, r + kappa * v / horizon)
    ok = ~failed
    n = int(ok.sum())
    if n == 0:
        return Evaluation(np.inf, np.nan, np.nan, len(j), np.nan, j)
    se = float(np.std(j[ok], ddof=1) / np.sqrt(n)) if n > 1 else np.nan
    return Evaluation(float(np.mean(j[ok])), float(np.mean(r[ok])), float(np.mean(v[ok])),
                      int(failed.sum()), se, j)


def _summaries(out, horizon):
    """(G,) mean R_T / T, mean V_T, failed count over seeds (failed seeds left out)."""
    ok = ~out["failed"]
    n = jnp.maximum(jnp.sum(ok, axis=-1), 1)
    r = jnp.sum(jnp.where(ok, out["regret"][..., -1], 0.0), axis=-1) / n / horizon
    v = jnp.sum(jnp.where(ok, out["hard_violation"][..., -1], 0.0), axis=-1) / n
    return r, v, jnp.sum(~ok, axis=-1)


def _per_seed(out, horizon):
    """(G, S) R_T / T, V_T and failed flags."""
    return out["regret"][..., -1] / horizon, out["hard_violation"][..., -1], out["failed"]


def _smoothed(algorithm, smoothing):
    if smoothing is None:
        return algorithm
    if not hasattr(algorithm, "smoothing"):
        raise ValueError(f"smoothing needs an algorithm with a smoothing field (RectifiedBCO); "
                         f"{type(algorithm).__name__} has none")
    return dataclasses.replace(algorithm, smoothing=float(smoothing))


class _Remat(AbstractAlgorithm):
    """``inner`` with each round's ``step`` under ``jax.checkpoint``: reverse mode stores the
    step's inputs per round and recomputes its intermediates (the prox solver's) on the way back."""

    inner: AbstractAlgorithm

    def default_hyper(self, problem, horizon):
        return self.inner.default_hyper(problem, horizon)

    def check_hyper(self, hyper, problem):
        return self.inner.check_hyper(hyper, problem)

    def init(self, problem, hyper, x1):
        return self.inner.init(problem, hyper, x1)

    def play(self, state, problem, hyper, inp):
        return self.inner.play(state, problem, hyper, inp)

    def step(self, state, problem, hyper, inp):
        return eqx.filter_checkpoint(self.inner.step)(state, problem, hyper, inp)

    def decision(self, state):
        return self.inner.decision(state)

    def multiplier(self, state):
        return self.inner.multiplier(state)


def make_objective(problem, horizon: int, space: Space, *, algorithm=None, kappa: float = 1.0,
                   key=0, dtype="float32", smoothing=None, remat: bool = False,
                   comparator: bool = True):
    """``objective(z, mu, seed_ids) -> (L, (J, mean R_T / T, mean V_T, failed))`` with
    J = R_T / T + kappa V_T / T and L = R_T / T + mu V_T / T (mu = kappa for the plain form):
    a pure function of z to hand to jax.jacfwd / jax.grad.  ``comparator=False`` measures
    regret against x_1 instead of x* (x* does not depend on h: same gradient, less to compile).
    Seeds are not padded to ``simulate.SEED_PAD`` (S seeds cost S runs; a seed's result may then
    differ from its padded run by rounding only)."""
    algorithm = RectifiedBCO() if algorithm is None else algorithm
    algorithm = _smoothed(algorithm, smoothing)
    algorithm = _Remat(algorithm) if remat else algorithm
    fn = simulate.make_run(problem, horizon, algorithm=algorithm, checkpoints=np.asarray([horizon]),
                           dtype=dtype, comparator=comparator, seed_pad=False)
    master = jax.random.key(key) if isinstance(key, (int, np.integer)) else key
    dt = jnp.dtype(dtype)

    def objective(z, mu, seed_ids):
        r, v, failed = _summaries(fn(master, space.decode(z), seed_ids), horizon)
        J = r[0] + jnp.asarray(kappa, dt) * v[0] / horizon
        L = r[0] + mu * v[0] / horizon
        return L, (J, r[0], v[0], failed[0])

    objective.compiler_options = fn.compiler_options
    return objective


class _Context:
    """What tune / grid_search / random_search share: the space, the exact run function
    (jitted once per batch shape) and the seed sets."""

    def __init__(self, problem, horizon, *, algorithm, init, free, transforms, kappa, key, dtype):
        dtype = _checks.check_dtype(dtype)
        self.horizon = _checks.check_positive_int("horizon T", horizon)
        _checks.check_range("kappa", kappa, low=0.0)
        self.problem, self.kappa, self.key, self.dtype = problem, float(kappa), key, dtype
        self.algorithm = RectifiedBCO() if algorithm is None else algorithm
        init = self.algorithm.default_hyper(problem, self.horizon) if init is None else init
        self.algorithm.check_hyper(init, problem)
        self.init = init
        self.space = make_space(problem, init, free, transforms)
        self.master = jax.random.key(key) if isinstance(key, (int, np.integer)) else key
        # Regret against x* where it is known (portfolios: the offline interior-point optimum,
        # comparator.fixed_optimum); else against x_1, which differs from R_T(x*) by a
        # constant, the same for every h and seed.
        self.comparator = has_comparator(problem, self.horizon)
        fn = simulate.make_run(problem, self.horizon, algorithm=self.algorithm,
                               checkpoints=np.asarray([self.horizon]), dtype=dtype,
                               comparator=self.comparator)
        self._run = jax.jit(lambda hyper, ids: _per_seed(fn(self.master, hyper, ids), self.horizon),
                            compiler_options=fn.compiler_options)

    def grid_of(self, Z):
        """(G, k) z -> hyper pytree with a leading grid axis G."""
        return jax.vmap(self.space.decode)(jnp.asarray(Z, self.dtype))

    def evaluate(self, hyper_grid, ids) -> list[Evaluation]:
        """Exact-algorithm J per setting (leading axis G) on the seeds ``ids``: one call."""
        r, v, failed = jax.device_get(self._run(hyper_grid, jnp.asarray(ids, jnp.uint32)))
        return [_evaluation(r[i], v[i], failed[i], self.kappa, self.horizon) for i in range(len(r))]

    def stack(self, hypers):
        """One-setting hypers -> one pytree with a leading axis."""
        stack = lambda *v: jnp.stack([jnp.asarray(x, self.dtype) for x in v])
        return jax.tree_util.tree_map(stack, *hypers)

    def finalize(self, hyper):
        """A concrete, validated hyper (NumPy float64 leaves) of the same class."""
        h = jax.tree_util.tree_map(lambda v: np.asarray(v, np.float64), hyper)
        h = type(h)(**{f.name: getattr(h, f.name) for f in dataclasses.fields(h)})
        self.algorithm.check_hyper(h, self.problem)
        return h


def heldout_ids(n: int) -> np.ndarray:
    """Held-out seed ids HELDOUT_OFFSET + 0..n-1 (disjoint from every training id < 2^31)."""
    n = _checks.check_positive_int("heldout seeds", n)
    return HELDOUT_OFFSET + np.arange(n, dtype=np.int64)


def training_ids(step: int, seeds: int, fresh: bool) -> np.ndarray:
    """Step ``step``'s training ids: 0..S-1 (common random numbers) or step S + 0..S-1."""
    base = step * seeds if fresh else 0
    return base + np.arange(seeds, dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# Gradient tuning


def _compiled_step(ctx: _Context, mode, optimizer, smoothing, remat, ids):
    """The compiled ``step(z, opt_state, mu, ids) -> (z, opt_state, (J, L, R/T, V_T, failed,
    dL/dz))``, the starting (z, opt_state, mu) and the full runs per seed of one step."""
    space, T = ctx.space, ctx.horizon
    if mode not in (FORWARD, REVERSE):
        raise ValueError(f"mode must be 'forward' or 'reverse'; got {mode!r}")
    objective = make_objective(ctx.problem, T, space, algorithm=ctx.algorithm, kappa=ctx.kappa,
                               key=ctx.master, dtype=ctx.dtype, smoothing=smoothing,
                               remat=remat and mode == REVERSE, comparator=ctx.comparator)
    if mode == FORWARD:  # one primal + k tangent streams; memory independent of T
        grad_fn = lambda z, mu, ids: jax.jacfwd(objective, has_aux=True)(z, mu, ids)
        runs_per_seed = space.k + 1
    else:  # residuals of every round are stored: memory grows with T
        def grad_fn(z, mu, ids):
            (_, aux), g = jax.value_and_grad(objective, has_aux=True)(z, mu, ids)
            return g, aux
        runs_per_seed = REVERSE_COST + (REMAT_EXTRA if remat else 0)

    def step(z, opt_state, mu, ids):
        g, (J, r, v, failed) = grad_fn(z, mu, ids)
        L = r + mu * v / T
        g = jnp.where(jnp.isfinite(g), g, 0.0)  # all seeds failed: no move
        updates, opt_state = optimizer.update(g, opt_state, z)
        return optax.apply_updates(z, updates), opt_state, (J, L, r, v, failed, g)

    z = jnp.asarray(space.start(ctx.init), ctx.dtype)
    opt_state = optimizer.init(z)
    mu = jnp.asarray(ctx.kappa, ctx.dtype)
    ids = jnp.asarray(ids, jnp.uint32)
    compiled = jax.jit(step, compiler_options=objective.compiler_options).lower(
        z, opt_state, mu, ids).compile()
    return compiled, z, opt_state, mu, runs_per_seed


def default_optimizer(steps: int, lr: float = 0.3) -> optax.GradientTransformation:
    """Adam on z with a cosine-decayed learning rate, ``lr`` -> ``lr`` / 10 over ``steps``."""
    return optax.adam(optax.cosine_decay_schedule(lr, steps, alpha=0.1))


@dataclasses.dataclass(frozen=True)
class TuneResult:
    """``trajectory``: per step (at z before the update) the training J, L, mean R_T / T, mean
    V_T, mu, the gradient dL/dz (steps, k), and the free values (steps + 1,) each by name.
    ``hyper``: the final one (validated); ``heldout_start`` / ``heldout_end``: exact-algorithm
    Evaluations on the held-out seeds (None when heldout=0).  ``runs``: full-run equivalents
    of the training steps (see the module docstring); ``eval_runs``: of the held-out
    evaluation.  ``wall_s``: the training loop (compile included; ``compile_s`` of it)."""

    names: tuple
    trajectory: dict
    hyper: Any
    hyper_start: Any
    heldout_start: Evaluation | None
    heldout_end: Evaluation | None
    runs: int
    runs_per_step: int
    eval_runs: int
    wall_s: float
    compile_s: float
    eval_wall_s: float
    mode: str
    seeds: int
    fresh_seeds: bool
    steps: int


def tune(problem, horizon: int, *, algorithm: AbstractAlgorithm | None = None, init=None,
         free=("c", "eps", "alpha_scale"), transforms: dict | None = None, kappa: float = 1.0,
         budget: float | None = None, multiplier_lr: float = 0.5,
         optimizer: optax.GradientTransformation | None = None, steps: int = 20, seeds: int = 16,
         fresh_seeds: bool = False, heldout: int = 64, key=0, mode: str = FORWARD,
         smoothing: float | None = None, remat: bool = True, dtype="float32",
         _context: _Context | None = None) -> TuneResult:
    """Minimise J (or, with ``budget``, R_T / T s.t. mean V_T <= budget) by ``steps`` optimiser
    steps on ``seeds`` training seeds each; evaluate the start and the result on ``heldout``
    held-out seeds (exact algorithm).  ``init``: the starting hyper (default: the algorithm's
    ``default_hyper``, the theorem defaults for RectifiedBCO); ``optimizer``: any optax
    GradientTransformation on z (default ``default_optimizer(steps)``: Adam, lr 0.3 -> 0.03);
    ``mode``: "forward" (jacfwd) or "reverse" (grad; ``remat`` checkpoints each round's step).
    One compiled step function."""
    ctx = _context or _Context(problem, horizon, algorithm=algorithm, init=init, free=free,
                               transforms=transforms, kappa=kappa, key=key, dtype=dtype)
    steps = _checks.check_positive_int("steps", steps)
    seeds = _checks.check_positive_int("seeds", seeds)
    if budget is not None:
        _checks.check_range("budget", budget, low=0.0)
        if ctx.kappa <= 0:
            raise ValueError("with a budget, kappa is the starting multiplier mu_0 and must be > 0")
    _checks.check_range("multiplier_lr", multiplier_lr, low=0.0)
    if steps * seeds >= HELDOUT_OFFSET:
        raise ValueError("steps x seeds must stay below 2^31 so training ids never reach the "
                         "held-out ids")
    if heldout:
        _checks.check_positive_int("heldout", heldout)
    space = ctx.space
    optimizer = default_optimizer(steps) if optimizer is None else optimizer
    ids0 = training_ids(0, seeds, fresh_seeds)
    start = time.perf_counter()
    compiled, z, opt_state, mu, runs_per_seed = _compiled_step(ctx, mode, optimizer, smoothing,
                                                               remat, ids0)
    compile_s = time.perf_counter() - start
    rows, zs = [], [np.asarray(z, np.float64)]
    for s in range(steps):
        ids = jnp.asarray(training_ids(s, seeds, fresh_seeds), jnp.uint32)
        z, opt_state, rec = compiled(z, opt_state, mu, ids)
        rec = jax.device_get(rec)
        rows.append(rec + (float(mu),))
        zs.append(np.asarray(z, np.float64))
        if budget is not None:  # multiplicative dual ascent on mu (the Lagrangian's multiplier)
            excess = np.clip((float(rec[3]) - budget) / max(budget, 1e-12), -1.0, 1.0)
            mu = jnp.asarray(float(mu) * np.exp(multiplier_lr * excess), ctx.dtype)
    wall = time.perf_counter() - start
    zs = np.stack(zs)
    traj = {name: np.asarray([row[i] for row in rows], np.float64)
            for i, name in enumerate(("J", "L", "regret", "violation"))}
    traj["failed"] = np.asarray([row[4] for row in rows])
    traj["grad"] = np.stack([np.asarray(row[5], np.float64) for row in rows])
    traj["multiplier"] = np.asarray([row[6] for row in rows])
    traj["z"] = zs
    decoded = [space.values(space.decode(jnp.asarray(zz, ctx.dtype))) for zz in zs]
    traj["values"] = {n: np.asarray([d[n] for d in decoded]) for n in space.names}
    final = ctx.finalize(space.decode(z))
    start_h = ctx.finalize(ctx.init)
    hs = he = None
    eval_wall = 0.0
    if heldout:
        t0 = time.perf_counter()
        hs, he = ctx.evaluate(ctx.stack([start_h, final]), heldout_ids(heldout))
        eval_wall = time.perf_counter() - t0
    return TuneResult(names=space.names, trajectory=traj, hyper=final, hyper_start=start_h,
                      heldout_start=hs, heldout_end=he, runs=steps * seeds * runs_per_seed,
                      runs_per_step=seeds * runs_per_seed, eval_runs=2 * heldout if heldout else 0,
                      wall_s=wall, compile_s=compile_s, eval_wall_s=eval_wall, mode=mode,
                      seeds=seeds, fresh_seeds=fresh_seeds, steps=steps)


# ---------------------------------------------------------------------------------------------
# Grid and random search (the baselines), each one compiled call over all settings x seeds


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """``Z``: (G, k) settings in z; ``values``: name -> (G,) their values; ``train``: (G,) J on
    the training seeds; ``best``: index of the lowest; ``hyper``: that setting (validated);
    ``heldout``: its Evaluation (None when heldout=0).  ``runs`` = G x seeds; ``wall_s``: the
    one call over all settings (compile included; ``compile_s`` of it)."""

    Z: np.ndarray
    values: dict
    train: np.ndarray
    best: int
    hyper: Any
    heldout: Evaluation | None
    runs: int
    eval_runs: int
    wall_s: float
    compile_s: float


def _search(ctx: _Context, Z, seeds: int, heldout: int) -> SearchResult:
    seeds = _checks.check_positive_int("seeds", seeds)
    hyper = ctx.grid_of(Z)
    ids = jnp.asarray(training_ids(0, seeds, False), jnp.uint32)
    start = time.perf_counter()
    compiled = ctx._run.lower(hyper, ids).compile()
    compile_s = time.perf_counter() - start
    r, v, failed = jax.device_get(compiled(hyper, ids))
    wall = time.perf_counter() - start
    J = np.asarray([_evaluation(r[i], v[i], failed[i], ctx.kappa, ctx.horizon).J
                    for i in range(len(r))])
    best = int(np.argmin(J))
    h = ctx.finalize(ctx.space.decode(jnp.asarray(Z[best], ctx.dtype)))
    ev = ctx.evaluate(ctx.stack([h]), heldout_ids(heldout))[0] if heldout else None
    vals = jax.device_get(jax.vmap(lambda z: {n: getattr(ctx.space.decode(z), n)
                                               for n in ctx.space.names})(jnp.asarray(Z, ctx.dtype)))
    return SearchResult(Z=np.asarray(Z), values={n: np.asarray(vals[n]) for n in ctx.space.names},
                        train=J, best=best, hyper=h, heldout=ev, runs=len(Z) * seeds,
                        eval_runs=heldout or 0, wall_s=wall, compile_s=compile_s)


def _grid_points(ctx, points, bounds):
    points = _checks.check_positive_int("points", points)
    lo, hi = ctx.space.box(bounds)
    axes = [np.linspace(a, b, points) for a, b in zip(lo, hi)]
    return np.stack([m.reshape(-1) for m in np.meshgrid(*axes, indexing="ij")], axis=-1)


def _random_points(ctx, samples, bounds, search_key):
    samples = _checks.check_positive_int("samples", samples)
    lo, hi = ctx.space.box(bounds)
    u = np.asarray(jax.random.uniform(jax.random.key(search_key), (samples, ctx.space.k)), np.float64)
    return lo + (hi - lo) * u


def grid_search(problem, horizon: int, *, algorithm=None, init=None, free=("c", "eps", "alpha_scale"),
                transforms=None, bounds: dict | None = None, points: int = 5, kappa: float = 1.0,
                seeds: int = 64, heldout: int = 64, key=0, dtype="float32",
                _context: _Context | None = None) -> SearchResult:
    """``points`` values per free hyperparameter, evenly spaced in z over the search box
    (``bounds``: name -> (lo, hi) in value units; defaults per ``Transform``), points^k settings
    x ``seeds`` training seeds in one call; the best is evaluated on the held-out seeds."""
    ctx = _context or _Context(problem, horizon, algorithm=algorithm, init=init, free=free,
                               transforms=transforms, kappa=kappa, key=key, dtype=dtype)
    return _search(ctx, _grid_points(ctx, points, bounds), seeds, heldout)


def random_search(problem, horizon: int, *, algorithm=None, init=None, free=("c", "eps", "alpha_scale"),
                  transforms=None, bounds: dict | None = None, samples: int = 125, kappa: float = 1.0,
                  seeds: int = 64, heldout: int = 64, key=0, search_key: int = 1, dtype="float32",
                  _context: _Context | None = None) -> SearchResult:
    """``samples`` settings uniform in z over the same box as ``grid_search``, one call."""
    ctx = _context or _Context(problem, horizon, algorithm=algorithm, init=init, free=free,
                               transforms=transforms, kappa=kappa, key=key, dtype=dtype)
    return _search(ctx, _random_points(ctx, samples, bounds, search_key), seeds, heldout)


def measure_cost(problem, horizon: int, *, algorithm=None, init=None,
                 free=("c", "eps", "alpha_scale"), seeds: int = 64, key=0, dtype="float32",
                 repeats: int = 2) -> dict:
    """Measured cost of a gradient in run-equivalents: wall time (compile excluded, best of
    ``repeats``) of one forward and one reverse (checkpointed) tuning step on ``seeds`` seeds,
    divided by that of one exact value-only call on the same seeds (comparator included in
    both).  Returns the three times and the two ratios next to the counted k + 1 and 4."""
    ctx = _Context(problem, horizon, algorithm=algorithm, init=init, free=free, transforms=None,
                   kappa=1.0, key=key, dtype=dtype)
    ids = training_ids(0, _checks.check_positive_int("seeds", seeds), False)

    def best(f):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            jax.block_until_ready(f())
            times.append(time.perf_counter() - t0)
        return min(times)

    h = ctx.stack([ctx.finalize(ctx.space.decode(jnp.asarray(ctx.space.start(ctx.init), ctx.dtype)))])
    plain = ctx._run.lower(h, jnp.asarray(ids, jnp.uint32)).compile()
    out = {"value_s": best(lambda: plain(h, jnp.asarray(ids, jnp.uint32))), "seeds": len(ids),
           "k": ctx.space.k}
    for mode in (FORWARD, REVERSE):
        compiled, z, opt_state, mu, counted = _compiled_step(ctx, mode, default_optimizer(1), None,
                                                             True, ids)
        out[f"{mode}_s"] = best(lambda: compiled(z, opt_state, mu, jnp.asarray(ids, jnp.uint32)))
        out[f"{mode}_ratio"] = out[f"{mode}_s"] / out["value_s"]
        out[f"{mode}_counted"] = counted
    return out


# ---------------------------------------------------------------------------------------------
# The comparison: defaults, grid search, random search, gradient tuning on the same held-out seeds


class Row(NamedTuple):
    """One method: its held-out Evaluation, full runs and wall time (compile included;
    ``compile_s`` of it) of its search, and the free values it chose."""

    method: str
    heldout: Evaluation
    runs: int
    wall_s: float
    values: dict
    compile_s: float = 0.0


def compare(problem, horizon: int, *, algorithm=None, init=None, free=("c", "eps", "alpha_scale"),
            transforms=None, bounds=None, kappa: float = 1.0, heldout: int = 256,
            search_seeds: int = 64, points: int = 5, samples: int | None = None, search_key: int = 1,
            key=0, dtype="float32", **tune_kwargs) -> list[Row]:
    """J on ``heldout`` held-out seeds at the defaults, after grid search, after random search
    (as many settings as the grid unless ``samples``) and after gradient tuning (``tune_kwargs``:
    steps, seeds, mode, fresh_seeds, optimizer, smoothing, ...); the four settings are
    evaluated together in one call.  ``runs``/``wall_s``: of each method's search."""
    ctx = _Context(problem, horizon, algorithm=algorithm, init=init, free=free,
                   transforms=transforms, kappa=kappa, key=key, dtype=dtype)
    grid = _search(ctx, _grid_points(ctx, points, bounds), search_seeds, 0)
    rand = _search(ctx, _random_points(ctx, samples or len(grid.Z), bounds, search_key),
                   search_seeds, 0)
    tuned = tune(problem, horizon, heldout=0, _context=ctx, **tune_kwargs)
    start = ctx.finalize(ctx.init)
    hypers = [start, grid.hyper, rand.hyper, tuned.hyper]
    evals = ctx.evaluate(ctx.stack(hypers), heldout_ids(heldout))
    names = ("theorem defaults" if isinstance(ctx.algorithm, RectifiedBCO) else "defaults",
             f"grid search ({len(grid.Z)} settings)", f"random search ({len(rand.Z)} settings)",
             f"gradient tuning ({tuned.mode}, {tuned.steps} steps)")
    runs = (0, grid.runs, rand.runs, tuned.runs)
    walls = (0.0, grid.wall_s, rand.wall_s, tuned.wall_s)
    compiles = (0.0, grid.compile_s, rand.compile_s, tuned.compile_s)
    return [Row(n, e, r, w, ctx.space.values(h), c)
            for n, e, r, w, h, c in zip(names, evals, runs, walls, hypers, compiles)]


def paired_difference(a: Evaluation, b: Evaluation) -> tuple[float, float]:
    """Mean and standard error of J_a - J_b over the held-out seeds both kept (paired: the
    same seeds, so the difference is far less noisy than either J)."""
    d = a.per_seed - b.per_seed
    d = d[np.isfinite(d)]
    if d.size < 2:
        return float("nan"), float("nan")
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size))


def format_table(rows: list[Row], heldout: int, reference: int | None = None) -> str:
    """Markdown table; ``reference``: the row index that a paired J difference is taken to."""
    names = list(rows[0].values)
    ref = f" | J - J({rows[reference].method.split(' (')[0]})" if reference is not None else ""
    head = (f"| method | J (held-out, {heldout} seeds) +- se{ref} | R_T/T | V_T | failed | full runs"
            f" | wall s (compile) | " + " | ".join(names) + " |")
    lines = [head, "|" + " --- |" * (7 + (reference is not None) + len(names))]
    for row in rows:
        e = row.heldout
        vals = " | ".join(f"{row.values[n]:.4g}" for n in names)
        diff = ""
        if reference is not None:
            m, se = paired_difference(e, rows[reference].heldout)
            diff = f" | {m:+.3g} +- {se:.2g}" if np.isfinite(m) and m != 0.0 else " | 0"
        lines.append(f"| {row.method} | {e.J:.5g} +- {e.se:.2g}{diff} | {e.regret:.5g} | "
                     f"{e.violation:.4g} | {e.failed} | {row.runs} | {row.wall_s:.1f} "
                     f"({row.compile_s:.1f}) | {vals} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# CLI (wired into ``jaxbco`` by cli.py)


def add_tune_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``jaxbco tune`` on the CLI's subparsers."""
    from jaxbco.problems import PROBLEMS

    p = subparsers.add_parser("tune", help="differentiable hyperparameter tuning through whole runs")
    p.add_argument("--problem", default="quadratic-ball", choices=sorted(PROBLEMS))
    p.add_argument("--dim", "-d", type=int, default=None)
    p.add_argument("--algorithm", default="rectified-bco",
                   help="a name of jaxbco.algorithms.ALGORITHMS")
    p.add_argument("--kappa", type=float, default=1.0, help="J = R_T/T + kappa V_T/T")
    p.add_argument("--budget", type=float, default=None, help="minimise R_T/T s.t. mean V_T <= budget")
    p.add_argument("--seeds", type=int, default=16, help="training seeds per step")
    p.add_argument("--heldout", type=int, default=64, help="held-out seeds for the final evaluation")
    p.add_argument("--horizon", "-T", type=int, default=1000)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--free", default="c,eps,alpha_scale", help="comma-separated free hyperparameters")
    p.add_argument("--mode", default=FORWARD, choices=[FORWARD, REVERSE])
    p.add_argument("--lr", type=float, default=0.3,
                   help="Adam learning rate in z (cosine-decayed to lr/10)")
    p.add_argument("--fresh-seeds", action="store_true", help="new training seeds every step")
    p.add_argument("--smoothing", type=float, default=None, help="temperature of line 9 while tuning")
    p.add_argument("--compare-search", action="store_true", help="also grid and random search")
    p.add_argument("--grid-points", type=int, default=5, help="grid values per free hyperparameter")
    p.add_argument("--random-samples", type=int, default=None, help="default: as many as the grid")
    p.add_argument("--search-seeds", type=int, default=64, help="training seeds of grid/random search")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    p.add_argument("--key", type=int, default=0, help="master PRNG seed")
    p.set_defaults(func=cmd_tune)
    return p


def _build(args):
    from jaxbco import problems
    from jaxbco.algorithms import ALGORITHMS

    if args.algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {args.algorithm!r}; choose one of: "
                         f"{', '.join(ALGORITHMS)}")
    problem, strongly = problems.make(args.problem, args.dim, args.horizon)
    cls = ALGORITHMS[args.algorithm]
    fields = {f.name for f in dataclasses.fields(cls)}
    algorithm = cls(strongly_convex=strongly) if "strongly_convex" in fields else cls()
    return problem, algorithm


def cmd_tune(args) -> int:
    try:
        if args.dtype == "float64":
            jax.config.update("jax_enable_x64", True)
        for name in ("seeds", "heldout", "horizon", "steps", "grid_points", "search_seeds"):
            _checks.check_positive_int("--" + name.replace("_", "-"), getattr(args, name))
        _checks.check_range("--lr", args.lr, low=0.0, low_open=True)
        if args.smoothing is not None:
            _checks.check_range("--smoothing", args.smoothing, low=0.0, low_open=True)
        problem, algorithm = _build(args)
        free = tuple(f.strip() for f in args.free.split(",") if f.strip())
        tune_kwargs = dict(steps=args.steps, seeds=args.seeds, mode=args.mode, budget=args.budget,
                           fresh_seeds=args.fresh_seeds, smoothing=args.smoothing,
                           optimizer=default_optimizer(args.steps, args.lr))
        common = dict(algorithm=algorithm, free=free, kappa=args.kappa, key=args.key, dtype=args.dtype)
        head = (f"jaxbco tune: {args.problem}, {args.algorithm}, d={problem.dim}, T={args.horizon}, "
                f"kappa={args.kappa:g}, free={','.join(free)}, {args.mode} mode, {args.seeds} "
                f"{'fresh' if args.fresh_seeds else 'common'} training seeds/step, {args.dtype}, "
                f"{jax.default_backend()}")
        if args.compare_search:
            rows = compare(problem, args.horizon, heldout=args.heldout, search_seeds=args.search_seeds,
                           points=args.grid_points, samples=args.random_samples, **common,
                           **tune_kwargs)
        else:
            res = tune(problem, args.horizon, heldout=args.heldout, **common, **tune_kwargs)
            space_vals = lambda h: {n: float(np.asarray(getattr(h, n))) for n in res.names}
            rows = [Row("defaults (start)", res.heldout_start, 0, 0.0, space_vals(res.hyper_start)),
                    Row(f"gradient tuning ({res.mode}, {res.steps} steps)", res.heldout_end, res.runs,
                        res.wall_s, space_vals(res.hyper), res.compile_s)]
    except (ValueError, NotImplementedError) as err:
        print(f"jaxbco: error: {err}", file=sys.stderr)
        return 2
    print(head)
    print(format_table(rows, args.heldout, reference=1 if args.compare_search else 0))
    print("full runs = seeds x settings (grid/random) or steps x seeds x (k + 1) (forward) / "
          "x 4 (reverse, checkpointed); held-out evaluation not included; wall s includes compile "
          "(random search reuses grid search's compiled call when it has as many settings)")
    if not has_comparator(problem, args.horizon):
        print("no offline comparator for this problem (time-varying ellipsoids): R_T is regret "
              "against x_1, which differs from regret against x* by a constant independent of "
              "the hyperparameters and seeds (for portfolios -R_T - sum_t f_t(x_1) = log final wealth)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB
    print(f"peak RSS of this process {peak:.0f} MB (ru_maxrss: compile, tuning, held-out evaluation)")
    return 0


def main(argv=None) -> int:
    """``python -m jaxbco.tune [options]`` = ``jaxbco tune [options]``; ``python -m jaxbco.tune
    cost [--problem P --dim d --horizon T --seeds S --free ...]`` prints ``measure_cost``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["cost"]:
        p = argparse.ArgumentParser(prog="python -m jaxbco.tune cost")
        p.add_argument("--problem", default="quadratic-ball")
        p.add_argument("--dim", type=int, default=10)
        p.add_argument("--horizon", type=int, default=2000)
        p.add_argument("--seeds", type=int, default=64)
        p.add_argument("--free", default="c,eps,alpha_scale")
        a = p.parse_args(argv[1:])
        from jaxbco import problems

        problem, strongly = problems.make(a.problem, a.dim, a.horizon)
        out = measure_cost(problem, a.horizon, algorithm=RectifiedBCO(strongly_convex=strongly),
                           free=a.free, seeds=a.seeds)
        print(json.dumps(out))
        return 0
    parser = argparse.ArgumentParser(prog="python -m jaxbco.tune")
    add_tune_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["tune"] + argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
