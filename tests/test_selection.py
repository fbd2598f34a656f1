"""The one back-end selector (``jaxbco.selection.select``): what ``sweep``, ``make_run``,
``Result`` and ``plan.before`` (the CLI summary, compare) report, from declarations alone."""

import jax.numpy as jnp
import pytest

import jaxbco
from jaxbco import (
    algorithms,
    backend,
    constraints,
    fused,
    losses,
    plan,
    problems,
    selection,
    sequences,
    sets,
)

ALG = algorithms.RectifiedBCO()


def l1_ellipsoid(d):
    """A linear loss under a fixed ellipsoid on an L1 ball: seeds-minor, not the kernel."""
    return jaxbco.Problem(sets.L1Ball(jnp.zeros(d), 3.0), losses.Linear(),
                          sequences.IIDNormal(jnp.zeros(d), 1.0), constraints.Ellipsoid(),
                          sequences.Fixed((jnp.eye(d), jnp.zeros(d), jnp.asarray(1.0))))


def box_custom(d):
    """The same with a user's g on a box: the vmap back-end."""
    g = constraints.CustomConstraint(lambda x, s: jnp.sum(x * x) - s)
    return jaxbco.Problem(sets.Box(-jnp.ones(d), jnp.ones(d)), losses.Linear(),
                          sequences.IIDNormal(jnp.zeros(d), 1.0), g,
                          sequences.Fixed(jnp.asarray(1.0)))


def test_cpu_takes_the_scan_the_declarations_allow():
    sel = selection.select(problems.make("quadratic-ball", 3), ALG, platform="cpu")
    assert sel == (backend.SEEDS_MINOR, "", None)
    sel = selection.select(box_custom(3), ALG, platform="cpu")
    assert sel.engine == backend.VMAP and "CustomConstraint" in sel.reason and sel.config is None


def test_gpu_takes_the_kernel_where_it_covers_the_run():
    sel = selection.select(problems.make("quadratic-ball", 3), ALG, platform="gpu")
    assert sel.engine == backend.FUSED and sel.reason == "" and not sel.config.interpret
    off = selection.select(problems.make("quadratic-ball", 3), ALG, platform="gpu", kernel=False)
    assert off == (backend.SEEDS_MINOR, "", None)


def test_gpu_says_why_not_the_kernel():
    sel = selection.select(l1_ellipsoid(3), ALG, platform="gpu")
    assert sel.engine == backend.SEEDS_MINOR
    assert sel.reason == "not the fused kernel: L1Ball does not declare kernel = True (the set)"


def test_kernel_true_off_a_gpu_interprets_and_refuses_what_it_cannot_run():
    sel = selection.select(problems.make("quadratic-ball", 3), ALG, platform="cpu", kernel=True)
    assert sel.engine == backend.FUSED and sel.config.interpret
    with pytest.raises(ValueError, match="kernel=True: the fused kernel does not cover"):
        selection.select(l1_ellipsoid(3), ALG, platform="cpu", kernel=True)


def test_plan_reports_the_selection():
    problem = problems.make("quadratic-ball", 3)
    sel = selection.select(problem, ALG, platform="cpu")
    path = plan.before(problem, ALG, 100)
    assert (path.engine, path.engine_reason) == (sel.engine, sel.reason)
    assert isinstance(fused.Config(), type(sel.config)) or sel.config is None
