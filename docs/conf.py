"""Sphinx configuration of the jaxbco documentation.

Build (warnings are errors, as in tests/test_docs.py):

    sphinx-build -W --keep-going -b html docs docs/_build/html

The guides are Markdown (MyST); the API pages are autodoc directives over Google-style
docstrings (napoleon).  Everything renders offline: maths in the docstrings is Unicode, code is
highlighted by Pygments at build time, and no page loads a script from a CDN.
"""

import re

import jaxbco

project = "jaxbco"
author = "jaxbco authors"
copyright = "jaxbco authors"
release = version = jaxbco.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
# docs/results/*.md are the per-problem sections that docs/results.md is generated from
exclude_patterns = [
    "_build",
    "results/*.md",
    ".staging-*",
    "Thumbs.db",
    ".DS_Store",
]  # .staging-*: a run writing into docs/

# MyST: the Markdown guides stay Markdown; headings get anchors for links like page.md#section
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

# autodoc + napoleon: Google-style docstrings, annotations in the signature, the constructor's
# arguments in the class docstring (Args:), fields under Attributes:
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
autodoc_class_signature = "mixed"
autoclass_content = "class"
autodoc_preserve_defaults = True
autodoc_default_options = {"exclude-members": "__init__, __new__"}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = False
napoleon_use_rtype = False
napoleon_attr_annotations = True
add_module_names = False
python_maximum_signature_line_length = 88  # one parameter a line for long signatures

# HTML: sphinx-book-theme (jax, optax, chex), Pygments highlighting at build time
html_theme = "sphinx_book_theme"
html_title = "jaxbco"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "home_page_in_toc": True,
}
pygments_style = "default"
html_show_sourcelink = False
html_copy_source = False


# Docstrings write maths as plain Unicode text (‖x‖₂, |r|, ⟨θ, x⟩).  In reStructuredText a bar
# starts a substitution reference (|r| would be looked up as a substitution), so bars outside
# inline literals and doctest blocks are escaped before napoleon and docutils read them.
_LITERAL = re.compile(r"(``.*?``)")


def _escape_bars(line: str) -> str:
    parts = _LITERAL.split(line)
    return "".join(p if p.startswith("``") else re.sub(r"(?<!\\)\|", r"\\|", p) for p in parts)


def _plain_text_maths(app, what, name, obj, options, lines):
    in_doctest = False
    block = None  # the indentation of a ``.. code-block::`` whose body is being passed over
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if block is not None and stripped and indent <= block:
            block = None
        if stripped.startswith(".. code-block::"):
            block = indent
        if stripped.startswith(">>>"):
            in_doctest = True
        elif not stripped:
            in_doctest = False
        if not in_doctest and block is None and "|" in line:
            lines[i] = _escape_bars(line)


# An attribute's or a property's docstring (a ``#:`` comment included) is read by napoleon as
# Google's "type: description" when its first line has a colon, so prose before the colon
# ("declared by each class itself: ...") would show as the entry's Type.  Here a type always
# comes from the annotation (autodoc shows it), never from the text, so the first line is
# broken after its first colon (outside literals and roles, as napoleon reads it): napoleon
# then finds nothing after the colon and keeps the clause in the description, and the
# paragraph renders as written.  A hook rather than a wording rule, so no future comment can
# bring it back (tests/test_docs.py checks every rendered Type: field).
_CODE_OR_ROLE = re.compile(r"(``.+?``|:[\w:.+-]+:`.+?`|`.+?`)")
_SINGLE_COLON = re.compile(r"(?<!:):(?!:)")


def _no_inline_type(app, what, name, obj, options, lines):
    if what not in ("attribute", "property", "data") or not lines:
        return
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return
    line, offset = lines[first], 0
    for k, part in enumerate(_CODE_OR_ROLE.split(line)):
        m = _SINGLE_COLON.search(part) if k % 2 == 0 else None
        if m is not None:
            cut = offset + m.end()
            if line[cut:].strip():
                lines[first : first + 1] = [line[:cut], line[cut:].strip()]
            return
        offset += len(part)


def setup(app):
    app.connect("autodoc-process-docstring", _plain_text_maths, priority=100)
    app.connect("autodoc-process-docstring", _no_inline_type, priority=200)  # before napoleon
