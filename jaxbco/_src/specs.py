"""``module:Name`` specs: a researcher's own algorithm or problem named on the command line.

    load("mypkg.algs:TwoPointDual", "algorithm")   # imports mypkg.algs, returns its attribute

The module is imported from the working directory or ``PYTHONPATH`` (the working directory
is searched for the import only; ``sys.path`` is restored afterwards).  Installed packages may
also publish components by entry point (``entry_points("jaxbco.algorithms")``, group
``jaxbco.problems`` for problems): ``[project.entry-points."jaxbco.algorithms"]
my-method = "mypkg.algs:TwoPointDual"`` makes ``my-method`` a name every command takes.
Every failure is a one-line ValueError naming the spec.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys


def is_spec(text) -> bool:
    """Whether ``text`` is a ``module:Name`` spec (a string with one colon that is not a
    registered name such as ``portfolio:tse``)."""
    return isinstance(text, str) and text.count(":") == 1 and all(text.split(":"))


def load(spec: str, what: str):
    """The object ``spec`` = "module:Name" names (``Name`` may be dotted: ``module:Class.attr``).

    Raises ValueError (one line) for a malformed spec, a module that is missing or fails to
    import, or a missing name."""
    if not is_spec(spec):
        raise ValueError(
            f"{what} {spec!r} is not a registered name nor a module:Name spec "
            f"(e.g. mypkg.algs:MyAlgorithm)"
        )
    module, name = spec.split(":")
    here = os.getcwd()
    added = here not in sys.path
    if added:
        sys.path.append(here)
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and module.startswith(e.name):
            raise ValueError(
                f"{what} {spec!r}: no module named {e.name!r} in the working "
                f"directory or on PYTHONPATH"
            ) from None
        raise ValueError(f"{what} {spec!r}: importing {module} failed: {e}") from None
    except Exception as e:  # the user's module raised while importing
        raise ValueError(
            f"{what} {spec!r}: importing {module} failed: {type(e).__name__}: {e}"
        ) from None
    finally:
        if added and here in sys.path:
            sys.path.remove(here)
    obj = mod
    for part in name.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{what} {spec!r}: module {module} has no attribute {name!r}")
        obj = getattr(obj, part)
    return obj


def entry_points(group: str) -> dict:
    """name -> entry point of the installed packages' ``group`` (empty when none)."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=group)}


def adopt_entry_points(group: str, what: str, known, adopt) -> None:
    """For each entry point of ``group`` whose name ``known(name)`` is False: load it (which
    may register it itself) and, if still unknown, ``adopt(name, obj, "entry point VALUE")``."""
    for name, ep in entry_points(group).items():
        if not known(name):
            obj = load_entry_point(ep, what)
            if not known(name):
                adopt(name, obj, f"entry point {ep.value}")


def load_entry_point(ep, what: str):
    """The object an entry point names; a one-line ValueError if loading it fails."""
    try:
        return ep.load()
    except Exception as e:
        raise ValueError(
            f"{what} {ep.name!r} (entry point {ep.value}): loading failed: {type(e).__name__}: {e}"
        ) from None
