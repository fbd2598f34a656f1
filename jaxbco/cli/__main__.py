import sys

from jaxbco.cli import main

sys.exit(main())
