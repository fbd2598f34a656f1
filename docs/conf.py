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
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(">>>"):
            in_doctest = True
        elif not stripped:
            in_doctest = False
        if not in_doctest and "|" in line:
            lines[i] = _escape_bars(line)


def setup(app):
    app.connect("autodoc-process-docstring", _plain_text_maths, priority=100)
