"""Write tests/durations.json from a full run's ``--durations=0`` report.

    python -m pytest tests --durations=0 -q > run.log   # the README's command, all of it
    python tests/record_durations.py run.log

Each test's seconds (setup + call + teardown, as that run measured them on its machine) go
into tests/durations.json, which tests/conftest.py reads to mark the tests over
``FAST_LIMIT_S`` ``slow``: ``-m "not slow"`` is the fast tier for local iteration.
"""

import json
import pathlib
import re
import sys

LINE = re.compile(r"^\s*([0-9.]+)s (setup|call|teardown)\s+(\S.*)$")


def main(log: str) -> None:
    seconds: dict[str, float] = {}
    for line in pathlib.Path(log).read_text().splitlines():
        m = LINE.match(line)
        if m:
            seconds[m.group(3)] = seconds.get(m.group(3), 0.0) + float(m.group(1))
    out = pathlib.Path(__file__).with_name("durations.json")
    out.write_text(
        json.dumps({k: round(v, 2) for k, v in sorted(seconds.items())}, indent=0) + "\n"
    )
    print(f"{len(seconds)} tests, {sum(seconds.values()):.0f} s in all -> {out}")


if __name__ == "__main__":
    main(sys.argv[1])
