"""Which back-end runs a problem with an algorithm, chosen from what its components declare.

* seeds-minor: every component declares ``blocks`` (``jaxbco._blocks``); the round's code
  runs on (d, runs) blocks inside one ``lax.scan`` (``jaxbco._minor``).
* vmap: otherwise; the same code per run under ``vmap`` (a user's own component that
  declares nothing runs here, unchanged).  Replayed directions run on either.
* fused kernel: on a GPU, the round loop as one Pallas kernel where ``jaxbco.fused``
  supports the problem (chosen in ``jaxbco.simulate``).

``blocker`` names the component that kept a run off the seeds-minor back-end; ``Result.engine``
and ``jaxbco run``'s summary report it.
"""

from __future__ import annotations

from jaxbco import _blocks

SEEDS_MINOR = "seeds-minor"
VMAP = "vmap"
FUSED = "fused kernel"


def blocker(problem, algorithm, flag: str = "blocks") -> str | None:
    """Why a run cannot take the seeds-minor back-end, or None when it can.

    Each component (set, loss, loss data, constraint, constraint data, algorithm) and each prox
    method the algorithm calls must declare ``blocks = True``; the first that does not is named.
    Replayed directions run on either back-end.

    Args:
        problem: the problem.
        algorithm: the algorithm.
        flag: "blocks" for the seeds-minor back-end, "kernel" for the fused GPU kernel's
            declaration.

    Returns:
        None, or one phrase naming the component that keeps the run off.
    """
    parts = (("set", problem.domain), ("loss", problem.loss), ("loss data", problem.loss_data),
             ("constraint", problem.constraint), ("constraint data", problem.constraint_data),
             ("algorithm", algorithm))
    for role, component in parts:
        bad = _blocks.undeclared(component, flag)
        if bad is not None:
            where = (f"the {role}" if bad is component
                     else f"inside the {role} {type(component).__name__}")
            return f"{type(bad).__name__} does not declare {flag} = True ({where})"
    for method in algorithm.prox_methods(problem):
        if not method.__dict__.get(flag, False):
            what = getattr(method, "name", method.__name__)
            where = "on blocks" if flag == "blocks" else "in the fused kernel"
            return (f"the prox method {method.__name__} ({what}) for "
                    f"{type(problem.constraint).__name__} on {type(problem.domain).__name__} "
                    f"does not run {where}")
    return None


def choose(problem, algorithm) -> tuple[str, str]:
    """The back-end that runs ``problem`` with ``algorithm``, with the reason a faster one was not
    taken.

    Args:
        problem: the problem.
        algorithm: the algorithm.

    Returns:
        ("seeds-minor", "") or ("vmap", the ``blocker``'s phrase).

    Example:
        >>> from jaxbco import algorithms, backend, problems
        >>> backend.choose(problems.make("quadratic-ball", 3), algorithms.RectifiedBCO())
        ('seeds-minor', '')
    """
    why = blocker(problem, algorithm)
    return (SEEDS_MINOR, "") if why is None else (VMAP, why)
