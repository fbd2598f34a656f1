"""``python -m jaxbco.tune [options]`` = ``jaxbco tune [options]``; ``python -m jaxbco.tune cost
[...]`` prints ``measure_cost`` (see ``jaxbco.cli.tune``)."""

import sys

from jaxbco.cli.tune import module_main

sys.exit(module_main())
