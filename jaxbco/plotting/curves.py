"""The figure of one ``Result``: regret, hard and soft violation against t, drawn as its results
Dataset would be (``plot_dataset``), so ``jaxbco plot`` on the saved file redraws it."""

from __future__ import annotations

import os

from jaxbco.plotting.dataset import plot_dataset

#: The panels of a run's figure (``jaxbco run``).
RUN_METRICS = ("regret", "hard_violation", "soft_violation")


def plot_curves(result, path, *, c: float | None = None, setting: int = 0,
                title: str | None = None):
    """Regret, hard and soft violation vs t of one hyperparameter setting (``setting``): the
    mean over seeds with the 10-90% band of the seeds, with Theorem 1's slope t^max(c, 1-c)
    and Theorem 2's t^(1-c/2) (c: the setting's own unless given).  Writes ``path`` (PNG)
    and the same figure as PDF; returns ``path``."""
    from jaxbco.results import to_dataset

    ds = to_dataset(result).isel(setting=[setting])
    if c is not None:
        ds = ds.assign_coords(c=("setting", [float(c)]))
    root, ext = os.path.splitext(os.fspath(path))
    plot_dataset(ds, root if ext.lower() == ".png" else os.fspath(path), metrics=RUN_METRICS,
                 title=title)
    return path
