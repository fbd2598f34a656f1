"""What a comparison study returns (``jaxbco.compare.driver``), written by ``report``."""

from __future__ import annotations

import dataclasses

import numpy as np

#: Seeds per horizon of the results page's ladders (``jaxbco compare --all``): enough that an
#: exponent's 95% interval is within about ±0.1 where a power law holds.
LADDER_SEEDS = 1000


@dataclasses.dataclass
class Comparison:
    """What ``compare`` returns: one row per algorithm (``rows``), the curves at ``rounds``
    (name -> {"regret", "hard_violation", "soft_violation", ["wealth"]}, each (S, K)), the
    theory (``constants``, ``bounds``), portfolio extras (``wealth_baselines``, ``x_star``)
    and the files written."""

    problem: str
    seeds: int
    horizon: int
    dim: int
    dtype: str
    rounds: np.ndarray
    rows: list
    curves: dict
    constants: dict
    bounds: dict
    fit_range: tuple
    wealth_baselines: dict | None = None
    comparator_info: dict | None = None
    wall_s: float = 0.0
    files: list = dataclasses.field(default_factory=list)
    figure_caption: str = ""
