"""The shipped price data: six classic online-portfolio benchmark sets (NYSE 1962-84 of
Cover 1991, NYSE 1985-2010, DJIA, S&P 500, TSX, MSCI) as float32 daily price relatives
r_t = p_t / p_{t-1}, checked against the SHA-256 sums of ``portfolio_data/PROVENANCE.md``
(``jaxbco.data._convert`` rebuilds them from the source CSVs).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re

import numpy as np

DATA_DIR = os.path.join(os.path.dirname(__file__), "portfolio_data")

DATASETS = {
    "nyse_o": "NYSE, 1962-1984 (Cover 1991)",
    "nyse_n": "NYSE, 1985-2010",
    "djia": "Dow Jones Industrial Average, 2001-2003",
    "sp500": "S&P 500, 1998-2003",
    "tse": "Toronto Stock Exchange, 1994-1998",
    "msci": "MSCI world indices, 2006-2010",
}


def array_sha256(a: np.ndarray) -> str:
    """SHA-256 of an array's C-order bytes (as recorded in PROVENANCE.md)."""
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


@functools.lru_cache(maxsize=1)
def _checksums() -> dict:
    path = os.path.join(DATA_DIR, "PROVENANCE.md")
    text = open(path).read()
    return dict(re.findall(r"^\| (\w+) \| `[0-9a-f]{64}` \| `([0-9a-f]{64})` \|$", text, re.M))


@functools.cache
def _load(name: str):
    with np.load(os.path.join(DATA_DIR, f"{name}.npz")) as z:
        rel, assets = z["relatives"], z["assets"]
    want = _checksums().get(name)
    if want is not None and array_sha256(rel) != want:
        raise ValueError(f"portfolio data {name!r} does not match its checksum in PROVENANCE.md")
    rel.setflags(write=False)
    return rel, tuple(str(a) for a in assets)


def load_relatives(name: str) -> np.ndarray:
    """Daily price relatives of data set ``name`` (one of ``DATASETS``): float64 array of shape
    (days, assets), exactly the shipped float32 values (checked against PROVENANCE.md)."""
    if name not in DATASETS:
        raise ValueError(
            f"unknown portfolio data set {name!r}; choose one of: {', '.join(DATASETS)}"
        )
    return _load(name)[0].astype(np.float64)


def asset_names(name: str) -> tuple[str, ...]:
    """The column names of data set ``name``."""
    if name not in DATASETS:
        raise ValueError(
            f"unknown portfolio data set {name!r}; choose one of: {', '.join(DATASETS)}"
        )
    return _load(name)[1]
