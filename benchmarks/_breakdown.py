"""Where a run's time goes, by ablation (``python -m benchmarks.problems --breakdown``).

One problem, the same seeds, rounds and compiled-call settings as ``benchmarks.problems``,
timed as five programs that each leave one more part out:

* ``full``: rectified-bco with the comparator (what ``problems`` times);
* ``no_comparator``: ``make_run(..., comparator=False)`` (regret against x₁);
* ``no_certificate``: that, with the prox certificate never measured
  (``certify_every`` = T + 1);
* ``estimate``: ``_Estimate``: Alg. 1 lines 3-5 and 9 without line 6 (the prox step, Eq. (5)):
  x stays at x₁ (plus 0 times the estimate, so that it is computed);
* ``data``: ``_Still``: x₁ played every round, nothing estimated: the rounds' data drawn and
  scored (fₜ, gₜ at xₜ), the curves recorded.

Shares of ``full``: data = data; estimate = estimate − data; prox = no_certificate − estimate;
prox_certificate = no_comparator − no_certificate; comparator = full − no_comparator.  The x*
certificate (``engine.certify_comparator``, the cheap one a sweep runs after the call, one pass
over each seed's rounds) is a program of its own, timed beside them (``x_star_certificate``;
its share is of full + it).  Differences of medians: a share within the runs' spread can come
out slightly negative.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from benchmarks._timing import compile_run
from jaxbco import Hyper, backends, engine, simulate
from jaxbco._src import xla
from jaxbco._src.shaping import cast
from jaxbco.algorithms import AbstractAlgorithm, RectifiedBCO, toolkit
from jaxbco.hyper import schedule

PARTS = ("data", "estimate", "prox", "prox_certificate", "comparator")


class _State(NamedTuple):
    x: jax.Array
    lam: jax.Array


class _Still(AbstractAlgorithm):
    """x₁ every round: what a run costs without any step (data, scoring, records)."""

    hyper_class: ClassVar[type] = Hyper
    blocks = True

    def default_hyper(self, problem, horizon):
        return RectifiedBCO().default_hyper(problem, horizon)

    def init(self, problem, hyper, x1):
        return _State(x1, jnp.zeros_like(x1[0]))

    def step(self, state, problem, hyper, inp):
        return state

    def decision(self, state):
        return state.x

    def multiplier(self, state):
        return state.lam


class _Estimate(_Still):
    """Alg. 1 without its prox step: the two-point estimate (lines 3-5) and λ's update
    (line 9); x stays (0 times the estimate added: XLA keeps a float product by 0)."""

    blocks = True  # declared by each class itself (not inherited)

    def step(self, state, problem, hyper, inp):
        x, lam = state
        alpha, _, _ = schedule(hyper, inp.t, False)
        _, gamma_next, eta_next = schedule(hyper, inp.t + 1, False)
        grad = toolkit.loss_gradient(problem, inp.theta, x, inp.u, hyper.delta, True)
        x_next = x + 0.0 * (grad / alpha)
        g_next = problem.constraint.value(x, inp.phi_next)
        lam_next = jnp.maximum(lam + gamma_next * jnp.maximum(g_next, 0.0), eta_next)
        return _State(x_next, lam_next)


def _timed(fn, key, hyper, ids, repeats: int):
    compiled, compile_s, out = compile_run(fn, key, hyper, ids)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = jax.block_until_ready(compiled(key, hyper, ids))
        times.append(time.perf_counter() - t0)
    return statistics.median(times), compile_s, out


def breakdown(problem, horizon: int, algorithm, hyper, ids, dtype: str, repeats: int) -> dict:
    """The five programs' run seconds (``<name>_s``), each part's share of ``full``
    (``share``) and the x* certificate's seconds and share.

    Args:
        problem: the ``Problem``.
        horizon: T.
        algorithm: rectified-bco (its fields kept; ``certify_every`` changed for one program).
        hyper: its hyperparameters.
        ids: (S,) seed ids.
        dtype: the run's dtype.
        repeats: timed calls per program (the median kept).

    Returns:
        A dict of seconds and shares (JSON-ready floats), and the back-end each program ran
        on (``engines``: the ablations must run on the full run's).
    """
    key = jax.random.key(0)
    cps = simulate.log_checkpoints(horizon, 100)
    run = lambda alg, comparator: simulate.make_run(
        problem,
        horizon,
        algorithm=alg,
        kernel=False,
        checkpoints=cps,
        dtype=dtype,
        comparator=comparator,
    )
    quiet = dataclasses.replace(algorithm, certify_every=horizon + 1)
    secs = {}
    secs["full"], _, out = _timed(run(algorithm, True), key, hyper, ids, repeats)
    secs["no_comparator"] = _timed(run(algorithm, False), key, hyper, ids, repeats)[0]
    secs["no_certificate"] = _timed(run(quiet, False), key, hyper, ids, repeats)[0]
    secs["estimate"] = _timed(run(_Estimate(), False), key, hyper, ids, repeats)[0]
    secs["data"] = _timed(run(_Still(), False), key, hyper, ids, repeats)[0]
    parts = dict(
        data=secs["data"],
        estimate=secs["estimate"] - secs["data"],
        prox=secs["no_certificate"] - secs["estimate"],
        prox_certificate=secs["no_comparator"] - secs["no_certificate"],
        comparator=secs["full"] - secs["no_comparator"],
    )
    cert_s = _certificate_seconds(problem, horizon, key, ids, out["x_star"], dtype, repeats)
    algorithms = dict(full=algorithm, estimate=_Estimate(), data=_Still())
    return dict(
        **{f"{k}_s": v for k, v in secs.items()},
        engines={k: backends.choose(problem, a)[0] for k, a in algorithms.items()},
        share={k: v / secs["full"] for k, v in parts.items()},
        x_star_certificate_s=cert_s,
        x_star_certificate_share=cert_s / (secs["full"] + cert_s),
    )


def _certificate_seconds(problem, horizon, key, ids, x_star, dtype, repeats) -> float:
    """The cheap x* certificate (``engine.certify_comparator``) of every seed, timed."""
    p = cast(problem, dtype)
    given = engine.seed_independent(p)
    fn = jax.jit(
        lambda k, i, xs: engine.certify_comparator(p, k, i, xs, (), horizon, given),
        compiler_options=dict(xla.options()) or None,
    )
    ids = jnp.asarray(ids, jnp.uint32)
    jax.block_until_ready(fn(key, ids, x_star))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(key, ids, x_star))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def markdown(records) -> str:
    """The breakdown records of ``problems --breakdown --json`` as a Markdown table: each
    part's share of the run (percent), the x* certificate's share of run + it, and the rate."""
    head = "| problem | seed-rounds/s | data | estimate | prox | prox cert. | x* | x* cert. |"
    lines = [head, "|" + " --- |" * 8]
    for r in records:
        b = r.get("breakdown")
        if not b:
            continue
        s = b["share"]
        cells = [f"{100 * s[k]:.0f}%" for k in PARTS]
        cells.append(f"{100 * b['x_star_certificate_share']:.0f}%")
        lines.append(
            f"| {r['problem']} | {r['seed_rounds_per_s']:.2g} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


if __name__ == "__main__":  # python -m benchmarks._breakdown RECORDS.jsonl
    import json
    import sys

    with open(sys.argv[1]) as fh:
        print(markdown([json.loads(line) for line in fh if line.strip()]))
