"""What a comparison study returns (``jaxbco.compare.driver``), written by ``report``."""

from __future__ import annotations

import dataclasses

import numpy as np


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
