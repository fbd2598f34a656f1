"""The API reference's docstrings (issue 40): every object docs/api/*.md documents is written
in the shared Google style (``Args:`` for every parameter, ``Returns:`` for a function that
returns something), no public signature shows a private parameter, no docstring holds text
that a renderer eats (a raw ``<word`` tag, a reST ``::`` literal block), and the ``Example:``
blocks of the objects the issue names run as written."""

import dataclasses
import doctest
import importlib
import inspect
import pathlib
import re
import typing

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
API = sorted((ROOT / "docs" / "api").glob("*.md"))
DIRECTIVE = re.compile(
    r"^\.\. auto(function|class|module|data|exception):: (\S+)\n"
    r"((?:   :\S+:.*\n)*)",
    re.M,
)


def _resolve(path: str):
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(path)


def _documented() -> list[str]:
    """Every object an autodoc directive of docs/api/*.md documents (a module's listed
    members, or its public functions and classes defined there for a bare ``:members:``)."""
    names = []
    for page in API:
        text = page.read_text()
        for kind, name, opts in DIRECTIVE.findall(text):
            if kind != "module":
                names.append(name)
                continue
            members = re.search(r":members:(.*)", opts)
            if members is None:
                continue
            listed = [m.strip() for m in members.group(1).split(",") if m.strip()]
            if not listed:
                module = _resolve(name)
                listed = [
                    n
                    for n, v in vars(module).items()
                    if not n.startswith("_")
                    and (inspect.isfunction(v) or inspect.isclass(v))
                    and v.__module__ == module.__name__
                ]
            names += [f"{name}.{m}" for m in listed]
    return names


DOCUMENTED = _documented()


def _generated(cls) -> bool:
    """Whether the constructor is generated from fields (dataclass, NamedTuple, eqx.Module)."""
    return dataclasses.is_dataclass(cls) or (issubclass(cls, tuple) and hasattr(cls, "_fields"))


def _section(doc: str, title: str) -> str | None:
    m = re.search(rf"^{title}:\n((?:[ \t]+.*\n|\n)*)", doc + "\n", re.M)
    return None if m is None else m.group(1)


def _parameters(obj) -> list[inspect.Parameter]:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters.values() if p.name not in ("self", "cls")]


def _returns_something(fn) -> bool:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - an unresolvable annotation: read the text
        hints = {"return": fn.__annotations__.get("return", inspect.Signature.empty)}
    ret = hints.get("return", inspect.Signature.empty)
    return ret not in (None, type(None), "None")


def test_the_pages_list_objects():
    assert len(DOCUMENTED) > 100 and "jaxbco.sweep" in DOCUMENTED
    assert (
        "jaxbco.results.to_dataset" in DOCUMENTED and "jaxbco.plotting.plot_dataset" in DOCUMENTED
    )


@pytest.mark.parametrize("name", DOCUMENTED)
def test_docstring_google_style(name):
    obj = _resolve(name)
    doc = inspect.getdoc(obj) if not inspect.isclass(obj) else inspect.cleandoc(obj.__doc__ or "")
    assert doc, f"{name} has no docstring"
    problems = []
    for line in doc.splitlines():
        if re.search(r"<[A-Za-z_]", line) and not line.lstrip().startswith((">>>", "...")):
            problems.append(f"raw tag-like text {line.strip()!r}")
        if line.rstrip().endswith("::"):
            problems.append(f"reST literal block {line.strip()!r}")
    params = [
        p for p in _parameters(obj) if not (inspect.isclass(obj) and issubclass(obj, BaseException))
    ]
    private = [p.name for p in params if p.name.startswith("_")]
    if private:
        problems.append(f"private parameters in the public signature: {private}")
    if params:
        section = _section(doc, "Args")
        if section is None and inspect.isclass(obj) and _generated(obj):
            section = _section(doc, "Attributes")
        if section is None:
            problems.append(
                "no Args: section" + (" (or Attributes:)" if inspect.isclass(obj) else "")
            )
        else:
            missing = [
                p.name
                for p in params
                if not re.search(rf"^\s+\**{re.escape(p.name)}\b", section, re.M)
            ]
            if missing:
                problems.append(f"parameters not described: {missing}")
    if inspect.isfunction(obj) and _returns_something(obj) and _section(doc, "Returns") is None:
        problems.append("no Returns: section")
    assert not problems, f"{name}: " + "; ".join(problems)


def test_no_private_parameter_in_public_tune_signatures():
    from jaxbco import tune

    for fn in (tune.tune, tune.grid_search, tune.random_search):
        assert not [p for p in inspect.signature(fn).parameters if p.startswith("_")]


#: The objects whose examples the issue names (sweep, run, make_run, problems.make, Problem,
#: the results functions, the plotting functions).
EXAMPLES = [
    "jaxbco.sweep",
    "jaxbco.run",
    "jaxbco.make_run",
    "jaxbco.Result",
    "jaxbco.problems.make",
    "jaxbco.Problem",
    "jaxbco.results.to_dataset",
    "jaxbco.results.save",
    "jaxbco.results.load",
    "jaxbco.results.to_frame",
    "jaxbco.results.summary_table",
    "jaxbco.plotting.plot_curves",
    "jaxbco.plotting.plot_comparison",
    "jaxbco.plotting.plot_dataset",
]


def _run_examples(name: str) -> tuple[int, int]:
    """(examples attempted, examples failed) of ``name``'s docstring, run by doctest."""
    import matplotlib

    matplotlib.use("Agg")
    obj = _resolve(name)
    tests = [t for t in doctest.DocTestFinder(recurse=False).find(obj, name) if t.examples]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    return result.attempted, result.failed


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes a file writes it here
    attempted, failed = _run_examples(name)
    assert attempted > 0, f"{name} has no Example: block"
    assert failed == 0, f"{name}: {failed} example(s) failed"


WITH_EXAMPLES = [
    n
    for n in DOCUMENTED
    if n not in EXAMPLES and ">>>" in (getattr(_resolve(n), "__doc__", None) or "")
]


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_every_other_example_runs(name, tmp_path, monkeypatch):
    """Every other ``Example:`` on the API pages runs as written too."""
    monkeypatch.chdir(tmp_path)
    attempted, failed = _run_examples(name)
    assert attempted > 0 and failed == 0, f"{name}: {failed} of {attempted} example(s) failed"
