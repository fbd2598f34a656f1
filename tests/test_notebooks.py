"""The notebooks of notebooks/ run top to bottom at reduced size, and are committed stripped.

Each notebook's source is ``notebooks/NN_name.py`` (jupytext percent format), paired with
``notebooks/NN_name.ipynb``, which is committed without outputs so that GitHub renders it; a
test checks that the two have the same cells.  The notebook read from the ``.py`` is executed
with nbclient in a fresh ``python3`` kernel with its parameters set as papermill sets them
(a cell after the one tagged "parameters": ``SMALL = True``, a few dozen seeds and T of a few
hundred, and ``OUT_ROOT`` in ``tmp_path``, also its working directory), so nothing is written
into the repository.
jupyter_client starts the ``python3`` kernelspec's ``python`` as ``sys.executable`` (checked
below), so the kernel runs in this test's interpreter and environment.  A failing cell raises
``nbclient.exceptions.CellExecutionError``.  The last cell of every notebook prints one
``JAXBCO_NOTEBOOK_RESULT {json}`` line whose values are checked.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

# hard test dependencies (pyproject [test]): a missing one fails the module, never skips it
import ipykernel  # noqa: F401
import jupytext
import nbclient
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
NOTEBOOKS = ("01_quickstart", "02_monte_carlo_study", "03_hyperparameter_sweep", "04_tuning")
MARK = "JAXBCO_NOTEBOOK_RESULT "
TIMEOUT_S = 300  # per cell
SYNC = "jupytext --sync notebooks/{name}.py"  # regenerates the .ipynb from an edited .py


def _execute(name: str, tmp_path: Path, monkeypatch) -> dict:
    # the kernel imports this checkout's jaxbco even without an editable install
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + (os.pathsep + path if path else ""))
    monkeypatch.delenv("JAX_ENABLE_X64", raising=False)  # the notebooks run in float32
    nb = jupytext.read(NB_DIR / f"{name}.py")  # the source; the .ipynb has the same cells
    _inject(nb, SMALL=True, OUT_ROOT=str(tmp_path / "out"))
    client = nbclient.NotebookClient(
        nb,
        timeout=TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    lines = [
        line
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream" and out.get("name") == "stdout"
        for line in out["text"].splitlines()
        if line.startswith(MARK)
    ]
    assert len(lines) == 1, f"{name}: expected one {MARK.strip()} line, got {len(lines)}"
    summary = json.loads(lines[0][len(MARK) :])
    assert summary["notebook"] == name and summary["small"] is True
    assert (tmp_path / "out" / name / "summary.json").is_file()
    assert not list(NB_DIR.glob("notebook-output")), "a notebook wrote into the repository"
    return summary


def _parameters_cell(nb) -> int:
    """The index of the code cell tagged "parameters" (papermill's convention)."""
    found = [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])
    ]
    assert len(found) == 1, "a notebook has exactly one cell tagged parameters"
    return found[0]


def _inject(nb, **values) -> None:
    """Papermill's way: a cell tagged "injected-parameters" right after the parameters cell,
    assigning the given values (the notebook's own code reads them as its parameters)."""
    source = "\n".join(f"{k} = {v!r}" for k, v in values.items())
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]})
    nb.cells.insert(_parameters_cell(nb) + 1, cell)


def _finite(*values) -> bool:
    return all(math.isfinite(v) for v in values)


def test_kernel_runs_this_interpreter():
    from jupyter_client import KernelManager

    km = KernelManager(kernel_name="python3")
    km.connection_file = "kernel-test.json"  # only formatted here; no kernel is started
    assert km.format_kernel_cmd()[0] == sys.executable


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_executes(name, tmp_path, monkeypatch):
    s = _execute(name, tmp_path, monkeypatch)
    if name == "01_quickstart":
        assert _finite(
            s["run_regret_over_T"],
            s["run_hard_violation"],
            *s["sweep_regret_over_T"],
            *s["sweep_hard_violation"],
        )
        assert s["failed_seeds"] == 0 and s["sweep_c"] == [0.5, 0.75]
        assert s["run_hard_violation"] >= 0 and Path(s["figure"]).is_file()
    elif name == "02_monte_carlo_study":
        assert s["failed_seeds"] == 0
        fits = {(f["c"], f["metric"]): f for f in s["fits"]}
        assert set(fits) == {(c, m) for c in (0.5, 0.75) for m in ("regret", "hard_violation")}
        for (c, metric), f in fits.items():
            assert _finite(f["mean_at_T"], f["bound_at_T"])
            assert f["theory"] == pytest.approx(max(c, 1 - c) if metric == "regret" else 1 - c / 2)
            # the bound holds by orders of magnitude; a slope exists wherever the mean is positive
            assert f["mean_at_T"] < f["bound_at_T"]
            if metric == "hard_violation":
                assert _finite(f["slope"])
    elif name == "03_hyperparameter_sweep":
        assert s["failed_runs"] == 0
        for key in ("regret_over_T", "hard_violation"):
            grid = s[key]
            assert len(grid) == len(s["c"]) and all(len(row) == len(s["eps"]) for row in grid)
            assert _finite(*(v for row in grid for v in row))
        assert s["pareto"], "the Pareto front is never empty"
    else:
        assert _finite(s["J_defaults"], s["J_tuned"], s["J_grid"], s["J_random"])
        assert s["J_tuned"] <= s["J_defaults"]
        assert s["runs"]["gradient"] < s["runs"]["grid"] or s["runs"]["grid"] < 100


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_is_stripped(name):
    nb = nbformat.read(NB_DIR / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    assert nb.cells[0].cell_type == "markdown"
    params = nb.cells[_parameters_cell(nb)]
    assert params is next(c for c in nb.cells if c.cell_type == "code")  # the first code cell
    assert "SMALL = False" in params.source and "OUT_ROOT = " in params.source  # full size
    assert not any("os.environ" in c.source for c in nb.cells)  # options are parameters
    for cell in nb.cells:
        if cell.cell_type == "code":
            stripped = (
                f"{name}.ipynb was saved executed: run jupytext --to ipynb notebooks/{name}.py"
            )
            assert cell.outputs == [], stripped
            assert cell.execution_count is None, stripped
        assert not cell.get("attachments")


def _cells(nb) -> list[tuple[str, str]]:
    return [(cell.cell_type, cell.source) for cell in nb.cells]


def test_notebook_sources_are_paired():
    assert sorted(p.stem for p in NB_DIR.glob("*.ipynb")) == list(NOTEBOOKS)
    assert sorted(p.stem for p in NB_DIR.glob("[0-9]*.py")) == list(NOTEBOOKS)
    from jupytext.config import load_jupytext_config

    config = load_jupytext_config(str(NB_DIR / f"{NOTEBOOKS[0]}.py"))
    assert config is not None and "ipynb,py:percent" in config.formats, "notebooks/jupytext.toml"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_matches_source(name):
    source = jupytext.read(NB_DIR / f"{name}.py")
    assert (
        source.metadata.get("jupytext", {}).get("text_representation", {}).get("format_name")
        == "percent"
    ), f"{name}.py is not in jupytext's percent format"
    nb = nbformat.read(NB_DIR / f"{name}.ipynb", as_version=4)
    assert _cells(nb) == _cells(source), (
        f"{name}.ipynb has other cells than {name}.py: run {SYNC.format(name=name)}"
    )
    assert nb.metadata["kernelspec"] == source.metadata["kernelspec"]
