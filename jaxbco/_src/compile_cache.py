"""JAX's persistent compilation cache, switched on for jaxbco's programs by one call.

``jaxbco.compile_cache()`` keeps every compiled program on disk (in ``default_cache_dir()``
unless a folder is given), so the same study run again, in this process or a later one,
skips XLA compilation; the command line does the same for every command
(``--compile-cache DIR``, ``--no-compile-cache``).  Nothing is switched on by ``import
jaxbco``: the call changes JAX's settings, and ``close()`` (or leaving its ``with`` block)
restores them.
"""

from __future__ import annotations

import os
import sys

import jax
from jax.experimental.compilation_cache import compilation_cache as _cc

_FLAGS = (
    "jax_compilation_cache_dir",
    "jax_persistent_cache_min_compile_time_secs",
    "jax_persistent_cache_min_entry_size_bytes",
    "jax_enable_compilation_cache",
)


def default_cache_dir() -> str:
    """``$XDG_CACHE_HOME/jaxbco/jax``, else ``~/.cache/jaxbco/jax``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jaxbco", "jax")


def _creatable(path: str) -> bool:
    """A writable folder, or one that can be made (JAX creates it at the first compile, so a
    run that compiles nothing leaves no folder behind)."""
    probe = os.path.abspath(path)
    if os.path.exists(probe) and not os.path.isdir(probe):
        return False
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    return os.path.isdir(probe) and os.access(probe, os.W_OK | os.X_OK)


class CompileCache:
    """JAX's persistent compilation cache in ``path``, on from the call until ``close()``.

    Every program is cached however quick its compilation (a study's small programs add up).
    A folder that cannot be created turns the cache off with a one-line note on stderr.

    Args:
        path: the cache folder (``str`` or path-like); None: ``default_cache_dir()``; False:
            the cache off (JAX's persistent cache disabled) until ``close()``.

    Attributes:
        path: the folder in use, or None when the cache is off.

    Example:
        >>> import jaxbco, tempfile
        >>> with jaxbco.compile_cache(tempfile.mkdtemp()) as folder:
        ...     pass  # sweeps here compile once; the same sweep run again loads its programs
        >>> cache = jaxbco.compile_cache(False)  # off, whatever JAX's settings said
        >>> cache.close()  # JAX's earlier settings back
    """

    def __init__(self, path: str | os.PathLike | None | bool = None):
        if path is True or (path is not False and path is not None
                            and not isinstance(path, (str, os.PathLike))):  # fmt: skip
            raise TypeError(
                f"compile_cache's path must be a folder (str or path-like), None (the default "
                f"folder) or False (off); got {type(path).__name__} {path!r}"
            )
        path = default_cache_dir() if path is None else path
        path = None if path is False else os.fspath(path)
        self._old = {flag: getattr(jax.config, flag) for flag in _FLAGS}
        if path is not None and not _creatable(path):
            print(
                f"jaxbco: note: compilation cache {path!r} cannot be created or written; "
                f"running without it",
                file=sys.stderr,
            )
            path = None
        if path is None:
            jax.config.update("jax_enable_compilation_cache", False)
        else:
            jax.config.update("jax_enable_compilation_cache", True)
            jax.config.update("jax_compilation_cache_dir", path)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
        _cc.reset_cache()  # JAX decides once per process whether to use the cache: again
        self.path = path
        self._open = True

    def close(self) -> None:
        """JAX's settings as they were before the call (a second call does nothing)."""
        if self._open:
            for flag, value in self._old.items():
                jax.config.update(flag, value)
            _cc.reset_cache()
            self._open = False

    def __enter__(self) -> str | None:
        return self.path

    def __exit__(self, *exc) -> None:
        self.close()


compile_cache = CompileCache
