"""The one back-end selector (``jaxbco.backends.select``): what ``sweep``, ``make_run``,
``Result`` and ``plan.before`` (the CLI summary, compare) report, from declarations alone."""

import jax.numpy as jnp
import pytest

import jaxbco
from jaxbco import (
    algorithms,
    backends,
    constraints,
    fused,
    losses,
    plan,
    problems,
    sequences,
    sets,
)

ALG = algorithms.RectifiedBCO()


def l1_ellipsoid(d):
    """A linear loss under a fixed ellipsoid on an L1 ball: seeds-minor, not the kernel."""
    return jaxbco.Problem(
        sets.L1Ball(jnp.zeros(d), 3.0),
        losses.Linear(),
        sequences.IIDNormal(jnp.zeros(d), 1.0),
        constraints.Ellipsoid(),
        sequences.Fixed((jnp.eye(d), jnp.zeros(d), jnp.asarray(1.0))),
    )


def box_custom(d, loss=None):
    """The same with a user's g on a box (seeds-minor blocks: g under vmap over the runs);
    with a user's ``loss`` (``CustomLoss``: per run), the vmap back-end."""
    g = constraints.CustomConstraint(lambda x, s: jnp.sum(x * x) - s)
    return jaxbco.Problem(
        sets.Box(-jnp.ones(d), jnp.ones(d)),
        loss or losses.Linear(),
        sequences.IIDNormal(jnp.zeros(d), 1.0),
        g,
        sequences.Fixed(jnp.asarray(1.0)),
    )


def custom_loss():
    return losses.CustomLoss(lambda x, theta: jnp.sum((x - theta) ** 4))


def test_cpu_takes_the_scan_the_declarations_allow():
    sel = backends.select(problems.make("quadratic-ball", 3), ALG, platform="cpu")
    assert (sel.engine, sel.reason, sel.config) == (backends.SEEDS_MINOR, "", None)
    assert sel.backend == sel.scan == backends.SeedsMinorScan()
    sel = backends.select(box_custom(3), ALG, platform="cpu")
    assert (sel.engine, sel.reason) == (backends.SEEDS_MINOR, "")
    sel = backends.select(box_custom(3, custom_loss()), ALG, platform="cpu")
    assert sel.engine == backends.VMAP and "CustomLoss" in sel.reason and sel.config is None


def test_gpu_takes_the_kernel_where_it_covers_the_run():
    sel = backends.select(problems.make("quadratic-ball", 3), ALG, platform="gpu")
    assert sel.engine == backends.FUSED and sel.reason == "" and not sel.config.interpret
    assert sel.scan == backends.SeedsMinorScan()  # under transformations, or if it fails
    off = backends.select(problems.make("quadratic-ball", 3), ALG, platform="gpu", kernel=False)
    assert (off.engine, off.reason, off.config) == (backends.SEEDS_MINOR, "", None)


def test_gpu_says_why_not_the_kernel():
    sel = backends.select(l1_ellipsoid(3), ALG, platform="gpu")
    assert sel.engine == backends.SEEDS_MINOR
    assert sel.reason == "not the fused kernel: L1Ball does not declare kernel = True (the set)"


def test_kernel_true_off_a_gpu_interprets_and_refuses_what_it_cannot_run():
    sel = backends.select(problems.make("quadratic-ball", 3), ALG, platform="cpu", kernel=True)
    assert sel.engine == backends.FUSED and sel.config.interpret
    with pytest.raises(ValueError, match="kernel=True: the fused kernel does not cover"):
        backends.select(l1_ellipsoid(3), ALG, platform="cpu", kernel=True)


def test_plan_reports_the_selection():
    problem = problems.make("quadratic-ball", 3)
    sel = backends.select(problem, ALG, platform="cpu")
    path = plan.before(problem, ALG, 100)
    assert (path.engine, path.engine_reason) == (sel.engine, sel.reason)


def test_every_backend_names_what_keeps_a_run_off():
    custom = box_custom(3, custom_loss())
    assert backends.VmapScan().blocker(custom, ALG) is None  # any run
    assert "CustomLoss does not declare blocks" in backends.SeedsMinorScan().blocker(custom, ALG)
    assert backends.SeedsMinorScan().blocker(box_custom(3), ALG) is None
    assert "CustomConstraint does not declare kernel" in backends.FusedKernel().blocker(
        box_custom(3), ALG
    )
    assert backends.FusedKernel(fused.Config(block=64)).config.block == 64
