"""A table of a study, rendered as Markdown (the results page) or LaTeX with booktabs (a
paper): one set of cells, two renderings, so the two never disagree.
"""

from __future__ import annotations

import dataclasses
import math
import re

from jaxbco.compare.findings import EPS32, IDENTICAL, estimate


@dataclasses.dataclass(frozen=True)
class Estimate:
    """A mean with its 95% interval (NaN ends: no interval), rounded when rendered
    (``findings.estimate``; ``eps``: the data's precision, which decides when an interval is
    only round-off wide: the value, marked ``findings.IDENTICAL``)."""

    mean: float
    lo: float = math.nan
    hi: float = math.nan
    eps: float = EPS32


@dataclasses.dataclass(frozen=True)
class Column:
    """A column: its Markdown and LaTeX headers and its LaTeX alignment ("l" or "r")."""

    markdown: str
    latex: str
    align: str = "r"


@dataclasses.dataclass
class Table:
    """Columns and rows of cells (``str`` or ``Estimate``).

    Attributes:
        columns: the columns, in order.
        rows: one list of cells per row, a cell per column.
    """

    columns: list
    rows: list

    def markdown(self) -> str:
        """The table in Markdown (pipes), estimates as "mean [lo, hi]"."""
        lines = [
            "| " + " | ".join(c.markdown for c in self.columns) + " |",
            "|" + " --- |" * len(self.columns),
        ]
        for row in self.rows:
            lines.append("| " + " | ".join(_md(c) for c in row) + " |")
        return "\n".join(lines)

    def latex(self, caption: str | None = None, label: str | None = None) -> str:
        """The table in LaTeX (``\\usepackage{booktabs,array,tabularx}``), made to fit the
        text width: a ``tabularx`` of ``\\linewidth`` whose text columns ("l") wrap (ragged
        right), numbers with their interval on a second line in small type, headers of number
        columns on two lines; a ``table`` float with ``caption`` and ``label`` when given, else
        the bare ``tabularx``.

        Args:
            caption: the float's caption (escaped), or None.
            label: its ``\\label`` key (made LaTeX-safe, ``label_safe``), or None.

        Returns:
            LaTeX source.

        Example:
            >>> t = Table([Column("a", "A", "l"), Column("x", "$x$")], [["row", Estimate(1.5)]])
            >>> t.latex().splitlines()[0]
            '\\begin{tabularx}{\\linewidth}{@{}>{\\raggedright\\arraybackslash\\hspace{0pt}}Xr@{}}'
        """
        spec = "".join(_TEXT_COLUMN if c.align == "l" else c.align for c in self.columns)
        body = [
            f"\\begin{{tabularx}}{{\\linewidth}}{{@{{}}{spec}@{{}}}}",
            "\\toprule",
            " & ".join(_header(c) for c in self.columns) + " \\\\",
            "\\midrule",
        ]
        body += [" & ".join(_tex(c) for c in row) + " \\\\" for row in self.rows]
        body += ["\\bottomrule", "\\end{tabularx}"]
        if caption is None and label is None:
            return "\n".join(body) + "\n"
        head = [
            "\\begin{table}[t]",
            "\\centering",
            "\\footnotesize",
            "\\setlength{\\tabcolsep}{3pt}",
        ]
        tail = []
        if caption is not None:
            tail.append(f"\\caption{{{escape(caption)}}}")
        if label is not None:
            tail.append(f"\\label{{{label_safe(label)}}}")
        return "\n".join(head + body + tail + ["\\end{table}"]) + "\n"


#: A text column of ``Table.latex``: a ``tabularx`` X column, ragged right, its first word
#: hyphenated where the column needs it (LaTeX hyphenates no paragraph's first word unless
#: glue comes before it).
_TEXT_COLUMN = ">{\\raggedright\\arraybackslash\\hspace{0pt}}X"  # \hspace: hyphenate word 1


def _stack(lines, align: str = "r", at: str = "t") -> str:
    """Lines stacked in one cell (a nested tabular: no package beyond LaTeX's own)."""
    if len(lines) == 1:
        return lines[0]
    return f"\\begin{{tabular}}[{at}]{{@{{}}{align}@{{}}}}" + "\\\\".join(lines) + "\\end{tabular}"


def _header(c: Column) -> str:
    """A number column's header on two lines (split at its last space outside maths)."""
    text = c.latex
    if c.align == "l" or " " not in text:
        return text
    cut = max(i for i, ch in enumerate(text) if ch == " " and text[:i].count("$") % 2 == 0)
    return _stack([text[:cut], text[cut + 1 :]], "r", "b") if cut > 0 else text


def _md(cell) -> str:
    if not isinstance(cell, Estimate):
        return str(cell)
    m, lo, hi = estimate(cell.mean, cell.lo, cell.hi, cell.eps)
    if not lo:
        return m
    return f"{m} ({IDENTICAL})" if lo == hi == m else f"{m} [{lo}, {hi}]"


_SCI = re.compile(r"^(-?\d+(?:\.\d+)?)e([+-])0*(\d+)$")


def _tex_number(text: str) -> str:
    """A number in LaTeX maths: 4.31e-05 -> 4.31\\times10^{-5}; a minus sign as such."""
    m = _SCI.match(text)
    if m:
        sign = "-" if m.group(2) == "-" else ""
        return f"{m.group(1)}\\times10^{{{sign}{m.group(3)}}}"
    return text


#: Orders written in the tables' plain text (T^(3/4), T^0.5, T^max(c,1-c), sqrt(T log T), log T)
_ORDER = re.compile(
    r"T\^\((?P<p>[^()]*)\)|T\^max\((?P<m>[^()]*)\)|T\^(?P<n>[0-9.]+)"
    r"|sqrt\(T log T\)|\blog T\b"
)


def _order(m) -> str:
    if m.group("p") is not None:
        return f"$T^{{{m.group('p')}}}$"
    if m.group("m") is not None:
        return f"$T^{{\\max({m.group('m')})}}$"
    if m.group("n") is not None:
        return f"$T^{{{m.group('n')}}}$"
    return "$\\sqrt{T \\log T}$" if m.group(0).startswith("sqrt") else "$\\log T$"


def tex_text(text: str) -> str:
    """Plain table text as LaTeX: the orders it names typeset as maths, the rest escaped.

    Args:
        text: a cell's plain text, e.g. "hard T^(3/4) (sqrt(T log T))".

    Returns:
        LaTeX source.

    Example:
        >>> tex_text("hard T^(3/4) (sqrt(T log T))")
        'hard $T^{3/4}$ ($\\\\sqrt{T \\\\log T}$)'
    """
    out, at = [], 0
    for m in _ORDER.finditer(text):
        out += [escape(text[at : m.start()]), _order(m)]
        at = m.end()
    return "".join(out + [escape(text[at:])])


def _tex(cell) -> str:
    if not isinstance(cell, Estimate):
        return tex_text(str(cell))
    m, lo, hi = estimate(cell.mean, cell.lo, cell.hi, cell.eps)
    if m == "nan":
        return "--"
    if not lo:
        return f"${_tex_number(m)}$"
    if lo == hi == m:
        first, rest = IDENTICAL.split(" ", 1)
        return _stack(
            [f"${_tex_number(m)}$", f"{{\\scriptsize ({first}}}", f"{{\\scriptsize {rest})}}"]
        )
    if len(lo) + len(hi) <= WIDE_INTERVAL and "e" not in lo + hi:
        return _stack(
            [f"${_tex_number(m)}$", f"{{\\scriptsize $[{_tex_number(lo)}, {_tex_number(hi)}]$}}"]
        )
    return _stack(  # a long interval's ends on lines of their own: the column stays narrow
        [
            f"${_tex_number(m)}$",
            f"{{\\scriptsize $[{_tex_number(lo)},$}}",
            f"{{\\scriptsize ${_tex_number(hi)}]$}}",
        ]
    )


#: An interval whose ends take more characters than this, or either in scientific notation,
#: is stacked one end a line in LaTeX.
WIDE_INTERVAL = 12


_ESCAPES = {
    "\\": "\\textbackslash{}",
    "&": "\\&",
    "%": "\\%",
    "$": "\\$",
    "#": "\\#",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "~": "\\textasciitilde{}",
    "^": "\\^{}",
    "≤": "$\\le$",
    "≈": "$\\approx$",
    "×": "$\\times$",
}


def label_safe(label: str) -> str:
    """A ``\\label`` key LaTeX takes whatever the name it is built from: every character
    but letters, digits and ``:._/+-`` (``%`` would end the line, ``#``, braces and
    backslashes break the build) replaced by ``-``.

    Example:
        >>> label_safe("tab:my%problem#2")
        'tab:my-problem-2'
    """
    return re.sub(r"[^A-Za-z0-9:._/+-]", "-", label)


def escape(text: str) -> str:
    """Text with LaTeX's special characters escaped (``≤`` as ``$\\le$``).

    Args:
        text: plain text.

    Returns:
        The text, safe inside a LaTeX document.

    Example:
        >>> escape("flaxman-bgd_xonly: 10% ≤ 1")
        'flaxman-bgd\\\\_xonly: 10\\\\% $\\\\le$ 1'
    """
    return "".join(_ESCAPES.get(ch, ch) for ch in text)
