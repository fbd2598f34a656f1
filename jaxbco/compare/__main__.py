"""``python -m jaxbco.compare [options]`` = ``jaxbco compare [options]`` (errors read
``jaxbco compare: error: ...``)."""

import sys

from jaxbco.cli import main

sys.exit(main(["compare", *sys.argv[1:]], name="jaxbco compare"))
