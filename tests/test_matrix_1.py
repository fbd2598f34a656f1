"""The every-pair matrix, part 1 of 4 (tests/_matrix.py: what is run and asserted)."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import _matrix  # noqa: E402

test_pair = _matrix.make_test(1)


def test_every_named_problem_is_in_one_part():
    parts = [p for k in _matrix.PARTS for p in _matrix.part_problems(k)]
    assert sorted(parts) == sorted(_matrix.NAMED) and len(parts) == len(set(parts))


def test_every_problem_and_algorithm_is_compared_across_back_ends():
    """BACKEND_PAIRS: Algorithm 1 on every problem, every other algorithm on one."""
    from jaxbco.algorithms import ALGORITHMS

    on = _matrix.BACKEND_PAIRS
    assert {p for p, _ in on} == set(_matrix.NAMED)
    assert all((p, "rectified-bco") in on for p in _matrix.NAMED)
    counts = {a: sum(1 for _, b in on if b == a) for a in ALGORITHMS if a != "rectified-bco"}
    assert set(counts.values()) == {1}, counts
