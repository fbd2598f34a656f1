"""Output folders for the command line."""

import fcntl
import json
import os

#: Locks this process holds, by lock file (released when the process ends, however it ends).
_HELD: dict = {}


#: The prefix of the folders outputs are staged in (``jaxbco.study.Staging``).
STAGING = ".staging"


def visible(path: str) -> str:
    """The path a user knows for ``path``: a file inside a staging folder (``Staging``) is
    named where it lands in OUT; any other path as it is.

    Example:
        >>> visible("out/.staging-123/results.nc"), visible("out/results.nc")
        ('out/results.nc', 'out/results.nc')
    """
    parts = str(path).split(os.sep)
    return os.sep.join(p for i, p in enumerate(parts) if i == 0 or not p.startswith(STAGING))


def writable_dir(path: str) -> str:
    """Create ``path`` if needed and check it can be written; ValueError naming --out if not."""
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, ".write-test")
        with open(probe, "w") as fh:
            fh.write("")
        os.remove(probe)
    except OSError as err:
        raise ValueError(
            f"output folder {path!r} cannot be written ({err.strerror}); choose another with --out"
        ) from None
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


def lock_folder(path: str, tag: str = "") -> None:
    """Make this process the only jaxbco run writing into ``path`` (for this host ``tag``): an
    exclusive ``flock`` on ``path/.jaxbco{tag}.lock`` holding the owner's PID, until
    ``release_folders`` (which removes the file) or the end of the process (the system releases
    the lock even after a kill; the file then stays, unlocked).  A folder another live process
    holds is a ValueError naming that process; a lock this process holds is taken again."""
    name = os.path.realpath(os.path.join(path, f".jaxbco{tag}.lock"))
    if name in _HELD:
        return
    while True:
        fh = open(name, "a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            owner = fh.read().strip() or "unknown"
            fh.close()
            raise ValueError(
                f"output folder {path!r} is in use by another jaxbco run (process "
                f"{owner}); wait for it to finish, or choose another --out"
            ) from None
        try:  # the file may have been removed by its previous owner since we opened it
            same = os.path.samestat(os.fstat(fh.fileno()), os.stat(name))
        except FileNotFoundError:
            same = False
        if same:
            break
        fh.close()
    fh.seek(0)
    fh.truncate()
    fh.write(str(os.getpid()))
    fh.flush()
    _HELD[name] = fh


def release_folders() -> None:
    """Remove and release every folder lock this process holds (``lock_folder``)."""
    for name, fh in list(_HELD.items()):
        try:
            os.remove(name)
        except OSError:
            pass
        fh.close()
        del _HELD[name]
