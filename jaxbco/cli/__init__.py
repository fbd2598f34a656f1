"""Command line: ``jaxbco run|sweep|compare|tune|plot`` (also ``python -m jaxbco``).

One module per command (``run``, ``sweep``, ``compare``, ``tune``, ``plot``), each with an
``add_parser(sub)`` that registers it and sets ``func``; ``main`` parses and runs it under
``report_errors``, the one error handler.  Exit codes:

* 0: done;
* 2: bad input (a flag, a study file, a state or results file, an output folder): one line
  ``jaxbco: error: ...`` naming the parameter, the value and what is allowed, never a
  traceback (argparse's own errors read the same, ``jaxbco run: error: argument ...``);
* 1: an unexpected failure (a bug, or the machine ran out of memory): one line with the
  exception and "please report"; ``--traceback`` shows the full traceback instead;
* 130 (Ctrl-C) / 143 (SIGTERM): interrupted; ``run`` and ``sweep`` keep the finished chunks,
  continue with ``--resume``.

Every command compiles through JAX's persistent compilation cache (in
``$XDG_CACHE_HOME/jaxbco/jax``, else ``~/.cache/jaxbco/jax``; ``--compile-cache DIR`` moves it,
``--no-compile-cache`` turns it off), so the same command run again skips XLA compilation.
It is switched on in ``main`` only, never by ``import jaxbco``, and ``main`` restores JAX's
settings when it returns.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import re
import shutil
import signal
import sys
import threading
import warnings

from jaxbco._src.compile_cache import compile_cache, default_cache_dir
from jaxbco._src.output_folders import release_folders, visible

_RESUMABLE = ("run", "sweep")  # commands whose finished chunks survive an interrupt


_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$|^-(inf|infinity|nan)$", re.I)


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage block): ``prog: error: message``, exit 2; no
    abbreviated options (``--seed 3`` is an error, not ``--seeds 3``)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        # a negative number in any notation (-1e-3, -.5, -inf, -nan) is a value, not an
        # option, so that ``--c -1e-3`` reaches the option's own range check
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _Help(argparse.RawDescriptionHelpFormatter):
    """Every option's help ends with its default (unless it states one, or has none)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "%(default)" in text or "default" in text.lower() or action.option_strings == []:
            return text
        if action.default is None or action.default is False or action.default == argparse.SUPPRESS:
            return text
        return (text + " " if text else "") + "(default: %(default)s)"


class _Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP), raised in the main thread so that the same clean-up runs as for
    Ctrl-C: the state file stays the last complete one, temporary files are removed."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def add_common_arguments(p: argparse.ArgumentParser) -> None:
    """--compile-cache DIR, --no-compile-cache and --traceback, on every command."""
    g = p.add_argument_group("compilation cache and debugging")
    g.add_argument(
        "--compile-cache",
        metavar="DIR",
        default=None,
        help="folder of JAX's persistent compilation cache (default: "
        "$XDG_CACHE_HOME/jaxbco/jax or ~/.cache/jaxbco/jax)",
    )
    g.add_argument(
        "--no-compile-cache",
        action="store_true",
        help="compile everything afresh; read and write no compilation cache",
    )
    g.add_argument(
        "--traceback",
        action="store_true",
        help="on an unexpected error, show the full traceback instead of one line",
    )


def _parser() -> argparse.ArgumentParser:
    # cycle: jaxbco.cli <-> jaxbco.cli.{plot,tune} (their main() calls jaxbco.cli.main)
    from jaxbco.cli import compare, plot, run, sweep, tune

    p = _Parser(prog="jaxbco", description=__doc__.splitlines()[0], formatter_class=_Help)
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for command in (run, sweep, compare, tune, plot):
        c = command.add_parser(sub)
        c.formatter_class = _Help
        add_common_arguments(c)
    return p


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text[:500] if text else type(err).__name__


def _out_of_memory(err: BaseException) -> bool:
    return (
        isinstance(err, MemoryError)
        or "RESOURCE_EXHAUSTED" in str(err)
        or "Out of memory" in str(err)
    )


def report_errors(func, args, name: str = "jaxbco", resumable: bool = False) -> int:
    """``func(args)`` with every failure turned into one line on stderr and an exit code:
    ValueError / NotImplementedError (bad input) and OSError (a file or folder) -> 2;
    Ctrl-C -> 130, SIGTERM -> 143 (``resumable``: the finished chunks are kept); anything else
    -> 1 with "please report" (``args.traceback``: re-raised, full traceback)."""
    try:
        return func(args)
    except (ValueError, NotImplementedError) as err:
        print(f"{name}: error: {_one_line(err)}", file=sys.stderr)
        return 2
    except OSError as err:
        if err.errno == errno.ENOSPC:
            print(f"{name}: error: {_no_space(err, args, resumable)}", file=sys.stderr)
            return 2
        where = f" {visible(err.filename)!r}" if getattr(err, "filename", None) else ""
        print(
            f"{name}: error: cannot use{where}: {err.strerror or _one_line(err)}", file=sys.stderr
        )
        return 2
    except KeyboardInterrupt as err:
        _settle()
        more = "; the finished chunks are kept, continue with --resume" if resumable else ""
        if isinstance(err, _Terminated):
            print(f"{name}: terminated (signal {err.signum}){more}", file=sys.stderr)
            return 128 + err.signum
        print(f"{name}: interrupted{more}", file=sys.stderr)
        return 130
    except Exception as err:  # noqa: BLE001 - the one place where anything unexpected ends
        if getattr(args, "traceback", False):
            raise
        if _out_of_memory(err):
            print(
                f"{name}: error: out of memory ({type(err).__name__}); use fewer seeds, "
                f"settings or checkpoints",
                file=sys.stderr,
            )
            return 1
        print(
            f"{name}: internal error: {type(err).__name__}: {_one_line(err)} (please report "
            f"this to the jaxbco maintainers with the command line; --traceback shows where "
            f"it happened)",
            file=sys.stderr,
        )
        return 1


def _no_space(err: OSError, args, resumable: bool) -> str:
    """The one line for a full disk: where, how much is free, and what is kept."""
    where = visible(err.filename) if err.filename else getattr(args, "out", None) or os.getcwd()
    folder = where if os.path.isdir(where) else os.path.dirname(os.path.abspath(where))
    try:
        free = f"{shutil.disk_usage(folder).free / 2**20:.1f} MiB free"
    except OSError:
        free = "free space unknown"
    kept = (
        "; the finished chunks are kept: free some space, then continue with --resume"
        if resumable
        else "; nothing was replaced: free some space and run it again"
    )
    return f"no space left on the device of {where!r} ({free}){kept}"


def _settle() -> None:
    """After an interrupt: wait for the computations still running on the devices (the chunk
    that was interrupted), so the process does not tear down under them."""
    jax = sys.modules.get("jax")
    if jax is None:
        return
    for a in jax.live_arrays():
        try:
            a.block_until_ready()
        except Exception:  # noqa: BLE001 - a donated or deleted buffer: nothing to wait for
            pass


@contextlib.contextmanager
def _one_line_warnings(name: str):
    """Warnings as one line each on stderr ("jaxbco: warning: ..."), without the source
    location and line Python adds, for the duration."""

    def show(message, category, filename, lineno, file=None, line=None):
        print(f"{name}: warning: {message}", file=sys.stderr if file is None else file, flush=True)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


@contextlib.contextmanager
def _signals():
    """SIGTERM and SIGHUP raise ``_Terminated`` in the main thread (like Ctrl-C), for the
    duration; the previous handlers are restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise _Terminated(signum)

    old = {}
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            old[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


@contextlib.contextmanager
def _x64_restored():
    """A command may switch JAX to 64 bits (``--dtype float64``) for itself: an in-process
    call (a notebook, a test) finds JAX's setting and the environment as they were before."""
    env = os.environ.get("JAX_ENABLE_X64")
    jax = sys.modules.get("jax")  # imported lazily by the commands (CLI start-up)
    before = bool(jax.config.jax_enable_x64) if jax is not None else None
    try:
        yield
    finally:
        if env is None:
            os.environ.pop("JAX_ENABLE_X64", None)
        else:
            os.environ["JAX_ENABLE_X64"] = env
        jax = sys.modules.get("jax")
        if jax is not None and bool(jax.config.jax_enable_x64) != bool(before):
            jax.config.update("jax_enable_x64", bool(before))


def main(argv=None, *, name: str = "jaxbco") -> int:
    """``jaxbco COMMAND [options]``; ``name`` starts the error lines (``python -m
    jaxbco.compare`` passes "jaxbco compare")."""
    args = _parser().parse_args(argv)
    path = False if args.no_compile_cache else (args.compile_cache or default_cache_dir())
    try:
        with _signals(), compile_cache(path), _one_line_warnings(name), _x64_restored():
            code = report_errors(args.func, args, name, resumable=args.command in _RESUMABLE)
    finally:
        release_folders()  # a run's --out is free again (``jaxbco._src.output_folders.lock_folder``)
    if argv is None and code in (129, 130, 143):
        # Interrupted on the real command line: every file is complete (atomic writes), so end
        # now; tearing the interpreter down under XLA's threads can crash (SIGSEGV) after an
        # interrupt mid-computation.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
