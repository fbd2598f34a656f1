"""Counting traces of the engine's programs, from the tests (the package keeps no counters).

``traces()`` wraps ``engine.start`` (also bound as ``dispatch.start``) and every back-end's
round advancer (``backends``' ``advance`` methods) for the duration of a ``with`` block.  A
wrapper's Python body runs only when JAX traces the program that calls it, so the counts are
the programs traced (compiled, unless a cache had them) inside the block: "simulate" the start
programs, "rounds" the round scans.
"""

from __future__ import annotations

import contextlib
import functools

import pytest

from jaxbco import backends, engine
from jaxbco.runner import dispatch


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
        mp.setattr(dispatch, "start", start)
        for cls in (backends.SeedsMinorScan, backends.VmapScan, backends.FusedKernel):
            mp.setattr(cls, "advance", counting("rounds", cls.advance))
        yield counts
