"""Structure a component class declares itself: a class that defines how its values are made
(a sequence's ``sample``, a loss's ``value``, a set's ``project``) does not inherit what a
parent declared about its own values (``Fixed``'s ``constant``, ``Quadratic``'s closed-form
``offline``, ``L2Ball``'s ``form``): its ``sample`` or ``value`` may break every such claim.

    class Drifting(sequences.Fixed):      # constant = False here, unless it says otherwise
        def sample(self, key, t): ...

A class restates in its own body what still holds.  The built-in classes subclass the abstract
bases directly, so this changes nothing for them.
"""

from __future__ import annotations


def own_structure(cls, methods: tuple, defaults: dict) -> None:
    """On ``cls`` (from an ``__init_subclass__``): if it defines any of ``methods`` in its own
    body, every name of ``defaults`` it does not set itself takes that default (the abstract
    base's), never a parent's value."""
    if not any(m in cls.__dict__ for m in methods):
        return
    for name, value in defaults.items():
        if name not in cls.__dict__:
            setattr(cls, name, value)
