"""The comparator family: one selector decides x*'s method, and what a run reports is the method
whose solve ran.  For every named problem and every own-problem example (the fingerprint's and
the benchmarks'), the engine's comparator steps (``engine.start``, ``engine.finish_comparator``,
and ``prepare`` for a seed-independent x* solved on the host) are traced with every method's
entry points recording what they solve; the names recorded must be the reported
``plan.describe(...).comparator`` (``Result.comparator_method``), and the table's every row
must be reached.  Traced, not compiled: shapes only.  Also: an ``Optimum`` handed to a run
gives the same numbers as solving it there, and one that belongs to another run is refused.
"""

import contextlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbco
from benchmarks import fingerprint
from benchmarks import problems as bench
from jaxbco import comparator, engine, plan, problems, sets
from jaxbco import constraints as C
from jaxbco import losses as L
from jaxbco import sequences as Seq
from jaxbco._src.shaping import cast, grid
from jaxbco.runner import whole_run

T = 100
D = 4
CLASSES = [
    comparator.MeanProjection,
    comparator.ProximalPoint,
    comparator.BarrierRows,
    comparator.BarrierLP,
    comparator.BarrierEveryRound,
    comparator.ProjectedNewton,
    comparator.FISTA,
    comparator.SmoothedAbsolute,
    comparator.CRPInteriorPoint,
]


@contextlib.contextmanager
def _recording(monkeypatch):
    """Every method's solve / solve_batch / from_sums / fixed records its method's name."""
    ran = []
    for cls in CLASSES:
        for entry in ("solve", "solve_batch", "from_sums", "fixed"):
            original = getattr(cls, entry)

            def wrapped(self, *args, _original=original, **kwargs):
                ran.append(self.name)
                return _original(self, *args, **kwargs)

            monkeypatch.setattr(cls, entry, wrapped)
    yield ran


def _own_extra():
    """Rows no named or benchmark problem reaches: many replayed rows (``BarrierRows``), a
    rotating ellipsoid (``BarrierEveryRound``), a float64 linear loss on an ellipsoid
    (``BarrierLP``)."""
    rng = np.random.default_rng(0)
    box = sets.Box(-jnp.ones(D), jnp.ones(D))
    A = rng.normal(size=(T, D)) / 2.0
    rows = jaxbco.Problem(
        box, L.Linear(), Seq.Fixed(jnp.full(D, 0.8)), C.Linear(), Seq.Replay((A, np.full(T, 0.5)))
    )
    P = np.stack([np.diag(rng.uniform(1.0, 4.0, D)) for _ in range(T)])
    rotating = jaxbco.Problem(
        box,
        L.Quadratic(),
        Seq.IIDNormal(jnp.full(D, 0.5), 0.2),
        C.Ellipsoid(),
        Seq.Replay((P, np.zeros((T, D)), np.full(T, 0.5))),
    )
    yield "many-rows", rows, "float32"
    yield "rotating-ellipsoid", rotating, "float32"
    yield "box-ellipsoid-float64", bench.box_ellipsoid(D), "float64"


CASES = (
    [(n, None, "float32") for n in problems.PROBLEMS]
    + [(n, p, "float32") for n, p in fingerprint._own()]
    + [(n, fn(D), "float32") for n, fn in bench.CUSTOM.items()]
    + list(_own_extra())
)
REACHED = {}


def _trace(problem, dtype):
    """What the engine's comparator steps solve for ``problem``, traced (shapes only)."""
    setup = whole_run.prepare(problem, T, None, [T], dtype, True)
    alg = setup.algorithm
    hyper = grid(cast(alg.default_hyper(setup.problem, T), dtype))
    ids = jnp.arange(8, dtype=jnp.uint32)
    carry, xs = jax.eval_shape(
        lambda: engine.start(
            setup.problem, alg, hyper, jax.random.key(0), ids, T, 1, True, False, setup.x_star_given
        )
    )
    cps = jnp.asarray([T])
    jax.eval_shape(
        lambda c, x: engine.finish_comparator(setup.problem, c.bufs, c.sums, c.sbuf, x, cps, T),
        carry,
        xs,
    )
    return setup


@pytest.mark.parametrize("name, problem, dtype", CASES, ids=[c[0] for c in CASES])
def test_reported_method_is_the_one_that_ran(monkeypatch, name, problem, dtype):
    problem = problems.make(name, horizon=T) if problem is None else problem
    with jax.enable_x64(dtype == "float64"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _recording(monkeypatch) as ran:
            setup = _trace(problem, dtype)
        method = comparator.select(setup.problem, T)
        reported = plan.describe(problem, setup.algorithm, T, dtype=dtype).comparator
    assert method is not None, name
    assert reported == method.name
    if isinstance(method, comparator.TwoPaths):  # both paths run, the first as declared
        assert ran and ran[0] == method.first.name, (name, ran)
        assert set(ran) <= {method.first.name, method.second.name}, (name, ran)
        REACHED[name] = {type(method), type(method.first), type(method.second)}
    else:
        assert ran and set(ran) == {method.name}, (name, ran, method.name)
        REACHED[name] = {type(method)}


def test_every_row_of_the_table_is_reached():
    """Runs after the parametrised cases (same file, in order): each final method was selected
    for some problem above."""
    if len(REACHED) < len(CASES):
        pytest.skip("needs the whole file (the cases above fill REACHED)")
    reached = set().union(*REACHED.values())
    assert set(CLASSES) | {comparator.TwoPaths} <= reached, set(CLASSES) - reached


def test_a_linear_loss_on_a_curved_constraint_reports_its_dtype():
    """The same problem is solved (and reported) by proximal point steps in float32 and by the
    log-barrier method in float64: the name follows the dtype."""
    problem = bench.box_ellipsoid(D)
    assert comparator.comparator_method(problem, T, "float32") == comparator.ProximalPoint.name
    assert comparator.comparator_method(problem, T, "float64") == comparator.BarrierLP.name


@pytest.mark.parametrize("name", ["logistic-ball", "quadratic-ball"])
def test_optimum_handed_on_changes_nothing(name):
    """x* handed to a second run (``Result.optimum``) gives bitwise the numbers of solving it
    there, with its certificate; one of other seeds, key, horizon or problem is refused naming
    the field."""
    problem = problems.make(name, dim=D)
    run = lambda **kw: jaxbco.sweep(problem, T, seeds=5, checkpoints=[7, T], **kw)
    first = run()
    again = run(optimum=first.optimum)
    for field in ("regret", "hard_violation", "x_star", "x_final", "x_star_certificate"):
        np.testing.assert_array_equal(getattr(again, field), getattr(first, field))
    assert again.comparator_method == first.comparator_method == first.optimum.method
    for kw, field in [(dict(seeds=4), "seeds"), (dict(key=3), "key")]:
        with pytest.raises(ValueError, match=f"optimum does not belong to this run \\({field}"):
            jaxbco.sweep(
                problem, T, checkpoints=[7, T], optimum=first.optimum, **{"seeds": 5, **kw}
            )
    with pytest.raises(ValueError, match="\\(horizon"):
        jaxbco.sweep(problem, T + 1, seeds=5, checkpoints=[7], optimum=first.optimum)
    other = problems.make(name, dim=D + 1)
    with pytest.raises(ValueError, match="\\(problem"):
        jaxbco.sweep(other, T, seeds=5, checkpoints=[7, T], optimum=first.optimum)
    with pytest.raises(ValueError, match="comparator=False"):
        run(optimum=first.optimum, comparator=False)
