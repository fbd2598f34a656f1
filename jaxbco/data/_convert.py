"""Rebuild the shipped portfolio data from the universal-portfolios CSVs (a one-off tool).

    python -m jaxbco.data._convert /work/shared/data/portfolio

reads NAME.csv.gz (normalised prices p_t, header = asset names), writes
jaxbco/data/portfolio_data/NAME.npz with ``relatives`` = p_t / p_{t-1} (r_1 = p_1), computed
in float64 and stored as float32, and ``assets`` (the header), and rewrites PROVENANCE.md with
the checksums.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import sys

import numpy as np

from jaxbco.data.portfolio import DATA_DIR, DATASETS, array_sha256

SOURCE = (
    "the PyPI package `universal-portfolios` 0.4.17, folder `universal/data/` (the classic "
    "online-portfolio benchmark sets), gzip-compressed unchanged as NAME.csv.gz"
)


def convert(src_dir: str, dst_dir: str = DATA_DIR) -> list[dict]:
    rows = []
    for name, what in DATASETS.items():
        path = os.path.join(src_dir, f"{name}.csv.gz")
        raw = open(path, "rb").read()
        text = gzip.decompress(raw).decode()
        header = (
            text.split("\n", 1)[0].rstrip("\r").split(",")
        )  # not splitlines: \x1c-\x1e are names
        prices = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, dtype=np.float64)
        rel = np.empty_like(prices)
        rel[0] = prices[0]
        rel[1:] = prices[1:] / prices[:-1]
        rel32 = rel.astype(np.float32)
        out = os.path.join(dst_dir, f"{name}.npz")
        np.savez_compressed(out, relatives=rel32, assets=np.asarray(header, dtype=str))
        rows.append(
            dict(
                name=name,
                what=what,
                days=rel.shape[0],
                assets=rel.shape[1],
                lo=float(rel.min()),
                hi=float(rel.max()),
                max_err=float(np.max(np.abs(rel32.astype(np.float64) - rel))),
                src_sha=hashlib.sha256(raw).hexdigest(),
                arr_sha=array_sha256(rel32),
                kb=os.path.getsize(out) / 1024,
            )
        )
    return rows


def provenance(rows: list[dict]) -> str:
    lines = [
        "# Provenance of the shipped portfolio data",
        "",
        f"Source: {SOURCE}. Each CSV has a header row of asset names and one row per trading "
        "day; values are prices normalised so that the day before the first row is 1.0. "
        "These are historical prices (facts).",
        "",
        "Conversion (`python -m jaxbco.data._convert SRC_DIR`): daily price relatives "
        "r_t = p_t / p_{t-1} (r_1 = p_1), computed in float64, stored as float32 "
        "(`relatives`, shape (days, assets)) with the header (`assets`) in `NAME.npz` "
        "(`numpy.savez_compressed`). `max |float32 - float64|` is the rounding of that cast.",
        "",
        "`array sha256` is the SHA-256 of the float32 array's C-order bytes "
        "(`jaxbco.data.portfolio.array_sha256`); `load_relatives` checks it on every load.",
        "",
        "| name | what | days | assets | min r | max r | max abs float32 - float64 | npz KiB |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['what']} | {r['days']} | {r['assets']} | {r['lo']:.4f} | "
            f"{r['hi']:.4f} | {r['max_err']:.1e} | {r['kb']:.0f} |"
        )
    lines += [
        "",
        "| name | source file sha256 (NAME.csv.gz) | array sha256 (float32 relatives) |",
        "| --- | --- | --- |",
    ]
    for r in rows:
        lines.append(f"| {r['name']} | `{r['src_sha']}` | `{r['arr_sha']}` |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    src = argv[0] if argv else "/work/shared/data/portfolio"
    rows = convert(src)
    with open(os.path.join(DATA_DIR, "PROVENANCE.md"), "w") as fh:
        fh.write(provenance(rows))
    for r in rows:
        print(r["name"], r["days"], r["assets"], f"{r['kb']:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
