"""One algorithm's record in the registry (``jaxbco.algorithms.registry``): its factory, the
text and theory the tables and figures show, checked when it is made."""

from __future__ import annotations

import dataclasses
import re
import types
from collections.abc import Callable, Mapping

import numpy as np

from jaxbco.algorithms._base import AbstractAlgorithm

#: The exponent keys a record may state (each a power of T the source proves, convex losses,
#: a fixed g, c = 1/2 where the method has one).
METRICS = ("regret", "hard_violation", "soft_violation")


_HEX = re.compile(r"^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$")


def _colour_like(colour) -> bool:
    """Whether matplotlib can draw ``colour``: hex and ``C<n>`` here; a name is asked of
    ``matplotlib.colors`` (loaded only then: the built-ins' colours are hex)."""
    if not isinstance(colour, str):
        return False
    if _HEX.match(colour) or re.match(r"^C\d+$", colour):
        return True
    from matplotlib.colors import is_color_like  # a named colour only (~0.5 s to load)

    return bool(is_color_like(colour))


@dataclasses.dataclass(frozen=True)
class Record:
    """One algorithm of the registry (``register`` builds it from keywords).

    Args:
        name: the CLI's and the tables' key.
        factory: an ``AbstractAlgorithm`` class, or a function problem ↦ algorithm.
        display: legend and table text (default: the name, with "(g known in advance)" for
            an oracle baseline).
        regret_order: the regret order its source states, as text.
        violation_order: the violation order its source states, as text.
        exponents: metric ↦ exponent of T (keys from ``METRICS``), for the exponent tests and
            tables.
        xonly: a variant that ignores g (dotted in figures).
        colour: a preferred colour; a figure keeps it when no other series in it has it.
        theorems: the theorem bounds of ``jaxbco.compare.theory`` are this algorithm's (drawn
            beside it).
        order: position in listings.

    Raises:
        ValueError: for a bad name, a factory that is neither a class nor a function, or an
            unknown metric in ``exponents``.

    Example:
        >>> from jaxbco.algorithms import registry
        >>> record = registry.get("mahdavi-pd")
        >>> record.name, record.factory.__name__, record.exponents["soft_violation"]
        ('mahdavi-pd', 'MahdaviPrimalDual', 0.75)
    """

    name: str
    factory: Callable
    display: str | None = None
    regret_order: str = "?"
    violation_order: str = "?"
    exponents: Mapping[str, float] = dataclasses.field(default_factory=dict)
    xonly: bool = False
    colour: str | None = None
    theorems: bool = False
    order: int = 1000

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name or self.name != self.name.strip():
            raise ValueError(
                f"an algorithm's name must be a non-empty string without surrounding "
                f"blanks; got {self.name!r}"
            )
        if not (callable(self.factory) or isinstance(self.factory, AbstractAlgorithm)):
            raise ValueError(
                f"algorithm {self.name!r}: factory must be an AbstractAlgorithm "
                f"class or a function problem -> algorithm; got {self.factory!r}"
            )
        bad = sorted(set(self.exponents) - set(METRICS))
        if bad:
            raise ValueError(
                f"algorithm {self.name!r}: exponents has unknown metric(s) {bad}; "
                f"allowed: {', '.join(METRICS)}"
            )
        if self.colour is not None and not _colour_like(self.colour):
            raise ValueError(
                f"algorithm {self.name!r}: colour {self.colour!r} is not a colour matplotlib "
                f"knows (a name such as 'teal', '#RRGGBB', or 'C0'..'C9')"
            )
        for k, v in self.exponents.items():
            if isinstance(v, (str, bytes, bool)) or not isinstance(v, (int, float, np.number)):
                raise ValueError(
                    f"algorithm {self.name!r}: exponents[{k!r}] must be a number (the exponent "
                    f"of T, e.g. 0.5); got {v!r}"
                )
            if not 0.0 <= float(v) <= 1.0:  # a bound of a cumulative metric: O(1) to O(T)
                raise ValueError(
                    f"algorithm {self.name!r}: exponents[{k!r}] must lie in [0, 1] (the "
                    f"exponent of T in a cumulative bound, from O(1) to O(T)); got {v!r}"
                )
        object.__setattr__(
            self,
            "exponents",
            types.MappingProxyType({k: float(v) for k, v in self.exponents.items()}),
        )

    @property
    def cls(self):
        """The algorithm's class (None for a factory function not yet called)."""
        if isinstance(self.factory, type):
            return self.factory
        return type(self.factory) if isinstance(self.factory, AbstractAlgorithm) else None

    @property
    def knows_constraint(self) -> bool:
        """An oracle baseline, given g in advance (``AbstractAlgorithm.knows_constraint``)."""
        return bool(getattr(self.cls, "knows_constraint", False))

    @property
    def label(self) -> str:
        """The name in tables and legends."""
        if self.display is not None:
            return self.display
        return f"{self.name} (g known in advance)" if self.knows_constraint else self.name

    def build(self, problem) -> AbstractAlgorithm:
        """The algorithm for ``problem``, with its strongly convex schedule where the class has
        a ``strongly_convex`` field."""
        f = self.factory
        if isinstance(f, AbstractAlgorithm):
            return f
        try:
            if isinstance(f, type):
                names = (
                    {x.name for x in dataclasses.fields(f)} if dataclasses.is_dataclass(f) else ()
                )
                if "strongly_convex" in names:
                    return f(strongly_convex=problem.strongly_convex)
                return f()
            algorithm = f(problem)
        except Exception as e:  # the user's class or factory: their mistake, said in one line
            how = (
                "a class must build with no arguments"
                if isinstance(f, type)
                else ("a factory takes the problem: make(problem) -> AbstractAlgorithm")
            )
            raise ValueError(
                f"algorithm {self.name!r}: building it failed ({how}): {type(e).__name__}: "
                f"{' '.join(str(e).split())[:200]}"
            ) from None
        if not isinstance(algorithm, AbstractAlgorithm):
            raise ValueError(
                f"algorithm {self.name!r}: its factory returned "
                f"{type(algorithm).__name__}, not an AbstractAlgorithm"
            )
        return algorithm
