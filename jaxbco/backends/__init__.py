"""The back-ends that run a sweep's rounds, and the one selector that picks among them.

* ``SeedsMinorScan`` (``seeds_minor.py``): every component declares ``blocks``; the round's code
  runs on (d, runs) blocks inside one ``lax.scan``.
* ``VmapScan`` (``vmap_scan.py``): any run; the same code per run under ``vmap``.
* ``FusedKernel`` (``fused_kernel.py``): on a GPU, the round loop as one Pallas kernel where
  every component declares ``kernel`` (``jaxbco.fused``).

Each is an ``AbstractBackend``: the declaration it needs (``flag``), what keeps a run off it
(``blocker``), and ``advance`` over a chunk of rounds.  ``select`` chooses for a run and says
why no faster back-end was taken; ``Result.engine`` and ``jaxbco run``'s summary report it.
"""

from jaxbco._src.blocks import blocker as blocker
from jaxbco.backends._base import AbstractBackend as AbstractBackend
from jaxbco.backends.fused_kernel import FusedKernel as FusedKernel
from jaxbco.backends.seeds_minor import SeedsMinorScan as SeedsMinorScan
from jaxbco.backends.selector import Selection as Selection
from jaxbco.backends.selector import choose as choose
from jaxbco.backends.selector import select as select
from jaxbco.backends.vmap_scan import VmapScan as VmapScan

SEEDS_MINOR = SeedsMinorScan.name
VMAP = VmapScan.name
FUSED = FusedKernel.name
