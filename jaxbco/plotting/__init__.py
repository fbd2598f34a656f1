"""Figures (the only package that imports matplotlib).

``plot_curves`` (``curves``) and ``plot_comparison`` (``comparison``) draw from a ``Result`` /
the comparison study; ``plot_dataset`` (``dataset``) draws paper figures from a saved results
Dataset (``jaxbco.results``); ``style`` holds the colours shared by all of them.
"""

from jaxbco.plotting.comparison import plot_comparison as plot_comparison
from jaxbco.plotting.curves import plot_curves as plot_curves
from jaxbco.plotting.dataset import METRIC_LABELS as METRIC_LABELS
from jaxbco.plotting.dataset import PAPER_RC as PAPER_RC
from jaxbco.plotting.dataset import plot_dataset as plot_dataset
from jaxbco.plotting.style import ALGORITHM_COLORS as ALGORITHM_COLORS
from jaxbco.plotting.style import ALGORITHM_ORDER as ALGORITHM_ORDER
from jaxbco.plotting.style import OKABE_ITO as OKABE_ITO
from jaxbco.plotting.style import REFERENCE_COLOR as REFERENCE_COLOR
from jaxbco.plotting.style import SERIES_COLORS as SERIES_COLORS
from jaxbco.plotting.style import algorithm_color as algorithm_color
