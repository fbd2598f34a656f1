"""A researcher's own algorithm and problem, first-class (issue 38): one registry record per
algorithm and per problem, read by every command; ``module:Name`` specs on every command
(tests/own_plugin.py stands for a user's package); the public toolkit; figures' colours."""

import ast
import importlib.metadata
import json
import os
import pathlib
import re
import subprocess
import sys

import jax
import numpy as np
import pytest

from jaxbco import compare, problems, simulate
from jaxbco._src import specs
from jaxbco.algorithms import ALGORITHMS, MahdaviPrimalDual, RectifiedBCO, registry
from jaxbco.cli import main
from jaxbco.compare.theory import LITERATURE
from jaxbco.plotting.style import PALETTE, assign
from jaxbco.problems import registry as problem_registry

ROOT = pathlib.Path(__file__).resolve().parents[1]
HERE = pathlib.Path(__file__).resolve().parent
NC = "--no-compile-cache"
BUILT_IN = tuple(ALGORITHMS)  # at import: the package's own records


def _call(argv):
    try:
        return main(list(argv) + [NC])
    except SystemExit as exc:
        return exc.code


# --- the registry ----------------------------------------------------------------------------


def test_every_built_in_has_one_record_read_by_the_tables():
    records = registry.records()
    assert [r.name for r in records] == list(ALGORITHMS) == list(BUILT_IN)
    assert registry.reference().name == "rectified-bco"
    for r in records:
        assert r.cls is ALGORITHMS[r.name] and r.colour is not None and "regret" in r.exponents
        assert LITERATURE[r.name] == (r.regret_order, r.violation_order)
    assert dict(LITERATURE).keys() == set(ALGORITHMS)
    assert registry.get("flaxman-bgd").label == "flaxman-bgd (g known in advance)"
    assert registry.get("agarwal-2pt-xonly").xonly and not registry.get("agarwal-2pt").xonly
    assert registry.get(MahdaviPrimalDual).name == "mahdavi-pd"  # a class finds its record
    configured = MahdaviPrimalDual(per_constraint=False)  # an instance: its class's record,
    record = registry.get(configured)  # building that instance, the registry unchanged
    assert record.name == "mahdavi-pd" and record.build(None) is configured
    assert registry.get("mahdavi-pd").factory is MahdaviPrimalDual and list(ALGORITHMS) == list(
        BUILT_IN
    )


def test_unknown_names_and_bad_specs_are_one_line():
    cases = [
        ("nope", "unknown algorithm 'nope'; choose one of: rectified-bco, flaxman-bgd"),
        ("nomodule_xyz:A", "algorithm 'nomodule_xyz:A': no module named 'nomodule_xyz'"),
        ("own_plugin:Missing", "module own_plugin has no attribute 'Missing'"),
        ("own_plugin:NOT_A_PROBLEM", "is neither an AbstractAlgorithm class or instance"),
        ("own_plugin:OwnHyper", "OwnHyper is not a subclass of"),
    ]
    for spec, fragment in cases:
        with pytest.raises(ValueError) as err:
            registry.get(spec)
        assert fragment in str(err.value) and "\n" not in str(err.value), str(err.value)
    for spec, fragment in [
        ("own_plugin:NOT_A_PROBLEM", "must be a jaxbco.Problem or a function"),
        ("own_plugin:FIXED", "is a fixed Problem of dimension 2"),
        ("nope", "unknown problem 'nope'"),
    ]:
        with pytest.raises(ValueError, match=re.escape(fragment)):
            problems.make(spec, dim=3)


def test_register_refuses_unaddressable_names_and_replacing_keeps_the_record():
    """Issue 57: names with ',' or ':' were registered although no --algorithms list can
    name them; replacing rectified-bco lost theorems=True (a comparison then raised a bare
    StopIteration)."""
    for bad in ("a,b", "mine:v2"):
        with pytest.raises(ValueError, match=re.escape(f"algorithm name {bad!r} cannot be named")):
            registry.register(bad, MahdaviPrimalDual)
        assert bad not in registry.names()
    with pytest.raises(ValueError, match="colour 'notacolour' is not a colour matplotlib knows"):
        registry.register("bad-colour", MahdaviPrimalDual, colour="notacolour")
    assert "bad-colour" not in registry.names()
    before = registry.get("rectified-bco")

    class Variant(RectifiedBCO):
        pass

    try:
        registry.register("rectified-bco", Variant, replace=True)
        now = registry.get("rectified-bco")
        assert now.factory is Variant and now.theorems and now.colour == before.colour
        assert registry.reference() is now
    finally:
        registry.register("rectified-bco", before.factory, replace=True)
    assert registry.get("rectified-bco") == before


def test_a_class_or_builder_that_fails_to_build_is_the_users_one_line():
    """A spec whose class needs arguments, is abstract, or whose factory or builder raises:
    one line naming the spec and the cause (issue 57: "internal error ... please report")."""
    problem = problems.make("quadratic-ball", 3)
    cases = [
        ("own_plugin:NeedsArg", "a class must build with no arguments): TypeError"),
        ("jaxbco.algorithms:AbstractAlgorithm", "a class must build with no arguments): TypeError"),
        ("own_plugin:failing_factory", "RuntimeError: no algorithm today"),
    ]
    for spec, fragment in cases:
        with pytest.raises(ValueError) as err:
            registry.get(spec).build(problem)
        text = str(err.value)
        assert text.startswith(f"algorithm {spec!r}: building it failed") and fragment in text
        assert "\n" not in text, text
    with pytest.raises(ValueError, match=re.escape("its builder raised KeyError: 'missing")):
        problems.make("own_plugin:failing_builder")


def test_an_own_module_registers_by_import_and_a_spec_names_it():
    record = registry.get("own_plugin:OwnDual")  # imports the module: its @register ran
    assert record.name == "own-dual" and record.label == "own dual (Mahdavi et al. 2012)"
    assert LITERATURE["own-dual"] == ("T^(1/2)", "soft T^(3/4)")
    assert registry.get("own-dual") is record
    plain = registry.get("own_plugin:Unregistered")  # not registered: named by its spec
    assert plain.name == "own_plugin:Unregistered" and plain.regret_order == "?"
    with pytest.raises(ValueError, match="already registered"):
        registry.register("own-dual", MahdaviPrimalDual)


def test_entry_points_publish_names(monkeypatch):
    ep = importlib.metadata.EntryPoint(
        name="ep-dual", value="own_plugin:Unregistered", group="jaxbco.algorithms"
    )
    pp = importlib.metadata.EntryPoint(
        name="ep-box", value="own_plugin:box_budget", group="jaxbco.problems"
    )
    monkeypatch.setattr(
        specs,
        "entry_points",
        lambda group: {"jaxbco.algorithms": {"ep-dual": ep}, "jaxbco.problems": {"ep-box": pp}}[
            group
        ],
    )
    monkeypatch.setattr(registry, "_LOADED_ENTRY_POINTS", False)
    monkeypatch.setattr(problem_registry, "_LOADED_ENTRY_POINTS", False)
    assert "ep-dual" in registry.names() and registry.get("ep-dual").cls.__name__ == "Unregistered"
    assert "ep-box" in problems.names() and problems.make("ep-box", dim=5).dim == 5


def test_the_toolkit_algorithm_is_the_published_rule():
    """OwnDual, written with the public toolkit only, is Mahdavi et al.'s rule with one
    multiplier: on quadratic-ball (one constraint) it equals the built-in mahdavi-pd."""
    own = registry.get("own_plugin:OwnDual").build(problems.make("quadratic-ball", 4))
    problem = problems.make("quadratic-ball", 4)
    kw = dict(seeds=4, checkpoints=np.asarray([1, 10, 40]), progress=False)
    a = simulate.sweep(problem, 40, own.default_hyper(problem, 40), algorithm=own, **kw)
    b = simulate.sweep(problem, 40, algorithm=MahdaviPrimalDual(), **kw)
    assert a.engine == b.engine == "seeds-minor"
    for m in simulate.METRICS + ("x_final",):
        np.testing.assert_allclose(getattr(a, m), getattr(b, m), rtol=1e-6, atol=1e-6, err_msg=m)


# --- every command takes module:Name specs ----------------------------------------------------


def test_compare_run_sweep_and_tune_take_specs(tmp_path, capsys):
    out = tmp_path / "cmp"
    assert (
        _call(
            [
                "compare",
                "--problem",
                "own_plugin:box_budget",
                "--algorithms",
                "rectified-bco,own_plugin:OwnDual",
                "--seeds",
                "3",
                "-T",
                "40",
                "--dim",
                "3",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    page = (out / "own_plugin-box_budget.md").read_text()
    assert "own dual (Mahdavi et al. 2012)" in page  # its display name and theory, exponents
    assert "T^(1/2) (exponent 0.5)" in page and "soft T^(3/4) (exponent soft 0.75)" in page
    rows = json.loads((out / "own_plugin-box_budget.json").read_text())["rows"]
    assert [r["algorithm"] for r in rows] == ["rectified-bco", "own-dual"]

    assert (
        _call(
            [
                "run",
                "--problem",
                "own_plugin:box_budget",
                "--seeds",
                "3",
                "-T",
                "30",
                "--out",
                str(tmp_path / "run"),
            ]
        )
        == 0
    )
    assert "own_plugin:box_budget" in capsys.readouterr().out

    study = tmp_path / "study.toml"
    study.write_text(
        'problem = "own_plugin:box_budget"\ndim = 2\nhorizon = 20\nseeds = 2\n'
        'algorithm = "own_plugin:OwnDual"\n[grid]\neta = [0.05, 0.1]\n'
    )
    assert (
        _call(["sweep", "--config", str(study), "--out", str(tmp_path / "sweep"), "--quiet"]) == 0
    )
    assert "own-dual" in capsys.readouterr().out

    assert (
        _call(
            [
                "tune",
                "--algorithm",
                "own_plugin:OwnDual",
                "--problem",
                "own_plugin:box_budget",
                "--free",
                "eta",
                "--steps",
                "2",
                "--seeds",
                "2",
                "--heldout",
                "2",
                "-T",
                "20",
                "--out",
                str(tmp_path / "tune"),
            ]
        )
        == 0
    )
    tuned = json.loads((tmp_path / "tune" / "tune.json").read_text())
    assert "own_plugin:OwnDual" in json.dumps(tuned)


def test_compare_takes_a_problem_object():
    import own_plugin

    res = compare.compare(
        own_plugin.FIXED, 3, 30, algorithms=["own-dual", "rectified-bco"], name="fixed box"
    )
    assert res.problem == "fixed box" and [r["algorithm"] for r in res.rows] == [
        "own-dual",
        "rectified-bco",
    ]
    assert all(r["failed_seeds"] == 0 for r in res.rows)


def test_the_console_script_imports_from_the_working_directory(tmp_path):
    """``jaxbco`` (the installed script, whose sys.path lacks the working directory) finds a
    spec's module in the directory it runs in, and a missing one is one line, exit 2."""
    script = pathlib.Path(sys.executable).with_name("jaxbco")
    if not script.exists():
        pytest.skip("no console script beside this interpreter")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    ok = subprocess.run(
        [
            str(script),
            "compare",
            "--problem",
            "own_plugin:box_budget",
            "--algorithms",
            "own_plugin:OwnDual",
            "--seeds",
            "2",
            "-T",
            "10",
            "--out",
            str(tmp_path / "c"),
            "--quiet",
            NC,
        ],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ok.returncode == 0, ok.stderr[-2000:]
    bad = subprocess.run(
        [
            str(script),
            "compare",
            "--problem",
            "quadratic-ball",
            "--algorithms",
            "own_plugin_missing:X",
            NC,
        ],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [x for x in bad.stderr.strip().splitlines() if not x.startswith("jaxbco: note:")]
    assert bad.returncode == 2 and len(lines) == 1 and "no module named" in lines[0], bad.stderr


# --- one place names the built-ins; colours per figure ----------------------------------------


def _strings(tree):
    """String constants of a module that are not docstrings."""
    docs = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


def test_no_module_outside_the_algorithms_names_a_built_in():
    """Only jaxbco/algorithms/ spells a built-in algorithm's name (yu-neely is also a problem's
    name, so it is left out); everything else reads the registry."""
    names = [n for n in BUILT_IN if n not in problems.PROBLEMS and n != "rectified-bco"]
    names.append("rectified-bco")  # the default: jaxbco.algorithms.DEFAULT
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")
    found = []
    for path in sorted([*(ROOT / "jaxbco").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")]):
        if (ROOT / "jaxbco" / "algorithms") in path.parents:
            continue
        for text in _strings(ast.parse(path.read_text())):
            if pattern.search(text):
                found.append(f"{path.relative_to(ROOT)}: {text[:60]!r}")
    assert not found, found


def test_colours_are_distinct_within_a_figure():
    names = list(BUILT_IN) + ["own-dual"] + [f"mine-{k}" for k in range(6)]
    colours = assign(names)
    first = [colours[n] for n in names[: len(PALETTE)]]
    assert len(set(first)) == len(first)  # no two alike while the palette lasts
    assert all(colours[n] == (registry.get(n).colour, 0) for n in BUILT_IN)  # kept
    assert colours["own-dual"][0] not in {registry.get(n).colour for n in BUILT_IN}
    many = assign([f"m{k}" for k in range(3 * len(PALETTE))])
    assert len(set(many.values())) == len(many)  # (colour, wrap) pairs stay distinct


def test_a_user_figure_gives_its_series_their_own_colours(tmp_path):
    from jaxbco.plotting import plot_comparison

    k = 5
    curves = {
        n: {"regret": np.ones((2, k)), "hard_violation": np.ones((2, k))}
        for n in ("mahdavi-pd", "mine", "other")
    }
    path = plot_comparison(np.arange(1, k + 1), curves, tmp_path / "f.png")
    assert pathlib.Path(path).exists()
    got = assign(curves)
    assert len({c for c, _ in got.values()}) == 3 and got["mahdavi-pd"][0] == "#009E73"


def test_registering_reaches_the_tables_and_is_undone():
    mine = type("Mine", (MahdaviPrimalDual,), {})
    registry.register(
        "mine-later", mine, display="mine", regret_order="T^(2/3)", exponents={"regret": 2 / 3}
    )
    assert "mine-later" in ALGORITHMS and LITERATURE["mine-later"][0] == "T^(2/3)"
    registry.unregister("mine-later")
    assert "mine-later" not in ALGORITHMS
    with pytest.raises(ValueError, match="unknown metric"):
        registry.Record("x", MahdaviPrimalDual, exponents={"regert": 0.5})
    for bad in (-1, 1.5):  # an exponent of T in a cumulative bound lies in [0, 1]
        with pytest.raises(ValueError, match=r"exponents\['regret'\] must lie in \[0, 1\]"):
            registry.Record("x", MahdaviPrimalDual, exponents={"regret": bad})
    jax.clear_caches()
