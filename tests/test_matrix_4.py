"""The every-pair matrix, part 4 of 4 (tests/_matrix.py: what is run and asserted)."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import _matrix  # noqa: E402

test_pair = _matrix.make_test(4)
