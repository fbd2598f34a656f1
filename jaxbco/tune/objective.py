"""The objective of tuning and its exact evaluation on seed sets.

    J(h) = mean over seeds of  R_T(h) / T + kappa V_T(h) / T,   L = R_T / T + mu V_T / T,
    R_T = sum_t f_t(x_t) - f_t(x*),   V_T = sum_t [g_t(x_t)]_+   (hard violation).

``make_objective`` is one pure function of z (``simulate.make_run``'s ``fn(key, hyper,
seed_ids)``: a ``lax.scan`` over T rounds for every seed) to differentiate.  Seeds: training
ids 0..S-1 every step (common random numbers, the default) or step * S + 0..S-1 (fresh seeds);
the held-out ids start at ``HELDOUT_OFFSET`` = 2^31, disjoint from every training id.  J on
held-out seeds is always that of the exact algorithm (``smoothing`` only changes the runs the
gradients are taken through).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco import simulate
from jaxbco._src import checks
from jaxbco.algorithms import AbstractAlgorithm, RectifiedBCO
from jaxbco.comparator import has_comparator
from jaxbco.tune.transforms import Space, make_space

HELDOUT_OFFSET = 2**31  # held-out seed ids are HELDOUT_OFFSET + 0..H-1; training ids < 2^31


class Evaluation(NamedTuple):
    """The exact algorithm's J on a set of seeds: means over the seeds that did not fail.

    Args:
        J: the mean of J = R_T/T + κ·V_T/T (∞ when every seed failed).
        regret: the mean R_T/T.
        violation: the mean V_T.
        failed: the number of failed seeds.
        se: the standard error of J's mean.
        per_seed: J of every seed (NaN for a failed seed).

    Example:
        >>> import numpy as np
        >>> from jaxbco.tune import Evaluation
        >>> ev = Evaluation(J=1.5, regret=1.0, violation=0.5, failed=0, se=0.1,
        ...                 per_seed=np.array([1.4, 1.6]))
        >>> ev.J, float(ev.per_seed.mean())
        (1.5, 1.5)
    """

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
    return Evaluation(
        float(np.mean(j[ok])),
        float(np.mean(r[ok])),
        float(np.mean(v[ok])),
        int(failed.sum()),
        se,
        j,
    )


def _per_seed(out, horizon):
    """(G, S) R_T / T, V_T and failed flags."""
    return out["regret"][..., -1] / horizon, out["hard_violation"][..., -1], out["failed"]


def _smoothed(algorithm, smoothing):
    if smoothing is None:
        return algorithm
    if not hasattr(algorithm, "smoothing"):
        raise ValueError(
            f"smoothing needs an algorithm with a smoothing field (RectifiedBCO); "
            f"{type(algorithm).__name__} has none"
        )
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


def make_objective(
    problem,
    horizon: int,
    space: Space,
    *,
    algorithm=None,
    kappa: float = 1.0,
    key=0,
    dtype="float32",
    smoothing=None,
    remat: bool = False,
    comparator: bool = True,
):
    """The tuning objective as one pure function of z, to hand to ``jax.jacfwd`` or ``jax.grad``.

    ``objective(z, mu, seed_ids) -> (L, (J, mean R_T/T, mean V_T, failed))`` with
    J = R_T/T + κ·V_T/T and L = R_T/T + μ·V_T/T (μ = κ for the penalised form), means over the
    seeds that did not fail; each call is a ``make_run`` over T rounds for every seed.  Seeds
    are not padded (S seeds cost S runs).

    Args:
        problem: the problem.
        horizon: the number of rounds T.
        space: the ``Space`` mapping z to the hyperparameters (``make_space``).
        algorithm: the algorithm (default ``RectifiedBCO()``).
        kappa: κ ≥ 0, the weight of V_T in J.
        key: the master key.
        dtype: "float32" or "float64".
        smoothing: the algorithm's smoothing (None: the exact algorithm).
        remat: recompute each round's step in reverse mode (``jax.checkpoint``).
        comparator: False measures regret against x₁ instead of x* (x* does not depend on h:
            the same gradient, less to compile).

    Returns:
        ``objective``, with ``objective.compiler_options`` for the caller's ``jax.jit`` and
        ``objective.per_seed(z, mu, seed_ids) -> (L per seed (S,), (R_T/T, V_T, failed)
        per seed)`` (0 for a failed seed), whose Jacobian gives every seed's gradient.

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxbco import algorithms, problems, tune
        >>> problem = problems.make("quadratic-ball", 3)
        >>> init = algorithms.RectifiedBCO().default_hyper(problem, 50)
        >>> space = tune.make_space(problem, init, ("c",))
        >>> objective = tune.make_objective(problem, 50, space)
        >>> L, (J, r, v, failed) = objective(jnp.zeros(1), 1.0, jnp.arange(2))
        >>> bool(jnp.isfinite(J)), int(failed)
        (True, 0)
    """
    algorithm = RectifiedBCO() if algorithm is None else algorithm
    algorithm = _smoothed(algorithm, smoothing)
    algorithm = _Remat(algorithm) if remat else algorithm
    fn = simulate.make_run(
        problem,
        horizon,
        algorithm=algorithm,
        checkpoints=np.asarray([horizon]),
        dtype=dtype,
        comparator=comparator,
        seed_pad=False,
    )
    master = checks.check_key(key) if isinstance(key, (int, np.integer)) else key
    dt = jnp.dtype(dtype)

    def per_seed(z, mu, seed_ids):
        r, v, failed = _per_seed(fn(master, space.decode(z), seed_ids), horizon)
        r, v, failed = r[0], v[0], failed[0]
        L = jnp.where(failed, 0.0, r + mu * v / horizon)  # a failed seed: no gradient
        return L, (r, v, failed)

    def objective(z, mu, seed_ids):
        _, (r, v, failed) = per_seed(z, mu, seed_ids)
        ok = ~failed
        n = jnp.maximum(jnp.sum(ok), 1)
        r = jnp.sum(jnp.where(ok, r, 0.0)) / n
        v = jnp.sum(jnp.where(ok, v, 0.0)) / n
        J = r + jnp.asarray(kappa, dt) * v / horizon
        L = r + mu * v / horizon
        return L, (J, r, v, jnp.sum(failed))

    objective.per_seed = per_seed
    objective.compiler_options = fn.compiler_options
    return objective


class _Context:
    """What tune / grid_search / random_search share: the space, the exact run function
    (jitted once per batch shape) and the seed sets."""

    def __init__(
        self,
        problem,
        horizon,
        *,
        algorithm,
        init,
        free,
        transforms,
        kappa,
        key,
        dtype,
        comparator=None,
    ):
        dtype = checks.check_dtype(dtype)
        self.horizon = checks.check_positive_int("horizon T", horizon)
        checks.check_range("kappa", kappa, low=0.0)
        self.problem, self.kappa, self.key, self.dtype = problem, float(kappa), key, dtype
        self.algorithm = RectifiedBCO() if algorithm is None else algorithm
        init = self.algorithm.default_hyper(problem, self.horizon) if init is None else init
        self.algorithm.check_hyper(init, problem)
        self.init = init
        self.space = make_space(problem, init, free, transforms)
        self.master = checks.check_key(key) if isinstance(key, (int, np.integer)) else key
        # Regret against x* where it is known (portfolios: the offline interior-point optimum,
        # comparator.CRPInteriorPoint); else against x_1, which differs from R_T(x*) by a
        # constant, the same for every h and seed.
        # comparator=False: against x_1 by choice (the same gradients and rankings: x* does not
        # depend on h; less to compile and run).
        available = has_comparator(problem, self.horizon)
        if comparator is not None:
            checks.check_bool("comparator", comparator)
        self.comparator = available if comparator is None else (comparator and available)
        fn = simulate.make_run(
            problem,
            self.horizon,
            algorithm=self.algorithm,
            checkpoints=np.asarray([self.horizon]),
            dtype=dtype,
            comparator=self.comparator,
        )
        self._run = jax.jit(
            lambda hyper, ids: _per_seed(fn(self.master, hyper, ids), self.horizon),
            compiler_options=fn.compiler_options,
        )

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
    n = checks.check_positive_int("heldout seeds", n)
    return HELDOUT_OFFSET + np.arange(n, dtype=np.int64)


def training_ids(step: int, seeds: int, fresh: bool) -> np.ndarray:
    """Step ``step``'s training ids: 0..S-1 (common random numbers) or step S + 0..S-1."""
    base = step * seeds if fresh else 0
    return base + np.arange(seeds, dtype=np.int64)
