"""The fused round-loop kernel (``jaxbco.fused``) against the scan engine, on the CPU through
Pallas' interpreter (``kernel=True``), and its Triton lowering (no GPU needed to lower)."""

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbco
from jaxbco import constraints, fused, losses, problems, sequences, sets, simulate
from jaxbco.algorithms import RectifiedBCO
from jaxbco.fused import launcher
from jaxbco.hyper import theorem_defaults
from jaxbco.problem import Problem

T = 40
SEEDS = 37  # odd: padded to the seed lanes and to the kernel's blocks
CHECKPOINTS = np.array([1, 2, 7, 23, 39, 40])
CURVES = ("regret", "hard_violation", "soft_violation", "lam", "loss", "x_final")


def _linear_uniform(dim=3):
    """Linear losses, uniform data, an off-centre ball of radius 2, g = <a, x> - 0.2 - 0.1."""
    a = jnp.linspace(0.5, 1.0, dim)
    return Problem(
        sets.L2Ball(jnp.full(dim, 0.3), 2.0),
        losses.Linear(),
        sequences.IIDUniform(-jnp.ones(dim), jnp.linspace(0.5, 2.0, dim)),
        constraints.Shifted(constraints.Linear()),
        sequences.Fixed(((a, jnp.asarray(0.2)), jnp.asarray(0.1))),
    )


def _fixed_theta(dim=16):
    """Fixed loss data, d = 16 (a power of two: no padded coordinates), quadratic scale 0.7."""
    p = problems.make("quadratic-ball", dim)
    return Problem(
        p.domain,
        losses.Quadratic(0.7),
        sequences.Fixed(0.9 * p.loss_data.mean),
        p.constraint,
        p.constraint_data,
    )


def _box_time_varying(dim=6):
    """An asymmetric box, quadratic losses, g_t = <a, x> - 0.2 - s_t with s_t ~ U[0, 0.3]
    (the 1-D dual's safeguarded Newton inside the kernel)."""
    a = jnp.linspace(1.0, 0.2, dim)
    return Problem(
        sets.Box(-jnp.ones(dim), jnp.linspace(0.5, 1.5, dim)),
        losses.Quadratic(),
        sequences.IIDNormal(jnp.full(dim, 0.8), 0.2),
        constraints.Shifted(constraints.Linear()),
        sequences.Slackened((a, jnp.asarray(0.2)), 0.0, 0.3),
    )


PROBLEMS = {
    "box-time-varying": _box_time_varying,
    "simplex-quadratic": lambda: problems.make("simplex-quadratic", 6),
    "quadratic-ball": lambda: problems.make("quadratic-ball"),
    "strongly-convex-time-varying": lambda: problems.make("strongly-convex-time-varying", 5),
    "linear-uniform-shifted": _linear_uniform,
    "fixed-theta-d16": _fixed_theta,
    "logistic-ball": lambda: problems.make("logistic-ball", 5),  # two balls, classification data
}


def _grid(problem, **kw):
    """Two settings: the theorem's defaults and a second one (scales changed)."""
    one = theorem_defaults(problem.domain, T, sigma=2.0 if problem.strongly_convex else 1.0, **kw)
    two = theorem_defaults(problem.domain, T, c=0.6, alpha_scale=1.5, gamma_scale=0.5)
    return jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), one, two)


@functools.cache
def _pair(name, seeds=SEEDS, chunk=None):
    problem = PROBLEMS[name]()
    kw = dict(
        seeds=seeds,
        key=7,
        checkpoints=CHECKPOINTS,
        chunk=chunk,
        algorithm=RectifiedBCO(strongly_convex=problem.strongly_convex),
    )
    hyper = _grid(problem)
    return (
        simulate.sweep(problem, T, hyper, kernel=False, **kw),
        simulate.sweep(problem, T, hyper, kernel=True, **kw),
    )


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_kernel_agrees_with_the_scan_engine(name):
    scan, kern = _pair(name)
    assert (scan.engine, kern.engine) == ("seeds-minor", "fused kernel")
    assert kern.regret.shape == (2, SEEDS, CHECKPOINTS.size)
    for m in CURVES:
        a, b = getattr(scan, m), getattr(kern, m)
        # float32 round-off over T rounds (different summation orders), nothing more
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-4 * np.max(np.abs(a)), err_msg=m)
    np.testing.assert_allclose(kern.x_star, scan.x_star, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(kern.failed, scan.failed)
    assert not kern.failed.any()
    assert np.all(np.diff(kern.hard_violation, axis=-1) >= 0)  # a running sum of [g]_+


def test_kernel_chunks_and_batches_change_nothing():
    _, whole = _pair("quadratic-ball")
    _, chunked = _pair("quadratic-ball", chunk=20)  # chunks 1-20, 21-40: checkpoints in each
    for m in CURVES:
        np.testing.assert_array_equal(getattr(chunked, m), getattr(whole, m), err_msg=m)
    ids = np.array([3, 11, 20])
    problem = PROBLEMS["quadratic-ball"]()
    alone = simulate.sweep(
        problem, T, _grid(problem), seeds=ids, key=7, checkpoints=CHECKPOINTS, kernel=True
    )
    for m in CURVES:
        np.testing.assert_array_equal(getattr(alone, m), getattr(whole, m)[:, ids], err_msg=m)


def test_failed_runs_are_flagged_and_the_others_kept():
    problem = PROBLEMS["quadratic-ball"]()
    hyper = _grid(problem, gamma_scale=1e38)  # setting 0: lambda overflows at the first violation
    kw = dict(seeds=SEEDS, key=7, checkpoints=CHECKPOINTS)
    scan = simulate.sweep(problem, T, hyper, kernel=False, **kw)
    kern = simulate.sweep(problem, T, hyper, kernel=True, **kw)
    assert kern.failed[0].all() and not kern.failed[1].any()
    np.testing.assert_array_equal(kern.failed_round, scan.failed_round)
    np.testing.assert_array_equal(np.isnan(kern.regret), np.isnan(scan.regret))
    assert np.isnan(kern.regret[0, :, -1]).all()
    np.testing.assert_allclose(
        kern.regret[1], scan.regret[1], rtol=1e-4, atol=1e-4 * np.max(np.abs(scan.regret[1]))
    )


def test_a_kernel_that_fails_to_compile_falls_back_with_one_warning(monkeypatch):
    def broken(*args, **kwargs):
        raise NotImplementedError("forced: no Triton lowering for this primitive")

    monkeypatch.setattr(launcher, "pl_call", broken)
    problem = PROBLEMS["quadratic-ball"]()
    kw = dict(seeds=5, key=2, checkpoints=[1, 13])
    with pytest.warns(fused.KernelWarning, match="forced: no Triton lowering") as record:
        res = simulate.sweep(problem, 13, kernel=True, **kw)
    assert len(record) == 1 and res.engine == "seeds-minor"
    assert res.engine_reason == "the fused kernel failed to compile (KernelWarning)"
    np.testing.assert_array_equal(
        res.regret, simulate.sweep(problem, 13, kernel=False, **kw).regret
    )
    fn = simulate.make_run(problem, 13, checkpoints=[13], kernel=True)
    hyper = theorem_defaults(problem.domain, 13)
    with pytest.warns(fused.KernelWarning):
        out = fn(jax.random.key(2), hyper, jnp.arange(5))
    assert np.isfinite(out["regret"]).all()


def test_kernel_in_float64_agrees_to_round_off(x64):
    problem = PROBLEMS["box-time-varying"]()
    kw = dict(seeds=19, key=3, checkpoints=[1, 5, 30], dtype="float64")
    scan = simulate.sweep(problem, 30, kernel=False, **kw)
    kern = simulate.sweep(problem, 30, kernel=True, **kw)
    assert kern.engine == "fused kernel" and kern.regret.dtype == np.float64
    for m in CURVES:
        a, b = getattr(scan, m), getattr(kern, m)
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10 * np.max(np.abs(a)), err_msg=m)


@pytest.mark.parametrize(
    "name, dtype",
    [
        ("quadratic-ball", jnp.float32),
        ("strongly-convex-time-varying", jnp.float32),
        ("logistic-ball", jnp.float32),
        ("box-time-varying", jnp.float32),
        ("simplex-quadratic", jnp.float32),
        ("quadratic-ball", jnp.float64),
    ],
)
def test_kernel_lowers_to_triton(name, dtype):
    """The Triton lowering (for the 'cuda' platform, on this machine) accepts the kernel."""
    text = fused.lower_for_cuda(PROBLEMS[name](), dtype=dtype).as_text()
    assert "__gpu$xla.gpu.triton" in text and "jaxbco_rounds" in text


def _kernel_equals_scan(problem, algorithm, horizon, **kw):
    """The interpreted kernel's curves equal the scan engine's to float32 round-off."""
    scan = simulate.sweep(problem, horizon, kernel=False, algorithm=algorithm, **kw)
    kern = simulate.sweep(problem, horizon, kernel=True, algorithm=algorithm, **kw)
    assert kern.engine == "fused kernel" and not kern.failed.any()
    for m in CURVES:
        a, b = getattr(scan, m), getattr(kern, m)
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-4 * np.max(np.abs(a)), err_msg=m)


BASELINES = [n for n in jaxbco.algorithms.ALGORITHMS if n != "rectified-bco"]


@pytest.mark.parametrize("name", BASELINES)
def test_baselines_run_through_the_kernel(name):
    """Every registered baseline declares the kernel and its kernel lowers for a GPU;
    interpreted, it agrees with the scan engine (a two-balls problem, logistic data: each
    baseline's projection and multipliers; the X-only variants differ from their parents only
    by the plain projection onto (1 - xi) X, which Algorithm 1's runs check)."""
    problem = problems.make("logistic-ball", 3)
    algorithm = jaxbco.algorithms.ALGORITHMS[name]()
    assert fused.applies(problem, algorithm)
    text = fused.lower_for_cuda(problem, algorithm=algorithm, seeds=16, horizon=8).as_text()
    assert "__gpu$xla.gpu.triton" in text
    if name.endswith("-xonly"):
        return
    _kernel_equals_scan(problem, algorithm, 16, seeds=5, key=4, checkpoints=[1, 9, 16])


def test_the_subgradient_solver_runs_through_the_kernel():
    """Algorithm 1 with ``Subgradient(20)`` (the throughput benchmark's second solver)."""
    problem = problems.make("quadratic-ball", 5)
    algorithm = RectifiedBCO(solver=jaxbco.solvers.Subgradient(20))
    _kernel_equals_scan(problem, algorithm, 20, seeds=9, key=3, checkpoints=[1, 5, 20])
    assert "__gpu$xla.gpu.triton" in fused.lower_for_cuda(problem, algorithm=algorithm).as_text()


def test_who_runs_the_rounds():
    quad, box = problems.make("quadratic-ball"), problems.make("switching-box")  # 2 halfspaces
    alg = RectifiedBCO()
    assert fused.applies(quad, alg) and not fused.applies(box, alg)
    assert fused.applies(_box_time_varying(), alg)
    assert fused.applies(problems.make("simplex-quadratic"), alg)
    assert fused.applies(problems.make("logistic-ball"), alg)  # two balls, classification data
    assert fused.blocker(box, alg) == "Switching does not declare kernel = True (the loss data)"
    assert "SmoothDual" in fused.blocker(quad, RectifiedBCO(solver=jaxbco.solvers.SmoothDual()))
    assert fused.applies(quad, alg, dtype=jnp.float64)
    assert not fused.applies(quad, alg, dtype=jnp.float16)
    assert not fused.applies(quad, alg, record_decisions=True)
    assert fused.applies(quad, RectifiedBCO(solver=jaxbco.solvers.Subgradient()))
    assert fused.choose(None, "gpu", quad, alg) == fused.Config()
    assert fused.choose(None, "cpu", quad, alg) is None
    assert fused.choose(None, "gpu", box, alg) is None
    assert fused.choose(False, "gpu", quad, alg) is None
    assert fused.choose(True, "cpu", quad, alg).interpret
    assert fused.choose(fused.Config(block=128), "gpu", quad, alg).block == 128
    with pytest.raises(
        ValueError,
        match="kernel=True: the fused kernel does not cover this run "
        r"\(Switching does not declare kernel = True \(the loss data\); see",
    ):
        fused.choose(True, "cpu", box, alg)


@pytest.mark.parametrize(
    "value, error, match",
    [
        (
            "yes",
            TypeError,
            "kernel must be None .automatic., True, False or a jaxbco.fused.Config; got str 'yes'",
        ),
        (
            fused.Config(block=24),
            ValueError,
            "kernel Config block must be a power of two >= 1; got int 24",
        ),
        (
            fused.Config(warps=0),
            ValueError,
            "kernel Config warps must be a power of two >= 1; got int 0",
        ),
    ],
)
def test_bad_kernel_arguments_are_named(value, error, match):
    with pytest.raises(error, match=match):
        simulate.sweep(problems.make("quadratic-ball"), 10, seeds=2, kernel=value)
    with pytest.raises(error, match=match):
        simulate.make_run(problems.make("quadratic-ball"), 10, kernel=value)


def test_differentiation_keeps_the_scan_engine():
    """kernel=None inside jax.grad traces the scan engine: derivatives through a whole run."""
    problem = problems.make("quadratic-ball", 3)
    fn = simulate.make_run(problem, 12, checkpoints=[12])
    ids = jnp.arange(4)

    def mean_regret(c):
        return fn(jax.random.key(0), theorem_defaults(problem.domain, 12, c=c), ids)[
            "regret"
        ].mean()

    with warnings.catch_warnings():
        warnings.simplefilter("error", fused.KernelWarning)
        grad = jax.grad(mean_regret)(0.6)
    assert np.isfinite(grad) and grad != 0.0


def test_the_plan_says_why_not_the_kernel_on_a_gpu(monkeypatch):
    """On a GPU, a run the kernel does not cover names the component that keeps it off."""
    from jaxbco import plan

    monkeypatch.setattr(plan.jax, "default_backend", lambda: "gpu")
    box, quad = problems.make("switching-box"), problems.make("quadratic-ball")
    path = plan.before(box, RectifiedBCO(), 10)
    assert path.engine == "seeds-minor"
    assert path.engine_reason == (
        "not the fused kernel: Switching does not declare kernel = True (the loss data)"
    )
    assert plan.before(quad, RectifiedBCO(), 10).engine == "fused kernel"
    assert plan.before(box, RectifiedBCO(), 10, kernel=False).engine_reason == ""
