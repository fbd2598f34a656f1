"""The layers of docs/architecture.md, checked on the source: every module imports only its own
layer and the layers below it (``_src``, the ground floor, imports nothing public)."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "jaxbco"

# bottom to top, as docs/architecture.md's table lists them (a package or top-level module
# of jaxbco per entry; ``__main__`` modules are command-line entry points: the top layer)
LAYERS = (
    ("ground floor", ("_src",)),
    (
        "components",
        ("keys", "draws", "hyper", "sets", "losses", "constraints", "sequences", "solvers"),
    ),  # fmt: skip
    ("offline", ("offline",)),
    ("problem", ("problem", "problems", "published", "data")),
    ("algorithms", ("algorithms",)),
    ("comparator", ("comparator", "certificate")),
    ("engine", ("engine",)),
    ("back-ends", ("fused", "backends")),
    ("runner", ("runner", "plan", "simulate", "check")),
    ("studies", ("compare", "tune", "study", "results", "plotting", "summary")),
    ("command line", ("cli", "__main__", "__init__")),
)
RANK = {name: i for i, (_, names) in enumerate(LAYERS) for name in names}


def _layer_of(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return "__main__" if parts[-1] == "__main__" else parts[0]


def _imports(path: pathlib.Path):
    """The jaxbco layers a module imports (absolute imports; jaxbco uses no relative ones)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            yield "relative", node.lineno
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "jaxbco":
            if node.module == "jaxbco":
                yield from ((a.name, node.lineno) for a in node.names)
            else:
                yield node.module.split(".")[1] if "." in node.module else "__init__", node.lineno
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "jaxbco":
                    yield (a.name.split(".")[1] if "." in a.name else "__init__"), node.lineno


MODULES = sorted(ROOT.rglob("*.py"))


def test_every_module_has_a_layer():
    assert not [p for p in MODULES if _layer_of(p) not in RANK]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_module_imports_only_its_layer_and_the_layers_below(path):
    me = RANK[_layer_of(path)]
    up = [
        f"line {line}: jaxbco.{name} ({LAYERS[RANK[name]][0]})"
        for name, line in _imports(path)
        if name == "relative" or RANK.get(name, len(LAYERS)) > me
    ]
    assert not up, f"{path.relative_to(ROOT)} ({LAYERS[me][0]}) imports upward: {up}"
