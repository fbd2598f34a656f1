"""Option types and limits shared by the commands: integers and numbers checked by argparse
(one-line ``argument --seeds: ...`` errors, exit code 2), the hard limits of the engine, and a
memory estimate that refuses a study that cannot fit before anything is allocated."""

from __future__ import annotations

import argparse
import math
import os

from jaxbco._src.limits import MAX_DIM as MAX_DIM
from jaxbco._src.limits import MAX_HORIZON as MAX_HORIZON
from jaxbco._src.limits import MAX_KEY as MAX_KEY
from jaxbco._src.limits import MAX_SEEDS as MAX_SEEDS

#: ``--problem``'s help (every command that takes one).
PROBLEM_HELP = (
    "a registered problem (jaxbco.problems.names(), e.g. quadratic-ball) or your own "
    "as module:name (a jaxbco.Problem or a function returning one, imported from "
    "the working directory or PYTHONPATH)"
)


def _limit(v) -> str:
    if v >= 2**20:
        exp = math.log2(v)
        if exp == int(exp):
            return f"2^{int(exp)}"
        if math.log2(v + 1) == int(math.log2(v + 1)):
            return f"2^{int(math.log2(v + 1))} - 1"
        if math.log2(v + 2) == int(math.log2(v + 2)):
            return f"2^{int(math.log2(v + 2))} - 2"
    return str(v)


def integer(low: int | None = None, high: int | None = None):
    """argparse type: an integer in [low, high]; ``1e4`` and ``10_000`` are read as 10000,
    ``2.5`` or ``nan`` are refused."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            try:
                f = float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"must be an integer; got {text!r}") from None
            if not math.isfinite(f) or f != int(f):
                raise argparse.ArgumentTypeError(f"must be an integer; got {text!r}") from None
            value = int(f)
        if (low is not None and value < low) or (high is not None and value > high):
            if high is None:
                want = f">= {low}"
            elif low is None:
                want = f"<= {_limit(high)}"
            else:
                want = f"in [{low}, {_limit(high)}]"
            raise argparse.ArgumentTypeError(f"must be an integer {want}; got {text}")
        return value

    parse.__name__ = "integer"
    return parse


def number(low: float | None = None, *, low_open: bool = False, high: float | None = None):
    """argparse type: a finite number (no nan/inf), optionally > or >= ``low`` (``low_open``)
    and < ``high``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number; got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number; got {text!r}")
        if low is not None and (value <= low if low_open else value < low):
            if high is not None:
                raise argparse.ArgumentTypeError(
                    f"must lie in {'(' if low_open else '['}{low:g}, {high:g}); got {text}"
                )
            raise argparse.ArgumentTypeError(
                f"must be {'>' if low_open else '>='} {low:g}; got {text}"
            )
        if high is not None and value >= high:
            raise argparse.ArgumentTypeError(
                f"must lie in {'(' if low_open else '['}{low:g}, {high:g}); got {text}"
            )
        return value

    parse.__name__ = "number"
    return parse


def physical_memory() -> int | None:
    """Bytes of RAM of this machine (None where unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not Linux/macOS
        return None


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:.3g} {unit}"
        n /= 1000
    return f"{n:.3g} PB"  # pragma: no cover


def estimate_bytes(settings: int, seeds: int, checkpoints: int, dim: int, itemsize: int) -> float:
    """A lower estimate of a study's peak memory: the curves (5 metrics x checkpoints per run,
    on the device, on the host and once more while labelled), the carry (~16 vectors of d per
    run) and x*, the final points and the failed flags."""
    runs = float(settings) * float(seeds)
    curves = 5 * float(checkpoints) * runs * itemsize * 3
    carry = 16 * float(dim) * runs * itemsize + float(seeds) * float(dim) * itemsize
    return curves + carry + 16 * runs


def check_memory(
    what: str, settings: int, seeds: int, checkpoints: int, dim: int, itemsize: int
) -> None:
    """ValueError when ``estimate_bytes`` exceeds this machine's memory."""
    need = estimate_bytes(settings, seeds, checkpoints, dim, itemsize)
    have = physical_memory()
    if have is not None and need > have:
        by_dim = estimate_bytes(settings, seeds, 0, dim, itemsize) > need / 2
        advice = (
            f"lower --dim (the vectors of d = {dim} are most of it)"
            if by_dim
            else "use fewer seeds or checkpoints, or split the seeds over hosts (--coordinator)"
        )
        raise ValueError(
            f"{what} needs at least {_size(need)} of memory ({settings} setting(s) x "
            f"{seeds} seeds x {checkpoints} checkpoints, d = {dim}), more than this "
            f"machine's {_size(have)}; {advice}"
        )


def check_out_dir(path: str) -> str:
    """``--out`` for a command that writes only at its end: an existing folder must be
    writable; a new one must be creatable (its nearest existing parent a writable folder).
    Nothing is created here (a command refused later leaves no empty folder behind)."""
    probe = os.path.abspath(path)
    if os.path.exists(probe) and not os.path.isdir(probe):
        raise ValueError(f"output folder {path!r} is a file; choose another with --out")
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe) or not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError(
            f"output folder {path!r} cannot be written ({probe!r} is not a writable "
            f"folder); choose another with --out"
        )
    return path
