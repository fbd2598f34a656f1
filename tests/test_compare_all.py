"""``jaxbco compare --all`` on a portfolio preset (issue 55 item 2): the portfolio data sets
in one summary figure, no figure of their own."""

import json
import os

import numpy as np
import pytest
from test_compare_e2e import _clean_exit, _main


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("jax-cache"))


def test_all_draws_the_portfolios_in_one_summary_figure(tmp_path, cache):
    """Issue 55 item 2: a portfolio preset gets no figure of its own on the results page; the
    portfolio data sets share one summary figure (its section last), drawn on the day axis
    from evenly spaced checkpoint days."""
    out = str(tmp_path / "docs")
    argv = ["compare", "--all", "--presets", "portfolio:djia", "--seeds", "2"]
    argv += ["--algorithms", "recoo", "--out", out, "--compile-cache", cache, "--quiet"]
    code, stdout, stderr = _main(argv)
    _clean_exit(code, stderr)
    page = open(os.path.join(out, "results.md")).read()
    files = sorted(os.listdir(os.path.join(out, "results")))
    assert files == ["portfolio-djia.json", "portfolio-djia.md", "portfolios.pdf", "portfolios.png"]
    assert "![portfolio:djia]" not in page and "portfolio summary figure" in page
    assert "## The portfolio data sets together" in page
    assert "![the portfolio data sets](results/portfolios.png)" in page
    summary = json.load(open(os.path.join(out, "results", "portfolio-djia.json")))
    assert np.diff(summary["rounds"]).max() <= summary["horizon"] // 200 + 1  # a curve by day
    assert "not a rate (x* of all T)" in page
