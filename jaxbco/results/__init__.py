"""Results as a labelled dataset (xarray), saved as netCDF (HDF5, engine ``h5netcdf``).

``to_dataset(result, grid_axes=...)`` turns a ``Result`` into an ``xarray.Dataset`` with named
dimensions (each swept hyperparameter, or ``setting``; ``seed``; checkpoint ``round``; ``dim``
for points), the curves regret, hard_violation, soft_violation, lam, loss, the ``failed`` flags,
and provenance attributes (configuration, package/JAX versions, PRNG implementation, devices).
``save`` writes it atomically, ``load`` reads it back in one call, ``to_frame`` gives a tidy
pandas table, ``summary_table`` the final-round means with 95% intervals, and ``combine`` puts
several algorithms' datasets along an ``algorithm`` dimension (``merge_seeds``: disjoint seed
blocks of one study along ``seed``).

Modules: ``dataset`` (building the Dataset, provenance), ``files`` (``save``, ``load``,
``config_of``), ``tables`` (``to_frame``, ``summary_table``), ``join`` (``combine``,
``algorithms_of``, ``merge_seeds``); every public name is re-exported here.
"""

from jaxbco.results.dataset import CURVES as CURVES
from jaxbco.results.dataset import DESCRIPTIONS as DESCRIPTIONS
from jaxbco.results.dataset import FORMAT as FORMAT
from jaxbco.results.dataset import FORMAT_VERSION as FORMAT_VERSION
from jaxbco.results.dataset import RESERVED_DIMS as RESERVED_DIMS
from jaxbco.results.dataset import provenance as provenance
from jaxbco.results.dataset import to_dataset as to_dataset
from jaxbco.results.files import config_of as config_of
from jaxbco.results.files import load as load
from jaxbco.results.files import save as save
from jaxbco.results.join import algorithms_of as algorithms_of
from jaxbco.results.join import combine as combine
from jaxbco.results.join import merge_seeds as merge_seeds
from jaxbco.results.tables import summary_table as summary_table
from jaxbco.results.tables import to_frame as to_frame
