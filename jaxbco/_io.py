"""Output folders for the command line."""

import json
import os


def writable_dir(path: str) -> str:
    """Create ``path`` if needed and check it can be written; ValueError naming --out if not."""
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, ".write-test")
        with open(probe, "w") as fh:
            fh.write("")
        os.remove(probe)
    except OSError as err:
        raise ValueError(f"output folder {path!r} cannot be written ({err.strerror}); "
                         f"choose another with --out") from None
    return path


def write_json(path: str, data) -> None:
    """JSON written to a temporary file and renamed over ``path``."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w") as fh:
            json.dump(data, fh, indent=2)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
