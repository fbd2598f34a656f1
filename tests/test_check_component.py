"""``jaxbco.check.check_component``: a ``blocks = True`` declaration checked by running the same
code on seeds-minor blocks and per run (``vmap``), and the fused kernel against the blocks."""

import dataclasses
import re

import jax.numpy as jnp
import pytest

from jaxbco import losses, problems
from jaxbco.algorithms import MahdaviPrimalDual, RectifiedBCO
from jaxbco.check import check_component


class MixingQuadratic(losses.Quadratic):
    """A wrong declaration: ``blocks = True``, but the value sums over every axis, so on a
    (d, runs) block it adds up all the runs' losses (right on one run)."""

    blocks = True

    def value(self, x, theta):
        r = x - theta
        return self.scale * jnp.sum(r * r)


class UndeclaredQuadratic(losses.Quadratic):
    """The built-in code under a class that declares nothing: its runs take ``vmap``."""


def _ball(loss=None):
    problem = problems.make("quadratic-ball", 4)
    return problem if loss is None else dataclasses.replace(problem, loss=loss)


def test_a_builtin_algorithm_passes():
    check = check_component(MahdaviPrimalDual, seeds=3, horizon=8, kernel=False)
    assert check.ok and check.compared and not check.kernel
    assert check.mismatch == "" and check.engine_reason == ""
    assert 0 <= check.max_rel_diff < 1e-4  # float32 round-off (measured ~3e-7)
    assert str(check).startswith("OK: the runs on seeds-minor blocks agree")


def test_a_builtin_problem_component_passes_in_float64(x64):
    """A component found in the problem by equality (a fresh copy of its set), float64."""
    check = check_component(_ball().domain, _ball(), seeds=3, horizon=8, kernel=False)
    assert check.ok and check.compared
    assert check.max_rel_diff < 1e-12  # measured ~1e-14


def test_a_wrong_block_declaration_fails_and_is_named():
    problem = _ball(MixingQuadratic())
    check = check_component(problem.loss, problem, seeds=3, horizon=6)
    assert check.compared and not check.ok and not check.kernel  # it does not declare kernel
    assert re.match(
        r"blocks vs per-run: loss first exceeds the tolerance at round 1, seed \d", check.mismatch
    ), check.mismatch
    # the suspects: the user's own class only, not the built-ins that declare blocks too
    assert check.mismatch.endswith("suspects: MixingQuadratic")
    assert check.max_rel_diff > 0.01 and "MISMATCH" in str(check)
    with pytest.raises(ValueError, match=re.escape(check.mismatch)):
        check_component(problem.loss, problem, seeds=3, horizon=6, raise_on_mismatch=True)


class NaNQuadratic(losses.Quadratic):
    """Declares blocks; every value NaN: every run fails on both paths, alike."""

    blocks = True

    def value(self, x, theta):
        return jnp.nan * super().value(x, theta)


def test_every_run_failing_is_not_called_ok():
    """All NaN on both sides agrees bitwise, and says nothing: not OK, and said (issue 57)."""
    problem = _ball(NaNQuadratic())
    check = check_component(problem.loss, problem, seeds=3, horizon=6, kernel=False)
    assert check.compared and check.all_failed and not check.ok
    assert check.mismatch.startswith("every one of the 3 runs went non-finite"), check.mismatch
    assert str(check).startswith("NOT CHECKED: every one of the 3 runs")
    with pytest.raises(ValueError, match="every one of the 3 runs went non-finite"):
        check_component(problem.loss, problem, seeds=3, horizon=6, raise_on_mismatch=True)


def test_an_undeclared_component_is_not_compared():
    problem = _ball(UndeclaredQuadratic())
    check = check_component(problem, seeds=3, horizon=6)
    assert check.ok and not check.compared and check.mismatch == ""
    assert check.engine_reason == "UndeclaredQuadratic does not declare blocks = True (the loss)"
    assert str(check).startswith("Not compared")
    with pytest.raises(
        ValueError,
        match="kernel=True: the fused kernel does not cover this run "
        r"\(UndeclaredQuadratic does not declare blocks",
    ):
        check_component(problem.loss, problem, kernel=True)


def test_a_component_outside_the_problem_is_refused():
    problem = _ball()
    with pytest.raises(
        ValueError,
        match="Quadratic is not .* one of the given problem's "
        "components .*pass the problem it belongs to",
    ):
        check_component(losses.Quadratic(2.0), problem)
    with pytest.raises(ValueError, match="one of no problem's components .*pass the problem"):
        check_component(problem.loss)
    with pytest.raises(ValueError, match="given twice"):
        check_component(RectifiedBCO(), algorithm=MahdaviPrimalDual())


def test_the_kernel_is_compared_with_the_blocks():
    """Interpreted on the CPU (Pallas): about 10 s for these 4 seeds x 8 rounds."""
    check = check_component(RectifiedBCO(), seeds=4, horizon=8, kernel=True)
    assert check.ok and check.compared and check.kernel, check.mismatch
    assert str(check).startswith("OK") and "fused kernel" in str(check)
