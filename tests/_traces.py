"""Counting traces of the engine's programs, from the tests (the package keeps no counters).

``traces()`` wraps ``engine.start`` (also bound as ``programs.start``) and the two round
advancers (``engine.advance``, ``fused.advance``) for the duration of a ``with`` block.  A
wrapper's Python body runs only when JAX traces the program that calls it, so the counts are
the programs traced (compiled, unless a cache had them) inside the block: "simulate" the start
programs, "rounds" the round scans.
"""

from __future__ import annotations

import contextlib
import functools

import pytest

from jaxbco import engine, fused, programs


@contextlib.contextmanager
def traces():
    """{"simulate": n, "rounds": n}: traces inside the block so far (a live dict)."""
    counts = {"simulate": 0, "rounds": 0}

    def counting(kind, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            counts[kind] += 1
            return fn(*args, **kwargs)

        return wrapper

    with pytest.MonkeyPatch.context() as mp:
        start = counting("simulate", engine.start)
        mp.setattr(engine, "start", start)
        mp.setattr(programs, "start", start)
        mp.setattr(engine, "advance", counting("rounds", engine.advance))
        mp.setattr(fused, "advance", counting("rounds", fused.advance))
        yield counts
