"""What the ways of running ``jaxbco compare`` (one problem, its ``--horizons`` ladder,
``--all``; ``jaxbco.cli.compare``) share: their list options read (``_names``,
``_horizons``) and their output files guarded and written (``_refuse_existing``,
``_write``)."""

from __future__ import annotations

import os


def _refuse_existing(paths, what: str) -> None:
    done = [p for p in paths if os.path.exists(p)]
    if done:
        raise ValueError(
            f"{', '.join(done)} already exist ({what}); pass --overwrite to replace "
            f"them, or choose another --out"
        )


def _write(path: str, text: str) -> str:
    with open(path, "w") as fh:
        fh.write(text)
    return path


def _names(text: str | None) -> list | None:
    """A comma-separated list (``--algorithms``, ``--presets``); None: not given."""
    return None if text is None else [v.strip() for v in text.split(",")]


def _horizons(text: str) -> list:
    try:
        return [int(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(
            f"--horizons must be comma-separated integers >= 1, e.g. 500,1000,2000; got {text!r}"
        ) from None
