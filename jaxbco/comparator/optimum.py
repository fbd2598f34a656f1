"""x* solved once, handed to every run that shares it: the seeds' x* with its certificate, the
method that solved it, and what it belongs to (the problem, the master key, the seeds, T and
the dtype).  ``Result.optimum`` gives it after a run; ``sweep(..., optimum=...)`` takes it,
checks that it belongs to that run (a mismatch is refused naming the field), and neither solves
nor certifies x* again.  ``compare`` hands the first algorithm's to every other one.

Example:
    >>> import jaxbco
    >>> from jaxbco import problems
    >>> problem = problems.make("logistic-ball", dim=3)
    >>> first = jaxbco.sweep(problem, 50, seeds=4, checkpoints=[50])
    >>> again = jaxbco.sweep(problem, 50, seeds=4, checkpoints=[50], optimum=first.optimum)
    >>> bool((again.x_star == first.x_star).all()), again.comparator_method == first.comparator_method
    (True, True)
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import numpy as np

from jaxbco._src.resume import fingerprint


@dataclasses.dataclass(frozen=True)
class Optimum:
    """The seeds' x* with its certificate and what it belongs to.

    Attributes:
        x_star: (S, d) x* per seed.
        certificate: (S, 3) its certificate per seed (``certificate.FIELDS``).
        ok: (S,) whether each seed's x* passed it.
        method: the comparator method that solved it (``comparator.select``'s name).
        problem: the problem as run (cast to the dtype); another run's is the same where it is
            this object or has the same structure and arrays (``digest``).
        key: the master key's words.
        seed_ids: (S,) the seed ids.
        horizon: T.
        dtype: "float32" or "float64".

    Example:
        >>> import jaxbco
        >>> from jaxbco import problems
        >>> from jaxbco.algorithms import FlaxmanBGD
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> first = jaxbco.sweep(problem, 20, seeds=2, checkpoints=[20])
        >>> opt = first.optimum
        >>> opt.x_star.shape, bool(opt.ok.all()), opt.method
        ((2, 2), True, 'projection of the mean theta (quadratic)')
        >>> other = jaxbco.sweep(problem, 20, algorithm=FlaxmanBGD(), seeds=2, checkpoints=[20],
        ...                      optimum=opt)   # x* not solved again
        >>> bool((other.x_star == first.x_star).all())
        True
    """

    x_star: np.ndarray
    certificate: np.ndarray
    ok: np.ndarray
    method: str
    problem: object
    key: tuple
    seed_ids: np.ndarray
    horizon: int
    dtype: str

    @functools.cached_property
    def digest(self) -> str:
        """SHA-256 of the problem's structure and arrays (computed once, where needed)."""
        return fingerprint(self.problem)

    def check(self, *, problem, key: tuple, seed_ids, horizon: int, dtype: str) -> None:
        """ValueError naming the first field in which this x* does not belong to the run."""
        seed_ids = np.asarray(seed_ids)
        same = problem is self.problem or self.digest == fingerprint(problem)
        mismatch = [
            ("problem", same, "another problem (its components or data)"),
            ("key", tuple(self.key) == tuple(key), f"master key words {self.key}"),
            (
                "seeds",
                self.seed_ids.shape == seed_ids.shape and bool((self.seed_ids == seed_ids).all()),
                f"{self.seed_ids.size} seeds {_ids(self.seed_ids)}",
            ),
            ("horizon", self.horizon == horizon, f"T = {self.horizon}"),
            ("dtype", self.dtype == str(dtype), self.dtype),
        ]
        for field, same, theirs in mismatch:
            if not same:
                ours = {
                    "problem": "this problem",
                    "key": f"master key words {tuple(key)}",
                    "seeds": f"{seed_ids.size} seeds {_ids(seed_ids)}",
                    "horizon": f"T = {horizon}",
                    "dtype": str(dtype),
                }[field]
                raise ValueError(
                    f"optimum does not belong to this run ({field} differ): it was solved for "
                    f"{theirs}, this run has {ours} (an Optimum serves only runs of the same "
                    f"problem, key, seeds, horizon and dtype; pass optimum=None to solve x* "
                    f"for this run)"
                )


def _ids(ids) -> str:
    ids = np.asarray(ids)
    shown = ", ".join(str(int(i)) for i in ids[:4])
    return f"[{shown}{', ...' if ids.size > 4 else ''}]"


def key_words(master) -> tuple:
    """The master key's words, as ``Optimum.key`` records them."""
    return tuple(int(w) for w in np.asarray(jax.random.key_data(master)).ravel())


def padded(optimum: Optimum, n_padded: int, dtype) -> np.ndarray:
    """``optimum.x_star`` for the padded seeds (``shaping.pad_seeds`` pads with copies of the
    last seed id, so the last seed's x*), (n_padded, d) in ``dtype``."""
    x = np.asarray(optimum.x_star, dtype)
    return np.concatenate([x, np.repeat(x[-1:], n_padded - x.shape[0], axis=0)])


def reusable(optimum: Optimum | None, x_star, streamed: bool) -> bool:
    """Whether the run's x* is ``optimum``'s, so its certificate stands: always where x* was
    handed to the run; where x* streamed from the run's sums, only if bitwise the same."""
    if optimum is None:
        return False
    x = np.asarray(x_star)[: optimum.x_star.shape[0]]
    return not streamed or bool(np.array_equal(x, optimum.x_star))
