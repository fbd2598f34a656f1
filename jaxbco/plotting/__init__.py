"""Figures (the only package that imports matplotlib), all in one style (``panels``).

``plot_curves`` (``curves``) draws one ``Result``, ``plot_comparison`` (``comparison``) the
comparison study, ``plot_dataset`` (``dataset``) a saved results Dataset (``jaxbco.results``);
``comparison_figure`` and ``dataset_figure`` return those figures unsaved, ``caption`` their
caption.  ``panels`` lays out the panels of every one of them, ``marks`` draws their parts
(merged series, markers, slope guides, legend), ``scales`` their bands and y axes and ``style``
holds the colours.
"""

from jaxbco.plotting.comparison import comparison_figure as comparison_figure
from jaxbco.plotting.comparison import plot_comparison as plot_comparison
from jaxbco.plotting.curves import RUN_METRICS as RUN_METRICS
from jaxbco.plotting.curves import plot_curves as plot_curves
from jaxbco.plotting.dataset import METRIC_LABELS as METRIC_LABELS
from jaxbco.plotting.dataset import dataset_figure as dataset_figure
from jaxbco.plotting.dataset import plot_dataset as plot_dataset
from jaxbco.plotting.panels import BAND_LABEL as BAND_LABEL
from jaxbco.plotting.panels import caption as caption
from jaxbco.plotting.portfolios import plot_portfolio_summary as plot_portfolio_summary
from jaxbco.plotting.portfolios import portfolio_summary as portfolio_summary
from jaxbco.plotting.scales import BAND_LABELS as BAND_LABELS
from jaxbco.plotting.style import ALGORITHM_COLORS as ALGORITHM_COLORS
from jaxbco.plotting.style import ALGORITHM_ORDER as ALGORITHM_ORDER
from jaxbco.plotting.style import MARKERS as MARKERS
from jaxbco.plotting.style import OKABE_ITO as OKABE_ITO
from jaxbco.plotting.style import PAPER_RC as PAPER_RC
from jaxbco.plotting.style import REFERENCE_COLOR as REFERENCE_COLOR
from jaxbco.plotting.style import SERIES_COLORS as SERIES_COLORS
from jaxbco.plotting.style import WIDE_COLORS as WIDE_COLORS
from jaxbco.plotting.style import algorithm_color as algorithm_color
from jaxbco.plotting.style import assign as assign
