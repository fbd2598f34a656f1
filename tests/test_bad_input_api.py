"""The Python API's bad-input catalogue (issue 15): each hostile input raises ValueError or
TypeError (``checks.KindError`` is both) with a message naming the parameter, the allowed
range and the value, before anything is compiled.  The CLI's catalogue is its own file."""

from __future__ import annotations

import math
import re
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _traces import traces  # tests/_traces.py

import jaxbco
from jaxbco import constraints as C
from jaxbco import losses as L
from jaxbco import problems, published, sequences, sets, simulate
from jaxbco._src import shaping
from jaxbco.algorithms import MahdaviPrimalDual, RectifiedBCO, registry
from jaxbco.hyper import Hyper, grid, theorem_defaults
from jaxbco.problem import FeasibilityWarning, Problem, check_feasible, validate
from jaxbco.runner import memory
from jaxbco.solvers.gap import ProxWarning

D = 3
A = jnp.ones(D) / np.sqrt(D)
GOOD = dict(c=0.5, eps=0.1, xi=0.1, delta=0.05)
T = 10


def ball(d=D):
    return sets.L2Ball(jnp.zeros(d), 1.0)


def _problem(d=D, **kw):
    a = jnp.ones(d) / np.sqrt(d)
    base = dict(
        domain=ball(d),
        loss=L.Quadratic(),
        loss_data=sequences.IIDUniform(jnp.zeros(d), jnp.ones(d)),
        constraint=C.Linear(),
        constraint_data=sequences.Alternating((a[None], jnp.asarray([0.3]))),
    )
    base.update(kw)
    return Problem(**base)


P = _problem()
H = Hyper(**GOOD)
P10 = problems.make("quadratic-ball", 10)
RNG = np.random.default_rng(0)


def sweep(**kw):
    args = dict(problem=P, horizon=T, hyper=H)
    args.update(kw)
    return lambda: simulate.sweep(
        args.pop("problem"), args.pop("horizon"), args.pop("hyper"), **args
    )


def run(**kw):
    args = dict(problem=P, horizon=T, hyper=H)
    args.update(kw)
    return lambda: simulate.run(args.pop("problem"), args.pop("horizon"), args.pop("hyper"), **args)


def with_data(**kw):
    """A run of ``_problem(**kw)`` (the problem is built inside, so construction errors count)."""
    return lambda: simulate.run(_problem(**kw), T, H)


def replay(shape, value=0.1):
    return sequences.Replay(np.full(shape, value))


def lin(a, b):
    return sequences.Fixed((jnp.asarray(a, float), jnp.asarray(b, float)))


def mismatched_grid():
    h = grid(c=[0.5, 0.75], eps=0.1, xi=0.1, delta=0.05)
    return eqx.tree_at(lambda h: h.eps, h, jnp.asarray([0.1, 0.2, 0.3]))  # no __check_init__


E1 = np.eye(D)[0]
BIG_GRID = grid(c=np.linspace(0.5, 0.9, 100), eps=np.linspace(0.1, 1, 100), xi=0.1, delta=0.05)


class GrowingState(RectifiedBCO):
    """An own algorithm whose step doubles x: the state changes shape between rounds."""

    def step(self, state, problem, hyper, inp):
        new = super().step(state, problem, hyper, inp)
        return new._replace(x=jnp.concatenate([new.x, new.x]))


class ShortDecision(RectifiedBCO):
    def decision(self, state):
        return state.x[:2]


class VectorMultiplier(RectifiedBCO):
    def multiplier(self, state):
        return state.x


class Drawn(sequences.AbstractSequence):
    """Constraint data drawn each round (a random halfspace): feasibility is not decidable."""

    def sample(self, key, t):
        return A + 0.1 * jax.random.normal(key, (D,)), jnp.asarray(0.3)


class NanLossData(sequences.AbstractSequence):
    """A user's sequence whose draws are not finite (no check of its own before the run's)."""

    def sample(self, key, t):
        return jnp.full(D, jnp.nan)


class NanConstraintData(sequences.AbstractSequence):
    def sample(self, key, t):
        return A, jnp.asarray(jnp.nan)


SYM = np.eye(D)

CASES = [
    # --- Problem pieces of the wrong kind (TypeError) ---
    (
        "problem-domain-str",
        lambda: _problem(domain="ball"),
        TypeError,
        r"domain must be a jaxbco.sets set .*; got str 'ball'",
    ),
    (
        "problem-loss-function",
        lambda: _problem(loss=lambda x, t: x),
        TypeError,
        r"loss must be a jaxbco.losses loss",
    ),
    (
        "problem-loss-data-array",
        lambda: _problem(loss_data=np.ones(D)),
        TypeError,
        r"loss_data must be a jaxbco.sequences sequence .*; got ndarray",
    ),
    (
        "problem-constraint-str",
        lambda: _problem(constraint="linear"),
        TypeError,
        r"constraint must be a jaxbco.constraints family",
    ),
    (
        "problem-constraint-data-tuple",
        lambda: _problem(constraint_data=(A, 0.3)),
        TypeError,
        r"constraint_data must be a jaxbco.sequences sequence .*; got tuple",
    ),
    (
        "problem-strongly-convex-str",
        lambda: _problem(strongly_convex="yes"),
        TypeError,
        r"strongly_convex must be True or False; got str 'yes'",
    ),
    # --- feasible sets: d >= 1, scalars stay scalars ---
    (
        "l2ball-dim-0",
        lambda: sets.L2Ball(jnp.zeros(0), 1.0),
        ValueError,
        r"center must be a vector of length d >= 1; got shape \(0,\)",
    ),
    (
        "l2ball-center-matrix",
        lambda: sets.L2Ball(jnp.zeros((2, 2)), 1.0),
        ValueError,
        r"center must be a vector of length d >= 1; got shape \(2, 2\)",
    ),
    (
        "l2ball-radius-vector",
        lambda: sets.L2Ball(jnp.zeros(D), jnp.ones(2)),
        ValueError,
        r"radius must be a scalar; got shape \(2,\)",
    ),
    (
        "l2ball-radius-nan",
        lambda: sets.L2Ball(jnp.zeros(D), np.nan),
        ValueError,
        r"radius must be finite",
    ),
    (
        "l1ball-dim-0",
        lambda: sets.L1Ball(jnp.zeros(0), 1.0),
        ValueError,
        r"center must be a vector of length d >= 1; got shape \(0,\)",
    ),
    (
        "box-dim-0",
        lambda: sets.Box(jnp.zeros(0), jnp.ones(0)),
        ValueError,
        r"lower must be a vector of length d >= 1; got shape \(0,\)",
    ),
    (
        "box-shapes-differ",
        lambda: sets.Box(jnp.zeros(3), jnp.ones(2)),
        ValueError,
        r"lower and upper must be vectors of one shape; got \(3,\) and \(2,\)",
    ),
    (
        "simplex-size-0",
        lambda: sets.Simplex(0),
        ValueError,
        r"size \(the simplex dimension d\) must be an integer >= 2; got 0",
    ),
    (
        "simplex-total-negative",
        lambda: sets.Simplex(3, total=-1.0),
        ValueError,
        r"total must lie in \(0, inf\); got -1.0",
    ),
    # --- sequences: shapes never broadcast ---
    (
        "iidnormal-std-shape",
        lambda: sequences.IIDNormal(jnp.zeros(3), jnp.ones(2)),
        ValueError,
        r"std must be a scalar or have the shape of mean \(3,\) .*; got shape \(2,\)",
    ),
    (
        "iidnormal-std-negative",
        lambda: sequences.IIDNormal(jnp.zeros(3), -1.0),
        ValueError,
        r"std must lie in \[0, inf\); got -1.0",
    ),
    (
        "iiduniform-high-shape",
        lambda: sequences.IIDUniform(jnp.zeros(3), jnp.ones(2)),
        ValueError,
        r"high must be a scalar or have the shape of low \(3,\) .*; got shape \(2,\)",
    ),
    (
        "iiduniform-high-below-low",
        lambda: sequences.IIDUniform(jnp.ones(3), jnp.zeros(3)),
        ValueError,
        r"high - low must lie in \[0, inf\)",
    ),
    (
        "replay-ragged-rounds",
        lambda: sequences.Replay((np.ones((5, 3)), np.ones(4))),
        ValueError,
        r"Replay values must record one number of rounds .*; got leading lengths \[4, 5\]",
    ),
    (
        "replay-scalar",
        lambda: sequences.Replay(np.float64(1.0)),
        ValueError,
        r"Replay values must have a leading round axis",
    ),
    (
        "replay-zero-rounds",
        lambda: sequences.Replay(np.ones((0, 3))),
        ValueError,
        r"Replay values must record at least 1 round; got shapes \[\(0, 3\)\]",
    ),
    (
        "replay-nan",
        lambda: sequences.Replay(np.full((4, 3), np.nan)),
        ValueError,
        r"replayed data must be finite .*first at index \[0, 0\]",
    ),
    (
        "alternating-zero-values",
        lambda: sequences.Alternating(np.ones((0, 3))),
        ValueError,
        r"Alternating values must record at least 1 round",
    ),
    (
        "switching-means-vector",
        lambda: sequences.Switching(jnp.ones(3), jnp.asarray([])),
        ValueError,
        r"means must have shape \(regimes, d\); got \(3,\)",
    ),
    (
        "switching-boundaries-decreasing",
        lambda: sequences.Switching(jnp.ones((3, 2)), jnp.asarray([5, 2])),
        ValueError,
        r"boundaries must be strictly increasing rounds >= 1; got \[5, 2\]",
    ),
    (
        "slackened-low-negative",
        lambda: sequences.Slackened((A, 0.3), -0.1, 0.2),
        ValueError,
        r"low must lie in \[0, inf\); got -0.1",
    ),
    (
        "slackened-high-below-low",
        lambda: sequences.Slackened((A, 0.3), 0.3, 0.2),
        ValueError,
        r"high must lie in \[low, inf\) = \[0.3, inf\); got 0.2",
    ),
    (
        "slackened-low-vector",
        lambda: sequences.Slackened((A, 0.3), jnp.zeros(2), 0.2),
        ValueError,
        r"low must be a scalar; got shape \(2,\)",
    ),
    (
        "classification-w-matrix",
        lambda: sequences.Classification(jnp.ones((2, 2))),
        ValueError,
        r"w_true must be a vector of length d >= 1; got shape \(2, 2\)",
    ),
    (
        "yuneely-dim-0",
        lambda: published.YuNeelyCost(jnp.ones(4), dim=0),
        ValueError,
        r"dim must be an integer >= 1; got 0",
    ),
    # --- losses ---
    (
        "quadratic-scale-0",
        lambda: L.Quadratic(scale=0.0),
        ValueError,
        r"scale must lie in \(0, inf\); got 0.0",
    ),
    (
        "quadratic-scale-vector",
        lambda: L.Quadratic(scale=jnp.ones(3)),
        ValueError,
        r"scale must be a scalar; got shape \(3,\)",
    ),
    (
        "huber-kappa-negative",
        lambda: L.Huber(-1.0),
        ValueError,
        r"kappa must lie in \(0, inf\); got -1.0",
    ),
    # --- hyperparameters and grids ---
    (
        "hyper-grid-lengths",
        lambda: Hyper(c=[0.5, 0.6], eps=[0.1, 0.2, 0.3], xi=0.1, delta=0.05),
        ValueError,
        r"Hyper grid axes must have one common length G \(or length 1\); got c: 2, eps: 3",
    ),
    (
        "hyper-grid-2d",
        lambda: Hyper(c=[[0.5]], eps=0.1, xi=0.1, delta=0.05),
        ValueError,
        r"Hyper.c must be a scalar or a vector \(one grid axis\); got shape \(1, 1\)",
    ),
    (
        "hyper-grid-empty",
        lambda: Hyper(c=[], eps=0.1, xi=0.1, delta=0.05),
        ValueError,
        r"Hyper.c must be a scalar or a non-empty vector; got an empty grid",
    ),
    (
        "hyper-sigma-0",
        lambda: Hyper(**GOOD, sigma=0.0),
        ValueError,
        r"sigma must lie in \(0, inf\); got 0.0",
    ),
    (
        "grid-empty-list",
        lambda: grid(c=[], eps=0.1, xi=0.1, delta=0.05),
        ValueError,
        r"grid values of c must be a number or a non-empty 1-D list; got \[\]",
    ),
    (
        "grid-strings",
        lambda: grid(c=["a"], eps=0.1, xi=0.1, delta=0.05),
        TypeError,
        r"grid values of c must be numbers; got list \['a'\]",
    ),
    (
        "grid-unknown-name",
        lambda: grid(foo=[1.0], c=0.5, eps=0.1, xi=0.1, delta=0.05),
        ValueError,
        r"Hyper has no hyperparameter 'foo'; its fields are \['c', 'eps'",
    ),
    (
        "grid-nested-list",
        lambda: grid(c=[[0.5, 0.6]], eps=0.1, xi=0.1, delta=0.05),
        ValueError,
        r"grid values of c must be a number or a non-empty 1-D list; got \[\[0.5, 0.6\]\]",
    ),
    (
        "theorem-defaults-horizon-1",
        lambda: theorem_defaults(ball(), 1),
        ValueError,
        r"xi = delta / r = 1.0 must lie in \(0, 1\), so delta must lie in \(0, r\) = \(0, 1\) .*"
        r"default delta = 1/T = 1 \(horizon T = 1\)",
    ),
    (
        "theorem-defaults-delta-0",
        lambda: theorem_defaults(ball(), 100, delta=0.0),
        ValueError,
        r"^delta must lie in \(0, inf\); got 0.0",
    ),
    (
        "theorem-defaults-horizon-huge",
        lambda: theorem_defaults(ball(), 3_000_000_000),
        ValueError,
        r"horizon T must be an integer >= 1 and <= 2000000000 \(int32 round counters\); got 3000000000",
    ),
    # --- the problem registry ---
    (
        "make-dim-0",
        lambda: problems.make("quadratic-ball", 0),
        ValueError,
        r"dim \(--dim\) of quadratic-ball must be an integer in \[1, 1048576\]; got 0",
    ),
    (
        "make-dim-negative",
        lambda: problems.make("quadratic-ball", -3),
        ValueError,
        r"dim \(--dim\) of quadratic-ball must be an integer in \[1, 1048576\]; got -3",
    ),
    (
        "make-dim-float",
        lambda: problems.make("quadratic-ball", 2.5),
        ValueError,
        r"must be an integer in \[1, 1048576\]; got 2.5",
    ),
    (
        "make-dim-bool",
        lambda: problems.make("quadratic-ball", True),
        ValueError,
        r"must be an integer in \[1, 1048576\]; got True",
    ),
    (
        "make-dim-huge",
        lambda: problems.make("time-varying-ball", 10**9),
        ValueError,
        r"dim \(--dim\) of time-varying-ball must be an integer in \[1, 1048576\]; got 1000000000",
    ),
    (
        "make-switching-box-dim-1",
        lambda: problems.make("switching-box", 1),
        ValueError,
        r"dim \(--dim\) of switching-box must be an integer in \[2, 1048576\]; got 1",
    ),
    (
        "make-simplex-dim-1",
        lambda: problems.make("simplex-quadratic", 1),
        ValueError,
        r"dim \(--dim\) of simplex-quadratic must be an integer in \[2, 1048576\]; got 1",
    ),
    (
        "make-unknown",
        lambda: problems.make("nope"),
        ValueError,
        r"unknown problem 'nope'; choose one of: quadratic-ball",
    ),
    (
        "make-name-int",
        lambda: problems.make(3),
        TypeError,
        r"problem must be a name \(one of: .*\), a module:Name spec or a Problem; got int 3",
    ),
    (
        "make-yu-neely-dim-3",
        lambda: problems.make("yu-neely", 3),
        ValueError,
        r"yu-neely is 2-dimensional: dim \(--dim\) must be 2 or left out; got 3",
    ),
    (
        "make-horizon-0",
        lambda: problems.make("yu-neely", horizon=0),
        ValueError,
        r"horizon T must be an integer >= 1 and <= 2000000000 .*; got 0",
    ),
    # --- sweep / run arguments of the wrong kind ---
    (
        "sweep-problem-name",
        sweep(problem="quadratic-ball"),
        TypeError,
        r"problem must be a jaxbco.Problem; got str 'quadratic-ball' \(use "
        r"jaxbco.problems.make\(name\)",
    ),
    (
        "run-problem-none",
        run(problem=None),
        TypeError,
        r"problem must be a jaxbco.Problem; got NoneType None",
    ),
    (
        "validate-problem-dict",
        lambda: validate({"domain": 1}, T),
        TypeError,
        r"problem must be a jaxbco.Problem; got dict",
    ),
    (
        "sweep-algorithm-str",
        sweep(algorithm="rectified-bco"),
        TypeError,
        r"algorithm must be a jaxbco.algorithms algorithm .*; got str 'rectified-bco'",
    ),
    (
        "sweep-hyper-dict",
        sweep(hyper={"c": 0.5}),
        TypeError,
        r"hyper must be a Hyper for RectifiedBCO .*; got dict",
    ),
    (
        "sweep-comparator-str",
        sweep(comparator="no"),
        TypeError,
        r"comparator must be True or False; got str 'no'",
    ),
    (
        "sweep-record-decisions-int",
        sweep(record_decisions=1),
        TypeError,
        r"record_decisions must be True or False; got int 1",
    ),
    (
        "sweep-progress-str",
        sweep(progress="yes"),
        TypeError,
        r"progress must be True or False; got str 'yes'",
    ),
    (
        "sweep-resume-int",
        sweep(resume=5),
        TypeError,
        r"resume must be a file path \(str\) or None; got int 5",
    ),
    (
        "sweep-dtype-float16",
        sweep(dtype="float16"),
        ValueError,
        r"dtype must be float32 or float64; got float16",
    ),
    (
        "sweep-dtype-nonsense",
        sweep(dtype="banana"),
        ValueError,
        r"dtype must be float32 or float64; got str 'banana'",
    ),
    (
        "sweep-devices-str",
        sweep(devices="gpu"),
        TypeError,
        r"devices must be a list of jax devices \(e.g. jax.local_devices\(\)\) or None; got str 'gpu'",
    ),
    (
        "sweep-devices-empty",
        sweep(devices=[]),
        ValueError,
        r"devices must be a non-empty list of jax devices .*; got \[\]",
    ),
    (
        "sweep-devices-ints",
        sweep(devices=[0, 1]),
        TypeError,
        r"devices must be a list of jax devices .*; got an item int 0",
    ),
    (
        "sweep-scan-unroll-bool",
        sweep(scan_unroll=True),
        TypeError,
        r"scan_unroll must be an integer >= 1; got bool True",
    ),
    (
        "make-run-seed-pad-str",
        lambda: simulate.make_run(P, T, seed_pad="no"),
        TypeError,
        r"seed_pad must be True or False; got str 'no'",
    ),
    (
        "make-run-mismatched-grid",
        lambda: simulate.make_run(P, T)(0, mismatched_grid(), jnp.arange(4)),
        ValueError,
        r"hyper grid axes must have one common length G",
    ),
    # --- the horizon: an int32 round counter ---
    (
        "sweep-horizon-1e12",
        sweep(horizon=10**12),
        ValueError,
        r"horizon T must be an integer >= 1 and <= 2000000000 \(int32 round counters\); got "
        r"1000000000000",
    ),
    (
        "sweep-horizon-3e9-float",
        sweep(horizon=3e9),
        ValueError,
        r"horizon T must be an integer >= 1 and <= 2000000000 .*; got 3000000000.0",
    ),
    (
        "sweep-horizon-str",
        sweep(horizon="100"),
        TypeError,
        r"horizon T must be an integer >= 1 .*; got str '100'",
    ),
    (
        "sweep-horizon-none",
        sweep(horizon=None),
        TypeError,
        r"horizon T must be an integer >= 1 .*; got NoneType None",
    ),
    (
        "sweep-horizon-bool",
        sweep(horizon=True),
        TypeError,
        r"horizon T must be an integer >= 1 .*; got bool True",
    ),
    (
        "make-run-horizon-0",
        lambda: simulate.make_run(P, 0),
        ValueError,
        r"horizon T must be an integer >= 1 .*; got 0",
    ),
    # --- seeds: a count or distinct ids in [0, 2^32) ---
    (
        "sweep-seeds-1e9-float",
        sweep(seeds=1e9),
        TypeError,
        r"seeds must be an integer >= 1 and <= 2\^32 \(a count\) or .*; got float 1000000000.0",
    ),
    (
        "sweep-seeds-over-2^32",
        sweep(seeds=2**32 + 1),
        ValueError,
        r"seeds must be an integer >= 1 and <= 2\^32 .*; got 4294967297",
    ),
    (
        "sweep-seeds-duplicate",
        sweep(seeds=[0, 1, 1, 5, 5]),
        ValueError,
        r"seed ids \(seeds\) must be distinct .*; got \[1, 5\] more than once",
    ),
    (
        "sweep-seeds-negative-id",
        sweep(seeds=[-1, 2]),
        ValueError,
        r"seed ids \(seeds\) must lie in \[0, 2\^32\); got \[-1\]",
    ),
    (
        "sweep-seeds-id-2^32",
        sweep(seeds=[2**32]),
        ValueError,
        r"seed ids \(seeds\) must lie in \[0, 2\^32\); got \[4294967296\]",
    ),
    (
        "sweep-seeds-empty",
        sweep(seeds=[]),
        ValueError,
        r"seeds must be .* distinct integer ids in \[0, 2\^32\); got an array of shape \(0,\)",
    ),
    (
        "sweep-seeds-2d",
        sweep(seeds=[[0, 1]]),
        ValueError,
        r"seeds must be .*; got an array of shape \(1, 2\), dtype int64",
    ),
    (
        "sweep-seeds-float-ids",
        sweep(seeds=[0.0, 1.0]),
        ValueError,
        r"seeds must be .*; got an array of shape \(2,\), dtype float64",
    ),
    ("sweep-seeds-bool", sweep(seeds=True), TypeError, r"seeds must be .*; got bool True"),
    ("sweep-seeds-str", sweep(seeds="10"), TypeError, r"seeds must be .*; got str '10'"),
    (
        "run-seed-negative",
        run(seed=-1),
        ValueError,
        r"seed must be an integer id in \[0, 2\^32\); got int -1",
    ),
    (
        "run-seed-float",
        run(seed=1.5),
        ValueError,
        r"seed must be an integer id in \[0, 2\^32\); got float 1.5",
    ),
    (
        "run-seeds-keyword",
        run(seeds=3),
        TypeError,
        r"run takes one seed \(seed=...\); use jaxbco.sweep for seeds=",
    ),
    # --- the master key ---
    (
        "sweep-key-10^23",
        sweep(key=10**23),
        ValueError,
        r"key must be an integer in \[0, 2\^63 - 1\] = \[0, 9223372036854775807\] or a "
        r"jax.random.key; got 100000000000000000000000",
    ),
    (
        "sweep-key-negative",
        sweep(key=-1),
        ValueError,
        r"key must be an integer in \[0, 2\^63 - 1\] .*; got -1",
    ),
    (
        "sweep-key-2^63",
        sweep(key=2**63),
        ValueError,
        r"key must be an integer in \[0, 2\^63 - 1\] .*; got 9223372036854775808",
    ),
    (
        "sweep-key-str",
        sweep(key="abc"),
        TypeError,
        r"key must be an integer in \[0, 2\^63 - 1\] or a jax.random.key; got str 'abc'",
    ),
    ("sweep-key-float", sweep(key=1.5), TypeError, r"key must be an integer .*; got float 1.5"),
    ("sweep-key-bool", sweep(key=True), TypeError, r"key must be an integer .*; got bool True"),
    (
        "sweep-key-array-of-keys",
        lambda: simulate.sweep(P, T, H, key=jax.random.split(jax.random.key(0), 3)),
        ValueError,
        r"key must be a single key \(shape \(\)\); got a key array of shape \(3,\)",
    ),
    (
        "make-run-key-negative",
        lambda: simulate.make_run(P, T)(-5, H, jnp.arange(4)),
        ValueError,
        r"key must be an integer in \[0, 2\^63 - 1\] .*; got -5",
    ),
    (
        "make-run-duplicate-ids",
        lambda: simulate.make_run(P, T)(0, H, jnp.asarray([3, 3])),
        ValueError,
        r"seed ids \(seeds\) must be distinct .*; got \[3\] more than once",
    ),
    # --- memory, refused up front with the estimate ---
    (
        "sweep-seeds-2^32-memory",
        sweep(seeds=2**32),
        ValueError,
        r"the run needs about [0-9.e+]+ GB \([0-9]+ bytes\) of memory \(G = 1 settings x "
        r"S = 4294967296 seeds x K = 10 checkpoints, d = 3\), more than the .* of host RAM",
    ),
    (
        "sweep-grid-x-seeds-memory",
        sweep(hyper=BIG_GRID, seeds=10**6),
        ValueError,
        r"the run needs about .* \(G = 10000 settings x S = 1000000 seeds .*\), more than",
    ),
    (
        "sweep-decisions-memory",
        sweep(
            horizon=10**6, seeds=10**6, checkpoints=np.arange(1, 10**6 + 1), record_decisions=True
        ),
        ValueError,
        r"the run needs about .* K = 1000000 checkpoints, d = 3, decisions recorded\), more than",
    ),
    (
        "make-run-memory",
        lambda: simulate.make_run(P, T)(0, BIG_GRID, np.arange(10**5)),
        ValueError,
        r"the run needs about .* \(G = 10000 settings x S = 100000 seeds .*\), more than",
    ),
    # --- grids in run / sweep ---
    (
        "run-grid",
        run(hyper=grid(c=[0.5, 0.75], eps=0.1, xi=0.1, delta=0.05)),
        ValueError,
        r"hyper must be one setting for run .*; got a grid of 2 settings: use jaxbco.sweep",
    ),
    (
        "sweep-mismatched-grid",
        sweep(hyper=mismatched_grid()),
        ValueError,
        r"hyper grid axes must have one common length G \(or length 1\); got c: 2, eps: 3",
    ),
    (
        "sweep-delta-over-xi-r",
        sweep(hyper=Hyper(c=0.5, eps=0.1, xi=0.01, delta=0.5)),
        ValueError,
        r"delta must lie in \(0, xi \* r\] = \(0, 0.01\] .*; got delta = \[0.5\]",
    ),
    # --- chunks, unrolling, checkpoints, directions ---
    ("sweep-chunk-0", sweep(chunk=0), ValueError, r"chunk must be an integer >= 1; got 0"),
    ("sweep-chunk-float", sweep(chunk=2.5), ValueError, r"chunk must be an integer >= 1; got 2.5"),
    (
        "sweep-scan-unroll-0",
        sweep(scan_unroll=0),
        ValueError,
        r"scan_unroll must be an integer >= 1; got 0",
    ),
    (
        "sweep-checkpoint-0",
        sweep(checkpoints=[0, 5]),
        ValueError,
        r"checkpoints must be strictly increasing rounds in \[1, 10\] \(the horizon T\); got first 0",
    ),
    (
        "sweep-checkpoint-past-T",
        sweep(checkpoints=[1, 11]),
        ValueError,
        r"checkpoints must be strictly increasing rounds in \[1, 10\] .*; got first 1, last 11",
    ),
    (
        "sweep-checkpoints-decreasing",
        sweep(checkpoints=[5, 3]),
        ValueError,
        r"checkpoints must be strictly increasing .*; got not strictly increasing",
    ),
    (
        "sweep-checkpoints-float",
        sweep(checkpoints=[1.0, 2.0]),
        ValueError,
        r"checkpoints must be a non-empty 1-D array of integer rounds; got shape \(2,\), dtype float64",
    ),
    (
        "sweep-checkpoints-empty",
        sweep(checkpoints=[]),
        ValueError,
        r"checkpoints must be a non-empty 1-D array of integer rounds; got shape \(0,\)",
    ),
    (
        "sweep-directions-nan",
        sweep(directions=np.full((T, D), np.nan)),
        ValueError,
        r"directions must be finite",
    ),
    (
        "sweep-directions-str",
        sweep(directions="up"),
        TypeError,
        r"directions must be an array of unit vectors; got str 'up'",
    ),
    (
        "sweep-directions-shape",
        sweep(directions=np.ones((T, D + 1)) / 2),
        ValueError,
        r"directions must have shape \(T, d\) = \(10, 3\) or \(seeds, T, d\) = \(1, 10, 3\); "
        r"got \(10, 4\)",
    ),
    # --- data shapes against the domain: nothing broadcasts ---
    (
        "replay-trailing-1-for-d-10",
        lambda: simulate.run(_problem(10, loss_data=replay((T, 1))), T, H),
        ValueError,
        r"dimension mismatch: loss_data \(one round's values\[t - 1\]\) must have shape \(10,\) "
        r"\(Quadratic on a feasible set in R\^10 takes an array \(10,\) per round\); got shape \(1,\)",
    ),
    (
        "replay-no-trailing-for-d-10",
        lambda: simulate.run(_problem(10, loss_data=replay((T,))), T, H),
        ValueError,
        r"loss_data \(one round's values\[t - 1\]\) must have shape \(10,\) .*; got shape \(\)",
    ),
    (
        "linear-constraint-length-1-for-d-10",
        lambda: simulate.run(_problem(10, constraint_data=lin([1.0], 0.3)), T, H),
        ValueError,
        r"dimension mismatch: constraint_data\[0\] must have shape \(10,\) \(Linear on a feasible set "
        r"in R\^10 takes \(an array \(10,\), a scalar\) per round\); got shape \(1,\)",
    ),
    (
        "linear-constraint-b-vector",
        with_data(constraint_data=lin(A, np.ones(D))),
        ValueError,
        r"constraint_data\[1\] must have shape \(\) .*; got shape \(3,\)",
    ),
    (
        "linear-constraint-not-a-tuple",
        with_data(constraint_data=sequences.Fixed(jnp.asarray([0.5, 0.5, 0.3]))),
        ValueError,
        r"constraint_data must be a tuple of 2 items .*; got an array of shape \(3,\)",
    ),
    (
        "multilinear-rows-disagree",
        with_data(constraint=C.MultiLinear(), constraint_data=lin(np.ones((2, D)), np.ones(3))),
        ValueError,
        r"constraint_data\[1\] must have shape \(m,\) .*; got shape \(3,\)",
    ),
    (
        "ellipsoid-P-not-square",
        with_data(
            constraint=C.Ellipsoid(),
            constraint_data=sequences.Fixed((np.ones((D, D + 1)), np.zeros(D), 1.0)),
        ),
        ValueError,
        r"constraint_data\[0\] must have shape \(3, 3\) .*; got shape \(3, 4\)",
    ),
    (
        "ellipsoid-P-not-symmetric",
        with_data(
            constraint=C.Ellipsoid(),
            constraint_data=sequences.Fixed((SYM + np.triu(np.ones((D, D)), 1), np.zeros(D), 1.0)),
        ),
        ValueError,
        r"constraint_data\[0\] \(P of the Ellipsoid .*\) must be symmetric; got max "
        r"\|P - P\^T\| = 1",
    ),
    (
        "ellipsoid-P-indefinite",
        with_data(
            constraint=C.Ellipsoid(),
            constraint_data=sequences.Fixed((np.diag([1.0, -1.0, 1.0]), np.zeros(D), 1.0)),
        ),
        ValueError,
        r"must be positive semidefinite \(a convex g\); got smallest eigenvalue -1",
    ),
    (
        "logistic-labels-0-1",
        with_data(
            loss=L.Logistic(),
            loss_data=sequences.Replay((RNG.normal(size=(T, D)), np.tile([0.0, 1.0], T // 2))),
        ),
        ValueError,
        r"loss_data labels y must lie in \{-1, \+1\} .*; got \[0.0\]",
    ),
    (
        "logwealth-negative-relatives",
        with_data(domain=sets.Simplex(D), loss=L.LogWealth(), loss_data=replay((T, D), -0.5)),
        ValueError,
        r"loss_data \(price relatives .*\) must lie in \(0, inf\); got min -0.5",
    ),
    (
        "replay-loss-shorter-than-T",
        with_data(loss_data=replay((T - 1, D))),
        ValueError,
        r"loss_data replays 9 rounds but the horizon T is 10; T must lie in \[1, 9\]",
    ),
    (
        "replay-constraint-shorter-than-T",
        with_data(constraint_data=sequences.Replay((np.tile(A, (4, 1)), np.full(4, 0.3)))),
        ValueError,
        r"constraint_data replays 4 rounds but the horizon T is 10; T must lie in \[1, 4\]",
    ),
    (
        "iid-mean-wrong-dim",
        with_data(loss_data=sequences.IIDNormal(jnp.zeros(D + 1), 0.1)),
        ValueError,
        r"dimension mismatch: loss_data must have shape \(3,\) .*; got shape \(4,\)",
    ),
    (
        "classification-wrong-dim",
        with_data(loss=L.Logistic(), loss_data=sequences.Classification(jnp.ones(D + 2))),
        ValueError,
        r"loss_data\[0\] must have shape \(3,\) \(Logistic .*\); got shape \(5,\)",
    ),
    (
        "shifted-base-wrong-dim",
        with_data(
            constraint=C.Shifted(C.Linear()),
            constraint_data=sequences.Slackened((jnp.ones(D + 1), 0.3), 0.0, 0.1),
        ),
        ValueError,
        r"constraint_data\[0\]\[0\] must have shape \(3,\) .*; got shape \(4,\)",
    ),
    (
        "yuneely-cost-dim-3-on-2d",
        lambda: simulate.run(
            Problem(
                sets.Box(-jnp.ones(2), jnp.ones(2)),
                L.Linear(),
                published.YuNeelyCost(jnp.ones(T), dim=3),
                C.Linear(),
                lin([1.0, 0.0], 0.5),
            ),
            T,
            H,
        ),
        ValueError,
        r"loss_data must have shape \(2,\) .*; got shape \(3,\)",
    ),
    ("x1-nan", with_data(x1=jnp.asarray([np.nan, 0.0, 0.0])), ValueError, r"x1 must be finite"),
    # --- feasibility of replayed, alternating and time-varying constraints ---
    (
        "replay-round-3-empty",
        with_data(
            constraint_data=sequences.Replay(
                (np.tile(E1, (T, 1)), np.r_[0.5, 0.5, -2.0, np.full(T - 3, 0.5)])
            )
        ),
        ValueError,
        r"constraint_data \(round t = 3; row 0\) has an empty feasible set: the halfspace "
        r"a.x <= b misses \(1 - xi\) X \(xi = 0.1; .* = 1.1 > 0\); 1 of 10 recorded "
        r"rounds are empty: the offline problem \(Eq. 1\) is infeasible",
    ),
    (
        "alternating-empty-value",
        with_data(
            constraint_data=sequences.Alternating((np.stack([E1, E1]), np.asarray([0.5, -1.5])))
        ),
        ValueError,
        r"constraint_data \(values\[1\]: rounds t = 2, 4, ...; row 0\) has an empty "
        r"feasible set",
    ),
    (
        "replay-multilinear-row-empty",
        with_data(
            constraint=C.MultiLinear(),
            constraint_data=sequences.Replay(
                (np.tile(np.stack([E1, -E1]), (T, 1, 1)), np.tile([0.5, -3.0], (T, 1)))
            ),
        ),
        ValueError,
        r"constraint_data \(round t = 1; row 1\) has an empty feasible set",
    ),
    (
        "fixed-halfspace-misses-shrunk-X",
        lambda: simulate.run(
            _problem(constraint_data=lin(E1, -0.95)), T, Hyper(c=0.5, eps=0.1, xi=0.2, delta=0.05)
        ),
        ValueError,
        r"constraint_data \(fixed; row 0\) has an empty feasible set: .*xi = 0.2",
    ),
    (
        "alternating-rounds-disjoint",
        with_data(
            constraint_data=sequences.Alternating((np.stack([E1, -E1]), np.asarray([-0.5, -0.5])))
        ),
        ValueError,
        r"the offline problem is infeasible: the 2 recorded rounds of constraint_data have "
        r"no common point in X",
    ),
    # --- one validation for every entry point (issue 27) ---
    (
        "make-run-concrete-delta-over-xi-r",
        lambda: simulate.make_run(P10, T)(
            0, Hyper(c=0.5, eps=0.1, xi=0.01, delta=0.05), jnp.arange(2)
        ),
        ValueError,
        r"delta must lie in \(0, xi \* r\] = \(0, 0.01\]",
    ),
    (
        "make-run-c-below-half-through-tree-map",
        lambda: simulate.make_run(P10, T)(
            0, jax.tree_util.tree_map(lambda v: v * 0.6, Hyper(**GOOD)), jnp.arange(2)
        ),
        ValueError,
        r"c must lie in \[0.5, 1\); got 0.3",
    ),
    (
        "sweep-c-below-half-through-tree-map",
        sweep(hyper=jax.tree_util.tree_map(lambda v: v * 0.6, Hyper(**GOOD))),
        ValueError,
        r"c must lie in \[0.5, 1\); got 0.3",
    ),
    (
        "key-of-another-implementation",
        lambda: simulate.make_run(P10, T)(jax.random.key(0, impl="rbg"), H, jnp.arange(2)),
        ValueError,
        r"key must be a threefry key .*; got a key of implementation rbg",
    ),
    (
        "switching-fractional-boundary",
        lambda: sequences.Switching(np.ones((2, D)), [2500.5]),
        ValueError,
        r"boundaries must be whole round numbers \(int32\); got \[2500.5\]",
    ),
    (
        "x1-on-the-boundary-of-X",
        lambda: simulate.run(_problem(x1=jnp.asarray(E1)), T, H),
        ValueError,
        r"x1 must lie in the shrunk set \(1 - xi\) X for xi = 0.1 .*; it lies 0.1 outside it",
    ),
    (
        "halfspace-scaled-by-1e-30-in-float32",
        lambda: simulate.run(_problem(constraint_data=lin(1e-30 * E1, 1e-31)), T, H),
        ValueError,
        r"constraint_data row 0 \(round 1\) has \|a\| = 1e-30: \|a\|\^2 must lie in .* float32",
    ),
    (
        "halfspace-scaled-by-1e30-in-float32",
        lambda: simulate.run(_problem(constraint_data=lin(1e30 * E1, 1e29)), T, H),
        ValueError,
        r"constraint_data row 0 \(round 1\) has \|a\| = 1e\+30",
    ),
    (
        "log-checkpoints-count-zero",
        lambda: simulate.log_checkpoints(10, 0),
        ValueError,
        r"count \(checkpoints\) must be an integer in \[2, 2000000000\] .*; got 0",
    ),
    (
        "log-checkpoints-fractional-horizon",
        lambda: simulate.log_checkpoints(99.5),
        ValueError,
        r"horizon T must be an integer >= 1 .*; got 99.5",
    ),
    (
        "slackened-empty-every-round",
        with_data(
            constraint=C.Shifted(C.Linear()),
            constraint_data=sequences.Slackened((E1, -2.0), 0.0, 0.5),
        ),
        ValueError,
        r"constraint_data \(Slackened\) has an empty feasible set in every round",
    ),
    (
        "delta-below-the-smallest-normal-float32",
        sweep(hyper=Hyper(**dict(GOOD, delta=1e-45))),
        ValueError,
        r"delta must be at least 1.17549e-38 in float32 \(smaller values flush to zero and every "
        r"gradient estimate divides by 0\); got 1(\.4)?e-45",
    ),
    (
        "custom-loss-returns-an-integer",
        with_data(loss=L.CustomLoss(lambda x, th: 3)),
        TypeError,
        r"the loss \(CustomLoss\) must return a real floating-point number; it "
        r"returned int 3",
    ),
    (
        "custom-loss-returns-a-complex-value",
        with_data(loss=L.CustomLoss(lambda x, th: jnp.sum(x) + 1j)),
        TypeError,
        r"the loss \(CustomLoss\) must return a real floating-point number; .*dtype complex",
    ),
    (
        "custom-loss-takes-one-argument",
        with_data(loss=L.CustomLoss(lambda x: jnp.sum(x))),
        ValueError,
        r"loss.value\(x, theta\) fails on x in R\^3 and round 1's loss data "
        r"\(CustomLoss: a dimension mismatch, data of another shape than the function reads, "
        r"or a function that does not take \(x, theta\)\): TypeError: ",
    ),
    (
        "custom-constraint-returns-an-integer",
        with_data(
            constraint=C.CustomConstraint(lambda x, phi: 3),
            constraint_data=sequences.Fixed(np.zeros(D)),
        ),
        TypeError,
        r"the constraint \(CustomConstraint\) must return a real floating-point number",
    ),
    (
        "replayed-complex-data",
        lambda: sequences.Replay(np.ones((T, D), complex)),
        TypeError,
        r"Replay values must hold real numbers; got an array of dtype complex",
    ),
    (
        "replayed-object-data",
        lambda: sequences.Replay(np.array([[object()] * D] * T)),
        TypeError,
        r"Replay values must hold real numbers; got an array of dtype object",
    ),
    (
        "hyper-c-a-string",
        lambda: Hyper(**dict(GOOD, c="0.5")),
        TypeError,
        r"Hyper.c must be a real number or an array of real numbers; got str '0.5'",
    ),
    (
        "hyper-c-complex",
        lambda: Hyper(**dict(GOOD, c=0.5 + 1j)),
        TypeError,
        r"Hyper.c must be a real number or an array of real numbers; got complex \(0.5\+1j\)",
    ),
    (
        "hyper-c-below-half-shown-as-given",
        lambda: Hyper(**dict(GOOD, c=np.float32(0.3))),
        ValueError,
        r"c must lie in \[0.5, 1\); got 0.3$",
    ),
    (
        "x1-a-row-vector",
        lambda: _problem(x1=np.zeros((1, D))),
        ValueError,
        r"dimension mismatch: x1 must be a vector of shape \(3,\) \(a point of the feasible set "
        r"in R\^3\); got shape \(1, 3\)",
    ),
    (
        "multilinear-zero-rows",
        with_data(
            constraint=C.MultiLinear(),
            constraint_data=sequences.Fixed((np.zeros((0, D)), np.zeros(0))),
        ),
        ValueError,
        r"constraint_data\[0\] has shape \(0, 3\): its axis m must not be empty",
    ),
    (
        "resume-an-empty-path",
        sweep(resume=""),
        ValueError,
        r"resume must be the path of a state file \(written after every chunk, continued from "
        r"when it exists\); got ''",
    ),
    (
        "resume-a-folder",
        sweep(resume="."),
        ValueError,
        r"resume file '.' is a folder, not a state file; remove or rename it, or choose another "
        r"path",
    ),
    (
        "resume-in-a-missing-folder",
        sweep(resume="/nonexistent-jaxbco/state.npz"),
        ValueError,
        r"resume file '/nonexistent-jaxbco/state.npz': its folder '/nonexistent-jaxbco' does not "
        r"exist; create it or choose another path",
    ),
    (
        "custom-loss-negative-curvature-bound",
        lambda: L.CustomLoss(lambda x, th: jnp.sum(x), curvature_bound=-1.0),
        ValueError,
        r"CustomLoss curvature_bound must lie in \(0, inf\); got -1.0",
    ),
    (
        "custom-loss-nan-curvature-bound",
        lambda: L.CustomLoss(lambda x, th: jnp.sum(x), curvature_bound=float("nan")),
        ValueError,
        r"CustomLoss curvature_bound must be finite; got nan",
    ),
    (
        "custom-loss-negative-sigma",
        lambda: L.CustomLoss(lambda x, th: jnp.sum(x), sigma=-1.0),
        ValueError,
        r"CustomLoss sigma must lie in \[0, inf\); got -1.0",
    ),
    (
        "custom-loss-nan-sigma",
        lambda: L.CustomLoss(lambda x, th: jnp.sum(x), sigma=float("nan")),
        ValueError,
        r"CustomLoss sigma must be finite; got nan",
    ),
    (
        "custom-loss-not-callable",
        lambda: L.CustomLoss(2.0),
        TypeError,
        r"CustomLoss fn must be a function fn\(x, theta\); got float 2.0",
    ),
    (
        "custom-constraint-zero-curvature-bound",
        lambda: C.CustomConstraint(lambda x, phi: jnp.sum(x), curvature_bound=0.0),
        ValueError,
        r"CustomConstraint curvature_bound must lie in \(0, inf\); got 0.0",
    ),
    (
        "custom-constraint-not-callable",
        lambda: C.CustomConstraint("g"),
        TypeError,
        r"CustomConstraint fn must be a function fn\(x, phi\); got str 'g'",
    ),
    # --- the remaining validated parameters (test_every_validated_parameter_is_catalogued) ---
    (
        "custom-constraint-smooth-not-bool",
        lambda: C.CustomConstraint(lambda x, phi: jnp.sum(x), smooth="no"),
        TypeError,
        r"CustomConstraint smooth must be True or False; got str 'no'",
    ),
    (
        "custom-constraint-interior-not-callable",
        lambda: C.CustomConstraint(lambda x, phi: jnp.sum(x), interior=3.0),
        TypeError,
        r"CustomConstraint interior must be None or a function phi -> x with fn\(x, phi\) < 0; "
        r"got float 3.0",
    ),
    (
        "fixed-complex-value",
        lambda: sequences.Fixed(np.ones(D, complex)),
        TypeError,
        r"Fixed value must hold real numbers; got an array of dtype complex",
    ),
    (
        "iidnormal-mean-str",
        lambda: sequences.IIDNormal("a", 1.0),
        TypeError,
        r"IIDNormal mean must be a real number or an array of real numbers; got str 'a'",
    ),
    (
        "iidnormal-std-complex",
        lambda: sequences.IIDNormal(np.zeros(D), 1j),
        TypeError,
        r"IIDNormal std must be a real number or an array of real numbers; got complex 1j",
    ),
    (
        "iidnormal-mean-inf",
        lambda: sequences.IIDNormal(np.full(D, np.inf), 1.0),
        ValueError,
        r"^mean must be finite \(no NaN or inf\); it contains non-finite values \(first at index \[0\]\)",
    ),
    (
        "iiduniform-low-complex",
        lambda: sequences.IIDUniform(np.ones(D, complex), np.ones(D)),
        TypeError,
        r"IIDUniform low must be a real number or an array of real numbers; got ndarray",
    ),
    (
        "iiduniform-high-str",
        lambda: sequences.IIDUniform(np.zeros(D), "x"),
        TypeError,
        r"IIDUniform high must be a real number or an array of real numbers; got str 'x'",
    ),
    (
        "alternating-nan",
        lambda: sequences.Alternating(np.full((2, D), np.nan)),
        ValueError,
        r"alternating data must be finite \(no NaN or inf\); .*first at index \[0, 0\]",
    ),
    (
        "slackened-base-nan",
        lambda: sequences.Slackened((A, np.nan), 0.0, 0.1),
        ValueError,
        r"^base must be finite \(no NaN or inf\)",
    ),
    (
        "classification-noise-negative",
        lambda: sequences.Classification(jnp.ones(D), -0.1),
        ValueError,
        r"noise must lie in \[0, inf\); got -0.1",
    ),
    (
        "hyper-eps-0",
        lambda: Hyper(**dict(GOOD, eps=0.0)),
        ValueError,
        r"^eps must lie in \(0, inf\); got 0.0",
    ),
    (
        "hyper-xi-1",
        lambda: Hyper(**dict(GOOD, xi=1.0)),
        ValueError,
        r"^xi must lie in \(0, 1\); got 1.0",
    ),
    (
        "yuneely-exponent-negative",
        lambda: published.YuNeelyCost(jnp.ones(4), exponent=-1.0),
        ValueError,
        r"exponent must lie in \[0, inf\); got -1.0",
    ),
    (
        "yuneely-signs-nan",
        lambda: published.YuNeelyCost(jnp.asarray([1.0, np.nan])),
        ValueError,
        r"signs must be finite \(no NaN or inf\); .*first at index \[1\]",
    ),
    (
        "drawn-loss-data-nan",
        with_data(loss_data=NanLossData()),
        ValueError,
        r"loss data must be finite \(no NaN or inf\)",
    ),
    (
        "drawn-constraint-data-nan",
        with_data(constraint_data=NanConstraintData()),
        ValueError,
        r"constraint data must be finite \(no NaN or inf\)",
    ),
    (
        "custom-constraint-reads-past-its-data",
        with_data(
            constraint=C.CustomConstraint(lambda x, phi: x @ phi[0] - phi[2]),
            constraint_data=sequences.Fixed((np.zeros(3), np.asarray(0.5))),
        ),
        ValueError,
        r"constraint.value\(x, phi\) fails on x in R\^3 and round 1's constraint data "
        r"\(CustomConstraint: .*data of another shape than the function reads.*\): IndexError: ",
    ),
    (
        "own-algorithm-step-changes-the-state-shape",
        sweep(algorithm=GrowingState()),
        ValueError,
        r"algorithm GrowingState.step must return a state of init's structure and shapes "
        r".*init gives \[.x \(3,\) float32, .lam \(\) float32.*\], step returns "
        r"\[.x \(6,\) float32",
    ),
    (
        "own-algorithm-decision-of-another-dimension",
        sweep(algorithm=ShortDecision()),
        ValueError,
        r"algorithm ShortDecision.decision\(state\) must return the point x_t of shape \(3,\) "
        r"\(d = 3\); it returns shape \(2,\)",
    ),
    (
        "own-algorithm-multiplier-not-a-scalar",
        sweep(algorithm=VectorMultiplier()),
        ValueError,
        r"algorithm VectorMultiplier.multiplier\(state\) must return a scalar; it returns "
        r"shape \(3,\)",
    ),
]


@pytest.mark.parametrize("make,exc,match", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_bad_input_api(make, exc, match):
    with traces() as counts, pytest.raises(exc, match=match) as info:
        make()
    assert isinstance(info.value, (TypeError, ValueError))
    assert counts == {
        "simulate": 0,
        "rounds": 0,
    }  # refused before the engine's programs were traced


# The Python API's modules (the CLI's, tune's and compare's checks have catalogues of their own).
API_SCOPE = ("cli/", "tune/", "compare/")


def _validated_names():
    """Every parameter name the package passes, as a string literal, to a ``checks`` check
    (``checks.check_range("radius", ...)`` etc.), read from the source: {name: [file:line]}."""
    import ast
    import pathlib

    from jaxbco._src import checks as _checks

    checks = {n for n in dir(_checks) if n.startswith("check_")}
    root = pathlib.Path(jaxbco.__file__).parent
    found = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(API_SCOPE):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (
                isinstance(node, ast.Call)
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                continue
            f = node.func
            via_checks = (
                isinstance(f, ast.Attribute)
                and isinstance(f.value, ast.Name)
                and f.value.id in ("checks", "_checks")
                and f.attr in checks
            )
            here = rel == "_src/checks.py" and isinstance(f, ast.Name) and f.id in checks
            if via_checks or here:
                found.setdefault(node.args[0].value, []).append(f"{rel}:{node.lineno}")
    return found


def test_every_validated_parameter_is_catalogued():
    """Each parameter name the code validates appears in some case's expected message as
    "<name> must ..." (each case's message is checked against the real error above), so a
    new check without a catalogue entry fails here; and the case ids are distinct."""
    found = _validated_names()
    assert {"horizon T", "radius", "c", "scan_unroll", "Fixed value"} <= set(
        found
    )  # the scan works
    patterns = [c[3] for c in CASES]
    missing = {
        name: where
        for name, where in found.items()
        if not any(re.search(r"(^|[^\w.])" + re.escape(name) + r" must\b", p) for p in patterns)
    }
    assert not missing, f"validated but not in the catalogue: {missing}"
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize(
    "problem,what",
    [
        (_problem(constraint_data=Drawn()), "is drawn during"),
        (
            _problem(
                constraint=C.Shifted(C.Linear()),
                constraint_data=sequences.Slackened((E1, -0.95), 0.0, 1.5),
            ),
            "rounds with a slack",
        ),
        (
            _problem(
                constraint=C.Ball(),
                constraint_data=sequences.Replay(
                    (np.outer(np.tile([1.0, -1.0], T // 2), E1 / 2), np.full(T, 0.04))
                ),
            ),
            "neither X's centre nor x1",
        ),
    ],
    ids=["drawn-constraint", "slack-range", "replayed-balls"],
)
def test_undecided_feasibility_warns_and_flags(problem, what):
    with pytest.warns(FeasibilityWarning, match=f"feasibility undecided: .*{what}"):
        assert check_feasible(problem, T, 0.1, True) is True


def test_empty_round_without_comparator_warns():
    """Guo et al.'s alternating g_t = -1, +1: round 2 is empty by design; without x* the run
    goes on with a warning naming the round."""
    prob = _problem(
        constraint_data=sequences.Alternating((np.zeros((2, D)), np.asarray([1.0, -1.0])))
    )
    with pytest.warns(
        FeasibilityWarning, match=r"values\[1\]: rounds t = 2, 4, ...; row 0\).*unavoidable"
    ):
        assert check_feasible(prob, T, 0.0, False) is False
    with pytest.raises(ValueError, match="offline problem"):
        check_feasible(prob, T, 0.0, True)


def test_feasible_recorded_constraints_pass_quietly():
    good = [
        _problem(),
        _problem(constraint_data=sequences.Replay((np.tile(A, (T, 1)), np.linspace(0.1, 0.5, T)))),
        problems.make("time-varying-ball", 4),
        problems.make("nyse-portfolio", dim=4, horizon=T),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for prob in good:
            validate(prob, T)
            assert check_feasible(prob, T, 0.01, True) is False


def test_chunk_length_is_fast_and_unchanged():
    def old(horizon):
        target = horizon / 100
        divisors = [n for n in range(max(1, horizon // 200), horizon // 50 + 1) if horizon % n == 0]
        return min(divisors, key=lambda n: abs(n - target)) if divisors else -(-horizon // 100)

    for horizon in list(range(100, 1200)) + [10**5, 99991, 2**20, 3 * 7 * 11 * 13 * 17]:
        assert shaping.chunk_length(None, horizon, True) == old(horizon)

    class Counted(int):
        """A horizon that counts the remainders taken of it (the divisor search's steps) and
        fails at once past ``limit``: the old search took ~3T/200 (3e7 at T = 2e9)."""

        def __mod__(self, other):
            self.steps += 1
            assert self.steps <= self.limit, f"more than {self.limit} steps for T = {int(self)}"
            return int(self) % other

    # O(sqrt T) steps, counted rather than timed; the answers worked out by hand:
    # 2e9 = 2^10 5^9 has the divisor T/100 = 2e7 itself; 1_999_999_973 is prime, so no divisor
    # lies in [T/200, T/50] and the fallback is ceil(T/100) = 2e7; for 2^30 the divisors in
    # [2^30/200, 2^30/50] = [5368709, 21474836] are 2^23 and 2^24, and 2^23 is the closer to T/100.
    for horizon, want in ((2_000_000_000, 20_000_000), (1_999_999_973, 20_000_000), (2**30, 2**23)):
        counted = Counted(horizon)
        counted.steps, counted.limit = 0, math.isqrt(horizon) + 1
        assert shaping.chunk_length(None, counted, True) == want
        assert counted.steps >= 1  # the counter saw the search (else this check is vacuous)


def test_memory_estimate_is_of_the_right_order():
    """Order of magnitude only (the refusal test is in the catalogue): 1e6 seeds x 100
    checkpoints of float32 curves are 2 GB, so the estimate lies within [2, 20] GB."""
    sizes = memory.run_sizes(P10, jaxbco.algorithms.RectifiedBCO(), H)
    est = memory.memory_estimate(P10, 1, 10**6, 100, sizes)
    assert 2e9 <= est <= 2e10


def test_make_run_carries_the_undecided_flag():
    """The flag reaches the caller (``make_run`` compiles nothing until called)."""
    with pytest.warns(FeasibilityWarning, match="is drawn during the run"):
        fn = simulate.make_run(_problem(constraint_data=Drawn()), T, comparator=False)
    assert fn.feasibility_undecided is True
    assert simulate.make_run(P, T).feasibility_undecided is False


def test_accelerator_memory_limit_and_refusal():
    """The accelerator path of the up-front memory check, with stand-in devices (no GPU here):
    the limit is the devices' summed ``bytes_limit``; a device without stats gives no limit."""

    class Dev:
        platform = "gpu"

        def __init__(self, stats):
            self.stats = stats

        def memory_stats(self):
            return self.stats

    limit = memory.memory_limit([Dev({"bytes_limit": 80e9}), Dev({"bytes_limit": 80e9})])
    assert limit == (160_000_000_000, "memory of 2 gpu device(s)")
    assert memory.memory_limit([Dev(None)]) is None
    assert memory.memory_limit([Dev({})]) is None
    memory.check_memory(10**9, limit, "test")  # fits: no error
    with pytest.raises(
        ValueError,
        match=r"needs about 200 GB .* more than the 160 GB .* of "
        r"memory of 2 gpu device\(s\)",
    ):
        memory.check_memory(2 * 10**11, limit, "curves")


def test_integer_inputs_where_numbers_are_meant_run():
    """Integer means, bounds and x1 are numbers a user writes: they run as floats (before:
    "dtype argument to `normal` must be a float" / "random draws ... got int32")."""
    for data in (
        sequences.IIDNormal(np.zeros(D, int), 1),
        sequences.IIDUniform(np.zeros(D, int), np.ones(D, int)),
    ):
        res = simulate.run(_problem(loss_data=data, x1=np.zeros(D, int)), T, H)
        assert np.all(np.isfinite(np.asarray(res.regret)))


def test_a_curvature_bound_below_the_truth_is_reported():
    """A custom loss's or constraint's curvature bound below its function's curvature (2 for
    ||x - theta||^2 and ||x||^2 - s) is used only as a first guess; the checks before a run
    (``validate``, which ``sweep`` and ``make_run`` call) say so once per component
    (``CurvatureWarning``, naming the bound and the curvature found), and a bound at or above
    it, or none, says nothing."""
    from jaxbco.problem import CurvatureWarning

    def custom(loss_bound, con_bound):
        return _problem(
            loss=L.CustomLoss(lambda x, th: jnp.sum((x - th) ** 2), loss_bound),
            constraint=C.CustomConstraint(lambda x, s: jnp.sum(x**2) - s, con_bound),
            constraint_data=sequences.Fixed(jnp.asarray(0.25)),
        )

    with pytest.warns(CurvatureWarning) as seen:
        validate(custom(1.0, 0.5), T)
    texts = sorted(str(w.message) for w in seen if w.category is CurvatureWarning)
    assert len(texts) == 2
    assert texts[0].startswith(
        "CustomConstraint curvature_bound = 0.5 is below the curvature "
        "of its function at X's centre on round 1's data (2)"
    )
    assert texts[1].startswith("CustomLoss curvature_bound = 1 is below the curvature")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CurvatureWarning)
        validate(custom(None, 2.0), T)
    # and the run: a float32 run while 64-bit JAX is on (this suite) took the user's float as
    # float64 into the smooth prox's loops and the comparator's (a TypeError before)
    with pytest.warns(CurvatureWarning):
        res = simulate.sweep(custom(1.0, 0.5), T, H, seeds=2, progress=False)
    assert not np.any(np.asarray(res.failed)) and res.regret.dtype == np.float32


def test_problem_built_in_float64_run_with_x64_off():
    """x64 switched off between building a problem and running it: one clear error naming the
    switch, not JAX's dtype error from inside the sampler (issue 37 item 7)."""
    with jax.enable_x64(True):
        wide = jaxbco.problems.make("quadratic-ball")
    with pytest.raises(
        ValueError,
        match=r"problem holds float64 arrays \(it was built with "
        r"64-bit JAX on\) but 64-bit JAX is off now",
    ):
        jaxbco.sweep(wide, 10, seeds=1)


def test_every_accepted_master_key_changes_the_streams():
    """Every int ``sweep`` accepts as a key is used whole (issue 57): keys 5 and 5 + 2^32 give
    different runs with 64-bit JAX off (``jax.random.key`` kept the low 32 bits: the same run);
    a typed key from the same int gives the same run as the int."""
    run = lambda key: simulate.sweep(P, T, H, seeds=2, key=key).loss
    low, high = run(5), run(5 + 2**32)
    assert not np.array_equal(low, high)
    with jax.enable_x64(True):
        typed = jax.random.key(5 + 2**32)  # all 64 bits with 64-bit JAX on
    np.testing.assert_array_equal(run(typed), high)


def test_numbers_given_as_text_are_refused_naming_the_parameter():
    """Issue 57: curvature_bound='1' was accepted and failed later with "Unknown format code
    'g'"; an exponent 'x' ended in "could not convert string to float"."""
    with pytest.raises(TypeError, match="CustomLoss curvature_bound must be a number .* str '1'"):
        L.CustomLoss(lambda x, t: jnp.sum(x * x), curvature_bound="1")
    with pytest.raises(TypeError, match="CustomConstraint curvature_bound must be a number"):
        C.CustomConstraint(lambda x, p: jnp.sum(x * x) - 1.0, curvature_bound="1")
    with pytest.raises(ValueError, match=r"exponents\['regret'\] must be a number .* got 'x'"):
        registry.register("text-exponent", MahdaviPrimalDual, exponents={"regret": "x"})
    assert "text-exponent" not in registry.names()


def test_a_strongly_convex_schedule_for_a_loss_without_modulus_warns():
    """Issue 57: a linear loss declared strongly convex ran without a word (sigma 0 -> 1)."""
    linear = Problem(
        sets.L2Ball(jnp.zeros(D), 1.0),
        L.Linear(),
        sequences.IIDUniform(-jnp.ones(D), jnp.ones(D)),
        C.Linear(),
        sequences.Fixed((A, jnp.asarray(0.3))),
        strongly_convex=True,
    )

    def said(problem):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            validate(problem, T)
        return [str(w.message) for w in caught if w.category is jaxbco.problem.CurvatureWarning]

    (line,) = said(linear)
    assert "strong-convexity modulus sigma = 0" in line and "Linear" in line
    assert said(problems.make("strongly-convex-ball", 3)) == []  # sigma = 2: no word


def _undeclared_kink(centre):
    """A user's g with kinks declared smooth (the default): max |x - c| <= 0.05 on the box."""
    return Problem(
        domain=sets.Box(-jnp.ones(D), jnp.ones(D)),
        loss=L.Quadratic(),
        loss_data=sequences.IIDNormal(jnp.zeros(D), 0.1 * jnp.ones(D)),
        constraint=C.CustomConstraint(lambda x, c: jnp.max(jnp.abs(x - c)) - 0.05),
        constraint_data=sequences.Fixed(jnp.full(D, centre)),
    )


def test_an_undeclared_kink_is_not_called_infeasible():
    """g = max |x - 0.8| - 0.05 meets the box, though the smooth method (which assumes a
    gradient) does not find it from X's centre: the run goes ahead (it was refused as "the
    offline problem is infeasible"), x* = 0.75 (1, 1, 1) is certified, and the prox warning
    advises smooth=False.  A g of the same shape that misses X is still refused."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = simulate.sweep(_undeclared_kink(0.8), T, seeds=2)
    assert np.asarray(res.x_star_ok).all()
    np.testing.assert_allclose(np.asarray(res.x_star), 0.75, atol=1e-4)
    prox = [str(w.message) for w in seen if issubclass(w.category, ProxWarning)]
    assert all("declare smooth=False" in m for m in prox), prox
    with pytest.raises(ValueError, match="the offline problem is infeasible"):
        simulate.sweep(_undeclared_kink(3.0), T, seeds=2)


def _steep(smooth):
    """g = exp(20 (a.x - b)) - 1, smooth and convex, but steep: about 1e7 at X's far side."""
    a = jnp.ones(D) / np.sqrt(D)
    return Problem(
        domain=ball(),
        loss=L.Quadratic(),
        loss_data=sequences.IIDNormal(jnp.full(D, 0.6), 0.2 * jnp.ones(D)),
        constraint=C.CustomConstraint(
            lambda x, phi: jnp.exp(20 * (x @ phi[0] - phi[1])) - 1.0, smooth=smooth
        ),
        constraint_data=sequences.Fixed((a, jnp.asarray(0.3))),
    )


def test_a_steep_constraint_is_certified_either_way():
    """Declared smooth (the interior point with g's Hessian: its steps backtracked where g's
    linearisation overshoots, g scaled where it is not huge) or not (cutting planes), every
    prox step of every run is certified without a warning, and the two runs agree (x*, the
    final regret).  Before the backtracking the smooth declaration failed steps at a relative
    gap of 0.8."""
    runs = []
    for smooth in (True, False):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            res = simulate.sweep(_steep(smooth), 200, seeds=4)
        assert not [w for w in seen if issubclass(w.category, ProxWarning)], smooth
        assert np.asarray(res.prox_ok).all(), (smooth, res.prox_certificate)
        assert np.asarray(res.x_star_ok).all(), (smooth, res.x_star_certificate)
        runs.append(res)
    smooth_run, cutting = runs
    np.testing.assert_allclose(np.asarray(smooth_run.x_star), np.asarray(cutting.x_star), atol=1e-4)
    np.testing.assert_allclose(
        np.asarray(smooth_run.regret)[..., -1], np.asarray(cutting.regret)[..., -1], rtol=1e-3
    )
