"""The every-pair matrix, part 1 of 4 (tests/_matrix.py: what is run and asserted)."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import _matrix  # noqa: E402

test_pair = _matrix.make_test(1)


def test_every_named_problem_is_in_one_part():
    parts = [p for k in _matrix.PARTS for p in _matrix.part_problems(k)]
    assert sorted(parts) == sorted(_matrix.NAMED) and len(parts) == len(set(parts))
