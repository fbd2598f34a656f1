"""The documentation (issue 28, issue 40): the site builds with Sphinx with warnings as errors
(a broken link, a page left out, an API entry that does not resolve, a docstring docutils
cannot read), and the code of the "Your own problem" and "Your own algorithm" guides runs as
written and shows what the text says."""

import builtins
import html
import importlib
import inspect
import pathlib
import re
import subprocess
import sys
import typing

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[pathlib.Path, subprocess.CompletedProcess]:
    """One strict build of the site for this file's tests (``--dist loadfile`` keeps them on
    one worker): the output folder and the finished ``sphinx-build``."""
    out = tmp_path_factory.mktemp("site") / "html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            "docs",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return out, done


def test_docs_build_strict(site):
    """``sphinx-build -W --keep-going -b html docs OUT`` succeeds, and the API pages show what
    the mkdocs site lost: the docstrings, Unicode inner products, annotated signatures,
    Result's attributes and highlighted code."""
    out, done = site
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    running = (out / "api" / "running.html").read_text()
    assert "Run every hyperparameter setting" in running  # sweep's docstring, rendered
    assert re.search(
        r'<span class="n"><span class="pre">horizon</span></span><span class="p">'
        r'<span class="pre">:</span></span>',
        running,
    )  # an annotation shown
    for field in ("hard_violation", "x_star_certificate", "seed_rounds_per_s"):
        assert f'id="jaxbco.Result.{field}"' in running  # Result's attributes, each an entry
    components = (out / "api" / "components.html").read_text()
    assert "⟨" in components  # inner products render (no longer eaten as HTML tags)
    assert '<div class="highlight">' in running  # Pygments-highlighted examples
    assert '<span class="gp">&gt;&gt;&gt; </span>' in running  # doctest prompts, not quotes
    studies = (out / "api" / "studies.html").read_text()
    for name in (
        "results.to_dataset",
        "results.save",
        "results.load",
        "results.to_frame",
        "results.summary_table",
        "plotting.plot_comparison",
        "plotting.plot_dataset",
    ):
        assert f'id="jaxbco.{name}"' in studies  # an API entry for every one
    assert "mkdocs" not in (out / "index.html").read_text()


#: A rendered "Type:" field: napoleon reads ``#: text: more`` as type "text", so prose shows up
#: here (issue 55).
TYPE_FIELD = re.compile(
    r'<dt class="field-\w+">Type<span class="colon">:</span></dt>\s*<dd class="field-\w+">'
    r"<p>(.*?)</p>",
    re.S,
)
#: An object's entry (its id) and a module's target (``automodule``), in page order.
ENTRY = re.compile(r'<dt class="sig sig-object py" id="([^"]+)"| id="module-([^"]+)"')
#: A pointer: "(see the) module docstring", "see ``X``", "``X``'s docstring".
POINTER = re.compile(
    r"module\s+docstring|[Ss]ee <code[^>]*>(.*?)</code>|<code[^>]*>(.*?)</code>’s docstring"
)
NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def _api_pages(out: pathlib.Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((out / "api").glob("*.html"))}


def _type_like(text: str) -> bool:
    """Whether a Type field reads as an annotation (``numpy.ndarray | None``, ``int``,
    ``AbstractVar[str]``), not prose: names joined by | or commas, subscripts dropped."""
    while re.search(r"\[[^\[\]]*\]", text):
        text = re.sub(r"\[[^\[\]]*\]", "", text)
    known = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)}
    known |= set(typing.__all__) | {"None"}
    parts = re.split(r"\s*[|,]\s*", text.strip())
    return all(p in known or re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+", p) for p in parts)


def _entry_before(page: str, pos: int) -> tuple[str | None, str | None]:
    """(object id, module) of the last entry or module target before ``pos``."""
    last = (None, None)
    for m in ENTRY.finditer(page, 0, pos):
        last = (m.group(1), m.group(2))
    return last


def _home_module(name: str) -> str:
    """The module whose docstring "the module docstring" in ``name``'s entry means: where the
    innermost class or function of the dotted path is defined."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
            break
        except ImportError:
            continue
    home = obj.__name__
    for p in parts[i:]:
        obj = inspect.getattr_static(obj, p)
        obj = getattr(obj, "fget", None) or getattr(obj, "__func__", None) or obj
        if inspect.isclass(obj) or inspect.isfunction(obj):
            home = obj.__module__
    return home


def test_api_type_fields_are_types(site):
    """Every "Type:" the API pages show is an annotation, none a clause of prose that napoleon
    split off an attribute's description at its first colon (issue 55)."""
    out, _ = site
    prose, seen = [], 0
    for page_name, page in _api_pages(out).items():
        for m in TYPE_FIELD.finditer(page):
            seen += 1
            if not _type_like(_text(m.group(1))):
                prose.append(
                    f"{page_name} {_entry_before(page, m.start())[0]}: {_text(m.group(1))!r}"
                )
    assert seen > 50, "the Type: fields were not found (has the HTML changed?)"
    assert not prose, f"{len(prose)} prose Type: fields:\n" + "\n".join(prose)


def test_api_pointers_lead_somewhere(site):
    """A rendered "see the module docstring" finds that module's docstring on the site, and a
    rendered "see ``X``" (or "``X``'s docstring") finds an entry or module X (issue 55)."""
    out, _ = site
    pages = {p: p.read_text() for p in sorted(out.rglob("*.html"))}
    ids = set().union(*(re.findall(r'id="([^"]+)"', page) for page in pages.values()))
    dangling, seen = [], 0
    for page_name, page in _api_pages(out).items():
        for m in POINTER.finditer(page):
            seen += 1
            entry, module = _entry_before(page, m.start())
            if m.group(1) is None and m.group(2) is None:  # "module docstring"
                if module is None:  # in an object's entry: its own module's docstring
                    home = _home_module(entry)
                    if f"module-{home}" not in ids:
                        dangling.append(f"{page_name} {entry}: module docstring of {home}")
                continue
            target = _text(m.group(1) or m.group(2))
            if not NAME.fullmatch(target):
                continue  # an expression, not a name
            if not any(i in (target, f"module-{target}") or i.endswith(f".{target}") for i in ids):
                dangling.append(f"{page_name} {entry or module}: see {target}")
    assert seen > 10, "no pointers found (has the HTML changed?)"
    assert not dangling, f"{len(dangling)} dangling pointers:\n" + "\n".join(dangling)


def test_own_problem_guide_runs_as_written():
    text = (ROOT / "docs" / "own-problem.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 4
    scope: dict = {}
    for block in blocks:
        exec(compile(block, "docs/own-problem.md", "exec"), scope)  # noqa: S102 - our own docs
    budget, slow, fast = scope["budget"], scope["slow"], scope["fast"]
    assert budget.engine == "seeds-minor" and budget.prox_method.startswith("QuadraticIPM")
    assert not budget.failed.any() and np.isfinite(budget.regret).all()
    assert slow.engine == "vmap" and "CustomLoss does not declare blocks" in slow.engine_reason
    assert fast.engine == "seeds-minor"
    assert budget.x_star_ok.all() and slow.x_star_ok.all()  # certified x*
    checked = scope["checked"]  # a kinked custom g (cutting planes): x* certified
    assert checked.x_star_ok.all() and checked.prox_method.startswith("CuttingPlane")
    # float32: the two back-ends round differently and the two-point estimate divides by
    # 2 delta = 2/T (measured: x_T 1.5e-6 apart, regret 6.5e-3 of 57, x* equal)
    np.testing.assert_allclose(fast.x_final, slow.x_final, atol=1e-4)
    np.testing.assert_allclose(fast.x_star, slow.x_star, atol=1e-5)
    np.testing.assert_allclose(fast.regret, slow.regret, rtol=1e-3, atol=1e-2)


def test_own_algorithm_guide_runs_as_written(tmp_path, monkeypatch):
    """docs/own-algorithm.md: the algorithm written with the public toolkit passes its block
    check, equals the built-in mahdavi-pd with one constraint, is compared (tables with its
    display name and theory, a figure), tuned, and the shared sequence and the constraint
    with its own prox method run as the text says; the page imports nothing private."""
    from jaxbco.algorithms import registry

    text = (ROOT / "docs" / "own-algorithm.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert not any(re.search(r"jaxbco(\.\w+)*\._", b) for b in blocks)  # nothing private
    assert len(blocks) == 7
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    try:
        for block in blocks:
            exec(compile(block, "docs/own-algorithm.md", "exec"), scope)  # noqa: S102 - our docs
        assert scope["check"].ok and scope["check"].compared
        mine, theirs = scope["mine"], scope["theirs"]
        assert mine.engine == "seeds-minor"
        np.testing.assert_allclose(mine.regret, theirs.regret, rtol=1e-5, atol=1e-4)
        res = scope["res"]
        assert [r["algorithm"] for r in res.rows] == ["rectified-bco", "mahdavi-pd", "primal-dual"]
        table = scope["compare"].table_markdown(res)
        assert "primal-dual (Mahdavi et al. 2012)" in table
        assert (tmp_path / "own-algorithm" / "quadratic-ball.png").exists()
        assert scope["own"].problem == "box budget"
        assert not any(r["failed_seeds"] for r in res.rows + scope["own"].rows)
        tuned = scope["tuned"]
        assert tuned.names == ("eta",) and np.isfinite(tuned.heldout_end.J)
        assert scope["moving"].engine == "seeds-minor"
        capped = scope["capped"]
        assert capped.prox_method.startswith("SmoothDual") and capped.prox_ok.all()
        assert capped.x_star_ok.all() and capped.engine == "seeds-minor"
    finally:
        registry.unregister("primal-dual")
