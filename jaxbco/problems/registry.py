"""The problem registry: one record per named problem, and ``make``, which builds a problem
from a registered name, an installed package's entry point (group ``jaxbco.problems``), a
``module:Name`` spec of your own or a ``Problem`` (the built-ins register in
``jaxbco.problems``; this module is its machinery, re-exported there)."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable

import numpy as np

from jaxbco._src import checks, specs
from jaxbco.problem import Problem


@dataclasses.dataclass(frozen=True)
class Record:
    """One named problem of the registry.

    Args:
        name: the problem's name.
        builder: a function returning a ``Problem`` (keywords ``dim`` and ``horizon`` where it
            takes them).
        takes_horizon: its data depend on T: the horizon is passed.
        min_dim: the smallest d it builds; None: d is fixed and the builder checks ``dim``
            itself.
    """

    name: str
    builder: Callable[..., Problem]
    takes_horizon: bool = False
    min_dim: int | None = 1


_RECORDS: dict[str, Record] = {}
#: name -> builder of every registered problem (the public view of the registry).
PROBLEMS: dict[str, Callable[..., Problem]] = {}
_LOADED_ENTRY_POINTS = False


def register(
    name: str,
    builder: Callable | None = None,
    *,
    takes_horizon: bool = False,
    min_dim: int | None = 1,
    replace: bool = False,
):
    """Register a problem builder under ``name``; usable as a decorator (``builder`` omitted).

    Args:
        name: a non-empty name without surrounding blanks.
        builder: a function returning a ``Problem``, taking ``dim`` (and ``horizon`` if
            ``takes_horizon``) as keywords.
        takes_horizon: pass the horizon T to the builder (its data depend on T).
        min_dim: the smallest d it builds (None: a fixed d, checked by the builder).
        replace: replace a builder already registered under ``name``.

    Returns:
        The builder (or, as a decorator, a function registering it).

    Raises:
        ValueError: for a bad name, or a name registered to another builder without
            ``replace``.

    Example:
        >>> import jax.numpy as jnp, jaxbco
        >>> from jaxbco import problems
        >>> @problems.register("my-box", min_dim=2)
        ... def my_box(dim=2):
        ...     p = problems.make("switching-box", dim=dim)
        ...     return jaxbco.Problem(p.domain, jaxbco.losses.Quadratic(), p.loss_data,
        ...                           p.constraint, p.constraint_data)
        >>> problems.make("my-box", dim=3).dim
        3
        >>> problems.unregister("my-box")
    """

    def add(f):
        if not isinstance(name, str) or not name or name != name.strip():
            raise ValueError(
                f"a problem's name must be a non-empty string without surrounding "
                f"blanks; got {name!r}"
            )
        old = _RECORDS.get(name)
        if old is not None and old.builder is not f and not replace:
            raise ValueError(f"problem {name!r} is already registered; pass replace=True")
        _RECORDS[name] = Record(name, f, takes_horizon, min_dim)
        PROBLEMS[name] = f
        return f

    return add if builder is None else add(builder)


def unregister(name: str) -> None:
    """Remove a registered problem."""
    _RECORDS.pop(name, None)
    PROBLEMS.pop(name, None)


#: The largest dimension ``make`` builds (the builders allocate O(d) arrays up front).
MAX_DIM = 2**20


def names() -> list[str]:
    """Every registered problem's name (entry points of installed packages included), a list."""
    _entry_points()
    return list(PROBLEMS)


def _entry_points() -> None:
    global _LOADED_ENTRY_POINTS
    if _LOADED_ENTRY_POINTS:
        return
    _LOADED_ENTRY_POINTS = True
    specs.adopt_entry_points("jaxbco.problems", "problem", _RECORDS.__contains__, _adopt)


def _adopt(name, obj, where) -> None:
    """Register an entry point's problem: a builder, or a ``Problem`` as it is."""
    if not (isinstance(obj, Problem) or callable(obj)):
        raise ValueError(
            f"problem {name!r} ({where}) must be a jaxbco.Problem or a function "
            f"returning one; got {type(obj).__name__}"
        )
    register(
        name,
        obj if callable(obj) else (lambda dim=None, horizon=None: obj),
        takes_horizon=_takes(obj, "horizon"),
        min_dim=1 if _takes(obj, "dim") else None,
    )


def _takes(obj, keyword: str) -> bool:
    if isinstance(obj, Problem) or not callable(obj):
        return False
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return False
    return keyword in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _own(spec: str, obj, dim, horizon) -> Problem:
    """The problem a ``module:Name`` spec names: a ``Problem``, or a builder called with the
    ``dim`` and ``horizon`` it takes."""
    if isinstance(obj, Problem):
        if dim is not None and dim != obj.dim:
            raise ValueError(
                f"problem {spec!r} is a fixed Problem of dimension {obj.dim}; "
                f"--dim {dim} does not apply (give a builder taking dim)"
            )
        return obj
    if not callable(obj):
        raise ValueError(
            f"problem {spec!r} must be a jaxbco.Problem or a function returning one; "
            f"got {type(obj).__name__}"
        )
    kwargs = {}
    if dim is not None:
        if not _takes(obj, "dim"):
            raise ValueError(
                f"problem {spec!r}: its builder takes no dim; --dim {dim} does not apply"
            )
        kwargs["dim"] = dim
    if horizon is not None and _takes(obj, "horizon"):
        kwargs["horizon"] = horizon
    try:
        problem = obj(**kwargs)
    except Exception as e:  # the user's builder: their mistake, said in one line
        raise ValueError(
            f"problem {spec!r}: its builder raised {type(e).__name__}: "
            f"{' '.join(str(e).split())[:200]}"
        ) from None
    if not isinstance(problem, Problem):
        raise ValueError(
            f"problem {spec!r}: its builder returned {type(problem).__name__}, not a jaxbco.Problem"
        )
    return problem


def check(name) -> None:
    """Refuse an unknown problem name, or a ``module:Name`` spec whose module or name is
    missing, without building anything (a command's first check)."""
    if isinstance(name, Problem) or name in _RECORDS:
        return
    _entry_points()
    if not isinstance(name, str) or (name not in _RECORDS and not specs.is_spec(name)):
        raise ValueError(
            f"unknown problem {name!r}; choose one of: {', '.join(names())}, "
            f"or name your own as module:name"
        )
    if name not in _RECORDS:
        specs.load(name, "problem")


def make(name, dim: int | None = None, horizon: int | None = None) -> Problem:
    """Build a problem, its ``strongly_convex`` flag set, from a name, a spec or a ``Problem``.

    Args:
        name: a registered name (``names()``), an installed entry point's name, a
            ``module:Name`` spec (a ``Problem`` or a builder) or a ``Problem`` (returned as is).
        dim: the dimension d (None: the builder's default).
        horizon: T; reaches the builders whose data depend on T (yu-neely's permutation, the
            portfolio's replayed days); the others ignore it.

    Returns:
        The ``Problem``.

    Raises:
        TypeError: for a ``name`` that is neither a string nor a ``Problem`` (a ``KindError``).
        ValueError: naming the choices for an unknown name, and the allowed range for a bad
            ``dim`` or ``horizon``.

    Example:
        >>> from jaxbco import problems
        >>> problems.make("hutchinson-toy").dim
        2
        >>> problems.make("strongly-convex-ball", dim=3).strongly_convex
        True
    """
    if isinstance(name, Problem):
        return _own("given", name, dim, horizon)
    if not isinstance(name, str):
        raise checks.KindError(
            f"problem must be a name (one of: {', '.join(names())}), a "
            f"module:Name spec or a Problem; got {checks.describe(name)}"
        )
    if horizon is not None:
        horizon = checks.check_horizon(horizon)
    if name not in _RECORDS:
        _entry_points()
    if name not in _RECORDS:
        if not specs.is_spec(name):
            raise ValueError(
                f"unknown problem {name!r}; choose one of: {', '.join(names())}, "
                f"or name your own as module:name"
            )
        if dim is not None and (
            isinstance(dim, bool)
            or not isinstance(dim, (int, np.integer))
            or not 1 <= dim <= MAX_DIM
        ):
            raise ValueError(f"dim (--dim) must be an integer in [1, {MAX_DIM}]; got {dim!r}")
        return _own(name, specs.load(name, "problem"), dim, horizon)
    record = _RECORDS[name]
    if dim is not None and record.min_dim is not None:
        if (
            isinstance(dim, bool)
            or not isinstance(dim, (int, np.integer))
            or not record.min_dim <= dim <= MAX_DIM
        ):
            raise ValueError(
                f"dim (--dim) of {name} must be an integer in [{record.min_dim}, "
                f"{MAX_DIM}]; got {dim!r}"
            )
        dim = int(dim)
    kwargs = {} if dim is None else {"dim": dim}  # a fixed-d builder checks dim itself
    if horizon is not None and record.takes_horizon:
        kwargs["horizon"] = horizon
    return record.builder(**kwargs)
