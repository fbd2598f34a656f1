"""Command line: ``jaxbco run|sweep|compare|tune|plot`` (also ``python -m jaxbco``).

One module per command (``run``, ``sweep``, ``compare``, ``tune``, ``plot``), each with an
``add_parser(sub)`` that registers it and sets ``func``; ``main`` parses and runs it under
``report_errors``, the one error handler: bad input gives a one-line error and exit code 2,
never a traceback.
"""

from __future__ import annotations

import argparse
import sys

_RESUMABLE = ("run", "sweep")  # commands whose finished chunks survive an interrupt


def _parser() -> argparse.ArgumentParser:
    from jaxbco.cli import compare, plot, run, sweep, tune

    p = argparse.ArgumentParser(prog="jaxbco", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    for command in (run, sweep, compare, tune, plot):
        command.add_parser(sub)
    return p


def report_errors(func, args, name: str = "jaxbco", resumable: bool = False) -> int:
    """``func(args)``, with a ValueError or NotImplementedError printed as one line
    ``<name>: error: <message>`` (exit code 2) and an interrupt as ``<name>: interrupted``
    (exit code 130; ``resumable``: the finished chunks are kept)."""
    try:
        return func(args)
    except (ValueError, NotImplementedError) as err:
        print(f"{name}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        more = "; the finished chunks are kept, continue with --resume" if resumable else ""
        print(f"{name}: interrupted{more}", file=sys.stderr)
        return 130


def main(argv=None, *, name: str = "jaxbco") -> int:
    """``jaxbco COMMAND [options]``; ``name`` starts the error lines (``python -m
    jaxbco.compare`` passes "jaxbco compare")."""
    args = _parser().parse_args(argv)
    return report_errors(args.func, args, name, resumable=args.command in _RESUMABLE)
