"""Light programs (``AbstractAlgorithm.light``): the runners compile the algorithm without
what rarely runs (Algorithm 1's certificate refinement) and run the algorithm itself only where
a prox certificate fails; either way every number is the one the algorithm itself gives."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbco import problems, simulate
from jaxbco.algorithms import RectifiedBCO
from jaxbco.solvers import gap

T, SEEDS = 24, 2
CK = np.asarray([8, T])


class _Plain(RectifiedBCO):
    """Algorithm 1 without a light version, as a subclass (the vmap back-end, like
    ``_Failing``)."""

    def light(self):
        return self


class _Failing(RectifiedBCO):
    """Algorithm 1 whose light version reports every run's certificate failed: the runners
    must run the algorithm itself."""

    def prox_certificate(self, state):
        worst = super().prox_certificate(state)
        return worst if self.refine_certificate else jnp.full_like(worst, jnp.inf)


@pytest.fixture(scope="module")
def problem():
    """Polyhedral rows on a ball (the dual Newton): the prox most sensitive to its program."""
    return problems.make("hutchinson-toy")


def test_light_drops_only_the_refinement():
    alg = RectifiedBCO(certify_every=4)
    light = alg.light()
    assert light.refine_certificate is False and light.certify_every == 4
    assert light.light() is light
    assert RectifiedBCO(refine_certificate=False).light().refine_certificate is False
    assert gap.needs_refinement(np.asarray([[1e-7, np.nan]]), jnp.float32) is False
    assert gap.needs_refinement(np.asarray([[1e-7, np.inf]]), jnp.float32) is True


def test_make_run_light_call_equals_the_full_program_bitwise(problem):
    """A concrete call (the light program, its certificates passing) equals the algorithm's
    own program (what ``jax.jit`` of ``fn`` compiles): every curve, x* and x_T bitwise."""
    fn = simulate.make_run(problem, T, checkpoints=CK)
    hyper = RectifiedBCO().default_hyper(problem, T)
    key, ids = jax.random.key(1), jnp.arange(SEEDS)
    light = fn(key, hyper, ids)
    full = jax.jit(fn, compiler_options=fn.compiler_options or None)(key, hyper, ids)
    assert not gap.needs_refinement(light["prox_certificate"], jnp.float32)
    for k in full:
        if k != "prox_certificate":
            np.testing.assert_array_equal(np.asarray(light[k]), np.asarray(full[k]), err_msg=k)
    # the certificate, a ratio of round-off-sized differences, to its own round-off: three
    # orders below the tolerance that decides ``prox_ok``
    np.testing.assert_allclose(
        light["prox_certificate"],
        full["prox_certificate"],
        rtol=0,
        atol=1e-3 * gap.tolerance(jnp.float32),
    )


def test_a_failing_light_certificate_runs_the_algorithm_itself():
    """Where the light pass's certificate fails, ``sweep`` and ``make_run`` run again with the
    algorithm itself: the same numbers as an algorithm without a light version."""
    problem = problems.make("quadratic-ball", 3)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        got = simulate.sweep(problem, T, seeds=SEEDS, algorithm=_Failing(), checkpoints=CK)
        want = simulate.sweep(problem, T, seeds=SEEDS, algorithm=_Plain(), checkpoints=CK)
    # the light pass's failing certificates are never reported
    assert not [w for w in record if issubclass(w.category, gap.ProxWarning)]
    assert np.all(np.isfinite(got.prox_certificate)) and got.prox_ok.all()
    for m in simulate.METRICS + ("x_star", "x_final", "prox_certificate"):
        np.testing.assert_array_equal(getattr(got, m), getattr(want, m), err_msg=m)
    hyper = RectifiedBCO().default_hyper(problem, T)
    key, ids = jax.random.key(0), jnp.arange(SEEDS)
    got_fn = simulate.make_run(problem, T, algorithm=_Failing(), checkpoints=CK)(key, hyper, ids)
    want_fn = simulate.make_run(problem, T, algorithm=_Plain(), checkpoints=CK)(key, hyper, ids)
    for k in want_fn:
        np.testing.assert_array_equal(np.asarray(got_fn[k]), np.asarray(want_fn[k]), err_msg=k)
