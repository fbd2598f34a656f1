"""The algorithm registry: one record per algorithm, read by the CLI, the comparison tables,
the figures and the tests.

An algorithm of your own is registered with ``register`` (see its example).  After that ``two-point-dual`` is a name like ``rectified-bco``: ``jaxbco compare --algorithms
rectified-bco,two-point-dual`` (once the module is imported; from the command line name it as
``mypkg.algs:TwoPointDual``, which imports it), ``jaxbco tune --algorithm``, study files,
``jaxbco.compare.compare``.  Its display name and theory orders appear in tables, its
exponents beside the fitted ones, and figures give it a colour no other series in the same
figure has (``jaxbco.plotting.style.assign``).

``get(spec)`` resolves a registered name, an installed package's entry point (group
``jaxbco.algorithms``), a ``"module:Name"`` spec, an ``AbstractAlgorithm``
class or instance, or a record; an unregistered class gets a record named by its spec.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from jaxbco._src import specs as _specs
from jaxbco.algorithms._base import AbstractAlgorithm
from jaxbco.algorithms.record import METRICS as METRICS  # API
from jaxbco.algorithms.record import Record as Record  # API

_RECORDS: dict[str, Record] = {}
#: name -> class of every registered algorithm, in listing order (the public view).
ALGORITHMS: dict[str, type] = {}
_LOADED_ENTRY_POINTS = False


def _sync() -> None:
    ALGORITHMS.clear()
    for r in sorted(_RECORDS.values(), key=lambda r: r.order):
        ALGORITHMS[r.name] = r.cls if r.cls is not None else r.factory


def register(name: str, factory: Callable | None = None, *, replace: bool = False, **fields):
    """Register an algorithm under ``name``; usable as a decorator (``factory`` omitted).

    Args:
        name: the algorithm's name on every command.
        factory: an ``AbstractAlgorithm`` subclass, or a function problem ↦ algorithm.
        replace: replace a factory already registered under ``name`` (the fields not given
            are kept from its record).
        **fields: the other ``Record`` fields (display, regret_order, exponents, colour, ...).

    Returns:
        The factory (or, as a decorator, a function registering it).

    Raises:
        ValueError: for a name registered to another factory without ``replace``, a name no
            ``--algorithms`` list can address (a comma or a colon), or a bad ``Record``
            field.

    Example:
        >>> from jaxbco.algorithms import AgarwalTwoPointXOnly, registry
        >>> @registry.register("my-two-point", display="my two-point descent",
        ...                    regret_order="T^(1/2)", exponents={"regret": 0.5})
        ... class MyTwoPoint(AgarwalTwoPointXOnly):
        ...     pass
        >>> registry.get("my-two-point").label
        'my two-point descent'
        >>> registry.unregister("my-two-point")
    """
    if isinstance(name, str) and ("," in name or ":" in name):
        raise ValueError(
            f"algorithm name {name!r} cannot be named on the command line (--algorithms is "
            f"comma-separated, and a colon marks a module:Name spec); use letters, digits, "
            f"'-', '_' or '.'"
        )

    return _register(name, factory, replace, fields)


def _register(name, factory, replace: bool, fields: dict):
    """``register`` without its rule on names (a spec-named record is adopted as it is)."""

    def add(f):
        old = _RECORDS.get(name)
        if old is not None and old.factory is not f and not replace:
            raise ValueError(
                f"algorithm {name!r} is already registered (to {old.factory!r}); "
                f"pass replace=True to replace it"
            )
        # replacing keeps what the new call does not say (the paper's theorems, its colour)
        record = (
            Record(name, f, **fields)
            if old is None
            else dataclasses.replace(old, factory=f, **fields)
        )
        _RECORDS[name] = record
        _sync()
        return f

    return add if factory is None else add(factory)


def unregister(name: str) -> None:
    """Remove a record (a test's or a notebook's own algorithm)."""
    _RECORDS.pop(name, None)
    _sync()


def names() -> list[str]:
    """The registered algorithm names, in listing order (built-ins first).

    Installed packages' entry points (group ``jaxbco.algorithms``) are loaded first.

    Returns:
        The names, a list of str.

    Example:
        >>> from jaxbco.algorithms import registry
        >>> registry.names()[0]
        'rectified-bco'
    """
    _entry_points()
    return list(ALGORITHMS)


def records() -> list[Record]:
    """Every record, in listing order."""
    return [_RECORDS[n] for n in names()]


def reference() -> Record:
    """The algorithm the theorem bounds belong to (``theorems=True``): the paper's."""
    found = [r for r in records() if r.theorems]
    if not found:
        raise ValueError(
            "no registered algorithm carries the paper's theorems (theorems=True): "
            "re-register it with theorems=True"
        )
    return found[0]


def _entry_points() -> None:
    global _LOADED_ENTRY_POINTS
    if _LOADED_ENTRY_POINTS:
        return
    _LOADED_ENTRY_POINTS = True
    _specs.adopt_entry_points("jaxbco.algorithms", "algorithm", _RECORDS.__contains__, _adopt_ep)


def _adopt_ep(name, obj, where):
    _adopt(obj, name, where)


def _owner(obj) -> Record | None:
    for r in _RECORDS.values():
        if r.factory is obj or (isinstance(obj, type) and r.cls is obj):
            return r
    return None


def _adopt(obj, name: str, where: str) -> Record:
    """The record of ``obj`` (a record, class, instance or factory), registered under
    ``name`` when it has none."""
    if isinstance(obj, Record):
        if obj.name not in _RECORDS:
            _register(
                obj.name,
                obj.factory,
                False,
                {
                    f.name: getattr(obj, f.name)
                    for f in dataclasses.fields(Record)
                    if f.name not in ("name", "factory")
                },
            )
        return _RECORDS[obj.name]
    if isinstance(obj, AbstractAlgorithm):
        # a configured instance: its class's record (name, display, theory, colour) building
        # this instance, not registered (the class's own record stays as it is)
        owner = _owner(type(obj))
        if owner is not None:
            return dataclasses.replace(owner, factory=obj)
        return Record(name, obj)
    if isinstance(obj, type) and not issubclass(obj, AbstractAlgorithm):
        raise ValueError(
            f"algorithm {where}: {obj.__name__} is not a subclass of "
            f"jaxbco.algorithms.AbstractAlgorithm"
        )
    if not callable(obj):
        raise ValueError(
            f"algorithm {where}: {obj!r} is neither an AbstractAlgorithm class or "
            f"instance nor a function problem -> algorithm"
        )
    owner = _owner(obj)
    if owner is not None:
        return owner
    _register(name, obj, True, {})
    return _RECORDS[name]


def get(spec) -> Record:
    """The record of an algorithm given by name, spec, class, instance or record.

    Args:
        spec: a registered name, an entry point's name, a ``module:Name`` spec, an
            ``AbstractAlgorithm`` class or instance (an unregistered class gets a record named
            by its class), or a ``Record``.

    Returns:
        The ``Record``.

    Raises:
        ValueError: (one line) naming the choices for an unknown name.

    Example:
        >>> from jaxbco.algorithms import registry
        >>> record = registry.get("recoo")
        >>> record.cls.__name__, record.exponents["regret"]
        ('RECOO', 0.5)
    """
    if isinstance(spec, Record):
        return _adopt(spec, spec.name, repr(spec.name))
    if isinstance(spec, AbstractAlgorithm | type):
        cls = spec if isinstance(spec, type) else type(spec)
        owner = None if isinstance(spec, AbstractAlgorithm) else _owner(spec)
        return owner or _adopt(spec, cls.__name__, cls.__name__)
    if not isinstance(spec, str):
        raise ValueError(
            f"algorithm must be a name, a module:Name spec, an AbstractAlgorithm "
            f"class or instance; got {type(spec).__name__}"
        )
    if spec in _RECORDS:
        return _RECORDS[spec]
    _entry_points()
    if spec in _RECORDS:
        return _RECORDS[spec]
    if not _specs.is_spec(spec):
        raise ValueError(
            f"unknown algorithm {spec!r}; choose one of: {', '.join(names())}, "
            f"or name your own as module:Name"
        )
    obj = _specs.load(spec, "algorithm")
    return _adopt(obj, spec, spec)


def resolve(specs) -> list[Record]:
    """``get`` for each of several algorithms.

    Args:
        specs: a list of what ``get`` takes, a comma-separated string of names, or None
            (every registered algorithm).

    Returns:
        A list of ``Record``.

    Raises:
        ValueError: for an unknown name, an empty list, or a name given twice.

    Example:
        >>> from jaxbco.algorithms import registry
        >>> [record.name for record in registry.resolve("rectified-bco,flaxman-bgd")]
        ['rectified-bco', 'flaxman-bgd']
    """
    if specs is None:
        return records()
    if isinstance(specs, str):
        specs = [s.strip() for s in specs.split(",") if s.strip()]
    found = [get(s) for s in specs]
    if not found:
        raise ValueError(f"no algorithm named; choose from: {', '.join(names())}")
    twice = sorted({r.name for r in found if sum(q.name == r.name for q in found) > 1})
    if twice:
        raise ValueError(f"algorithm(s) {twice} named twice")
    return found
