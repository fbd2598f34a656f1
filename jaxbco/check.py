"""Checking a ``blocks = True`` declaration: the same runs on seeds-minor blocks (vectors
(d, runs), per-run scalars (runs,)) and per run (``vmap``), compared round by round; and the
fused kernel against blocks."""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import numpy as np

from jaxbco import backends, fused, problems, simulate
from jaxbco._src import blocks as _blocks
from jaxbco.algorithms import AbstractAlgorithm, RectifiedBCO
from jaxbco.problem import Problem

ROLES = ("domain", "loss", "loss_data", "constraint", "constraint_data")
QUANTITIES = simulate.METRICS + ("x_final", "failed")
# (rtol, atol x the quantity's largest |value| over the run).  Measured blocks vs per run (all
# registered algorithms on quadratic-ball d=4, RectifiedBCO on 4 more problems): float32 3e-6
# of that scale at T=12, 4e-5 at T=200, 1.2e-4 at T=1000 (two-point estimates divide round-off
# by 2 delta); float64 7e-14 at T=200.  Kernel vs blocks (tests/test_fused.py's): 8e-6, 1e-14.
TOLERANCES = {
    ("blocks", "float64"): (1e-9, 1e-9),
    ("blocks", "float32"): (2e-3, 1e-3),
    ("kernel", "float64"): (1e-10, 1e-10),
    ("kernel", "float32"): (1e-4, 1e-4),
}


@dataclasses.dataclass(frozen=True)
class Check:
    """The answer of ``check_component``; ``str(check)`` says it in one sentence.

    Args:
        ok: within tolerance (True when nothing ran on blocks; False when every run failed:
            nothing was compared).
        compared: blocks were compared with per-run runs; else ``engine_reason`` says why not.
        engine_reason: why nothing runs on seeds-minor blocks ("" when compared).
        mismatch: the earliest mismatch in one line ("" when ok).
        max_rel_diff: the largest |difference| / scale over the quantities compared.
        kernel: the fused kernel was compared too.
        all_failed: every run went non-finite (``mismatch`` says from when).

    Example:
        >>> from jaxbco import Check
        >>> print(Check(ok=True, compared=True, max_rel_diff=1e-7))
        OK: the runs on seeds-minor blocks agree with per-run (vmap) runs at every round
        (largest difference 1e-07 of each quantity's scale).
    """

    ok: bool
    compared: bool
    engine_reason: str = ""
    mismatch: str = ""
    max_rel_diff: float = 0.0
    kernel: bool = False
    all_failed: bool = False

    def __str__(self) -> str:
        what = "per-run (vmap) runs" + (" and the fused kernel" if self.kernel else "")
        if self.all_failed:
            return f"NOT CHECKED: {self.mismatch}."
        if not self.compared:
            return f"Not compared: nothing runs on seeds-minor blocks ({self.engine_reason})."
        if self.ok:
            return (
                f"OK: the runs on seeds-minor blocks agree with {what} at every round "
                f"(largest difference {self.max_rel_diff:.2g} of each quantity's scale)."
            )
        return (
            f"MISMATCH against {what}: {self.mismatch}.  On a block, reduce over the vector "
            f"axis 0 only: the runs on the trailing axes must never mix."
        )


def check_component(
    component,
    problem: Problem | None = None,
    *,
    algorithm=None,
    seeds: int = 5,
    horizon: int = 12,
    dtype=None,
    kernel: bool | None = None,
    raise_on_mismatch: bool = False,
) -> Check:
    """Whether the components declaring ``blocks = True`` compute on blocks what they do per run.

    Runs ``sweep`` (default hyperparameters, every round a checkpoint, ``comparator=False``:
    regret against x₁) as declared, on seeds-minor blocks, and with the algorithm replaced by
    a plain subclass declaring nothing (same fields, code and random numbers): per run, under
    ``vmap``.  For each of ``simulate.METRICS``, ``x_final`` and ``failed``, round t and run,
    |q_blocks − q_per_run| ≤ rtol |q_per_run| + atol maxₜ,runs |q_per_run| (``TOLERANCES``;
    ``failed`` and NaNs exactly).  Where the fused kernel applies (``kernel`` None and
    ``fused.blocker`` None, or True), its run is compared with the blocks alike.

    Args:
        component: an algorithm (or its class, built with no arguments), a ``Problem``, or one
            of ``problem``'s domain, loss, loss_data, constraint, constraint_data.
        problem: the problem to run on (default: quadratic-ball, d = 4).
        algorithm: the algorithm to run (default: ``RectifiedBCO``).
        seeds: the number of runs.
        horizon: the number of rounds T.
        dtype: "float32" or "float64" (default: "float64" under x64, else "float32").
        kernel: compare the fused kernel too (None: where it applies).
        raise_on_mismatch: raise ``ValueError(check.mismatch)`` instead of returning it.

    Returns:
        A ``Check``: ``ok``, ``compared``, ``engine_reason``, ``mismatch``, ``max_rel_diff``.

    Raises:
        ValueError: for a component that is not part of ``problem``, ``kernel=True`` where the
            fused kernel does not apply, or a mismatch with ``raise_on_mismatch``.

    Example:
        >>> import jaxbco
        >>> from jaxbco import losses, problems
        >>> problem = problems.make("quadratic-ball", dim=4)
        >>> check = jaxbco.check_component(losses.Quadratic(), problem, seeds=2, horizon=4,
        ...                                kernel=False)
        >>> check.ok, check.compared   # or print(check)
        (True, True)
    """
    problem, algorithm = _resolve(component, problem, algorithm)
    dtype = str(np.dtype(dtype or ("float64" if jax.config.jax_enable_x64 else "float32")))
    why = _blocks.blocker(problem, algorithm)
    why_kernel = why or fused.blocker(problem, algorithm, dtype=dtype)
    if kernel and why_kernel:
        raise ValueError(f"kernel=True: the fused kernel does not cover this run ({why_kernel})")
    if why is not None:
        return Check(ok=True, compared=False, engine_reason=why)
    kw = dict(
        seeds=seeds,
        checkpoints=np.arange(1, horizon + 1),
        dtype=dtype,
        comparator=False,
        hyper=algorithm.default_hyper(problem, horizon),
    )
    blocks = simulate.sweep(problem, horizon, algorithm=algorithm, kernel=False, **kw)
    # Only the algorithm made plain: vmap, where every component runs per run; a plain set or
    # sequence would draw other random numbers (``keys.for_component``: a typed key instead).
    per_run = simulate.sweep(problem, horizon, algorithm=_plain(algorithm), kernel=False, **kw)
    assert (blocks.engine, per_run.engine) == (backends.SEEDS_MINOR, backends.VMAP), per_run.engine
    results = [_compare(per_run, blocks, "blocks vs per-run", "blocks", dtype, problem, algorithm)]
    run_kernel = kernel if kernel is not None else why_kernel is None
    if run_kernel:
        fast = simulate.sweep(problem, horizon, algorithm=algorithm, kernel=True, **kw)
        results.append(
            _compare(blocks, fast, "kernel vs blocks", "kernel", dtype, problem, algorithm)
            if fast.engine == backends.FUSED
            else (np.inf, f"kernel vs blocks: the kernel did not run ({fast.engine})")
        )
    mismatch = next((m for _, m in results if m), "")
    all_failed = not mismatch and bool(np.all(per_run.failed))
    if all_failed:  # all NaN on both sides: nothing compared
        mismatch = (
            f"every one of the {per_run.failed.size} runs went non-finite (per run from round "
            f"{int(np.min(per_run.failed_round))} on), so no value was compared; suspects: "
            f"{', '.join(_declaring(problem, algorithm, 'blocks'))}"
        )
    if mismatch and raise_on_mismatch:
        raise ValueError(mismatch)
    return Check(
        ok=not mismatch,
        compared=True,
        mismatch=mismatch,
        max_rel_diff=float(max(d for d, _ in results)),
        kernel=bool(run_kernel),
        all_failed=all_failed,
    )


def _resolve(component, problem, algorithm):
    """(problem, algorithm) to run for ``component``, with their defaults."""
    if isinstance(component, type) and issubclass(component, AbstractAlgorithm):
        component = component()
    given = None  # the algorithm or problem checked, also passed by keyword
    if isinstance(component, AbstractAlgorithm):
        algorithm, given = component, algorithm
    elif isinstance(component, Problem):
        problem, given = component, problem
    elif problem is None or not any(
        getattr(problem, r) is component or _same(getattr(problem, r), component) for r in ROLES
    ):
        raise ValueError(
            f"{type(component).__name__} is not an algorithm, a Problem or one of "
            f"{'no' if problem is None else 'the given'} problem's components "
            f"({', '.join(ROLES)}): pass the problem it belongs to, "
            f"check_component(component, problem)"
        )
    if given is not None and given is not component:
        raise ValueError(f"the {type(component).__name__} to check is given twice")
    problem = problems.make("quadratic-ball", 4) if problem is None else problem
    if algorithm is None:
        algorithm = RectifiedBCO(strongly_convex=problem.strongly_convex)
    return problem, algorithm


def _same(a, b) -> bool:
    """The same tree structure (classes, static fields) and leaf values (False when unsure)."""
    try:
        (la, ta), (lb, tb) = jax.tree_util.tree_flatten(a), jax.tree_util.tree_flatten(b)
        return ta == tb and all(
            x is y or np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb)
        )
    except Exception:  # leaves without a value to compare (typed keys, ...)
        return False


def _plain(component):
    """``component`` as a subclass declaring neither ``blocks`` nor ``kernel`` (``shared`` kept)."""
    cls = type(component)
    own = {"__module__": cls.__module__, **({"shared": True} if _blocks.shared(component) else {})}
    plain = type("Plain" + cls.__name__, (cls,), own)
    fields = [f for f in dataclasses.fields(component) if hasattr(component, f.name)]
    try:
        copy = plain(**{f.name: getattr(component, f.name) for f in fields if f.init})
        if all(_same(getattr(copy, f.name), getattr(component, f.name)) for f in fields):
            return copy
    except Exception:  # a constructor of other arguments: copy the fields as they are, below
        pass
    copy = object.__new__(plain)
    for f in fields:
        object.__setattr__(copy, f.name, getattr(component, f.name))
    return copy


def _declaring(problem, algorithm, flag: str) -> list[str]:
    """Classes (nested ones too) declaring ``flag``: those defined outside jaxbco, else all."""
    found, todo = [], [getattr(problem, r) for r in ROLES] + [algorithm]
    for c in todo:  # grows as it goes: the components each one holds
        if _blocks.own(c, flag) and c.__class__ not in found:
            found.append(c.__class__)
        todo += [
            v
            for f in dataclasses.fields(c)
            if isinstance(v := getattr(c, f.name, None), eqx.Module)
        ]
    user = [t for t in found if t.__module__.split(".")[0] != "jaxbco"]
    return [t.__name__ for t in user or found]


def _compare(ref, got, label, flag, dtype, problem, algorithm) -> tuple[float, str]:
    """(largest |difference| / scale, the earliest mismatch in one line or "")."""
    rtol, atol = TOLERANCES[(flag, dtype)]
    worst, first = 0.0, None  # first: (round, message)
    for q in QUANTITIES:
        a, b = (np.asarray(getattr(r, q), np.float64) for r in (ref, got))
        if q == "x_final":  # (G, S, d) -> (G, S, 1, d): x_{T+1}, after the last round
            a, b = a[:, :, None], b[:, :, None]
        elif q == "failed":  # (G, S) -> (G, S, 1): the round a run failed at, 0 if none
            a, b = (np.where(r.failed, r.failed_round, 0)[..., None] * 1.0 for r in (ref, got))
        scale = np.nanmax(np.abs(a), initial=0.0) or 1.0
        diff = np.where(np.isnan(a) & np.isnan(b), 0.0, np.abs(b - a))
        diff = np.where(np.isnan(diff), np.inf, diff)  # NaN on one side only
        bad = diff > (0.0 if q == "failed" else rtol * np.abs(a) + atol * scale)
        worst = worst if q == "failed" else max(worst, float(diff.max(initial=0.0)) / scale)
        if not bad.any():
            continue
        hits = np.argwhere(bad.reshape(bad.shape[:3] + (-1,)).any(-1))  # (grid, seed, round)
        g, s, k = hits[np.argmin(hits[:, 2])]
        t = (
            ref.horizon + 1
            if q == "x_final"
            else int(ref.rounds[k])
            if q != "failed"
            else int(min(v for v in (a[g, s, 0], b[g, s, 0]) if v))
        )
        i = tuple(np.unravel_index(np.argmax(bad[g, s, k]), bad.shape[3:]))
        va, vb = a[(g, s, k) + i], b[(g, s, k) + i]
        msg = (
            f"{label}: {q} first exceeds the tolerance "
            f"{'after the last round' if q == 'x_final' else f'at round {t}'}, seed {s}"
            f"{f', coordinate {i[0]}' if i else ''}: {vb:.9g} vs {va:.9g}, difference "
            f"{abs(vb - va):.3g} (rtol {rtol:g}, atol {atol:g} x {scale:.3g}); suspects: "
            f"{', '.join(_declaring(problem, algorithm, flag))}"
        )
        first = first if first is not None and first[0] <= t else (t, msg)
    return worst, "" if first is None else first[1]
