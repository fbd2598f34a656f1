"""Resumable runs: the scan carry between chunks, saved atomically and checked on reload.

A state file holds the carry after the last finished chunk, the comparators x*, the next round
and a fingerprint of everything that determines the numbers (problem, algorithm,
hyperparameters, master key, seed ids, horizon, checkpoints, dtype, replayed directions) plus
the jaxbco and JAX versions and the PRNG implementation, and the wall time spent so far (so a
resumed study reports its total).  Writing goes to a temporary file in the same folder and is
renamed over the old one (``os.replace``), so a killed process leaves either the previous
state or the new one, never a torn file (an interrupted write removes its temporary file; one
left by ``kill -9`` is removed by the CLI's next run in that folder).  Reading refuses a
truncated, empty or foreign file with a one-line ValueError and leaves it in place; so does it
a file edited after it was written (a SHA-256 digest of the arrays and the metadata is kept
inside and checked), whose numbers would no longer be the run's.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile

import jax
import jax.numpy as jnp
import numpy as np

FORMAT = "jaxbco-state-2"  # 2: with the digest of its contents


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    def of(name):
        try:
            return version(name)
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            return "unknown"

    return {
        "jaxbco": of("jaxbco"),
        "jax": jax.__version__,
        "jaxlib": of("jaxlib"),
        "prng": str(jax.config.jax_default_prng_impl),
    }


def _leaf_bytes(leaf) -> bytes:
    if isinstance(leaf, jax.Array) and jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        leaf = jax.random.key_data(leaf)
    if isinstance(leaf, (jax.Array, np.ndarray, np.generic)):
        a = np.asarray(leaf)
        return str(a.dtype).encode() + str(a.shape).encode() + a.tobytes()
    return repr(leaf).encode()


def fingerprint(tree) -> str:
    """SHA-256 of a pytree's structure (incl. static fields) and every leaf's bytes."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    h = hashlib.sha256(str(treedef).encode())
    for leaf in leaves:
        h.update(_leaf_bytes(leaf))
    return h.hexdigest()


def _digest(meta: dict, x_star, leaves) -> str:
    """SHA-256 of the metadata (without the digest) and every array's bytes."""
    h = hashlib.sha256(
        json.dumps({k: v for k, v in meta.items() if k != "digest"}, sort_keys=True).encode()
    )
    for a in (x_star, *leaves):
        h.update(_leaf_bytes(np.asarray(a)))
    return h.hexdigest()


def save(path: str, carry, x_star, next_round: int, config_hash: str, wall_s: float = 0.0) -> None:
    """Write the state atomically: a temporary file next to ``path``, then ``os.replace``.
    ``wall_s``: the wall time spent on the run so far (all sessions)."""
    leaves = jax.tree_util.tree_leaves(carry)
    arrays = {f"leaf{i}": np.asarray(leaf) for i, leaf in enumerate(leaves)}
    meta = {
        "format": FORMAT,
        "config": config_hash,
        "next_round": int(next_round),
        "wall_s": float(wall_s),
        **versions(),
    }
    meta["digest"] = _digest(meta, x_star, arrays.values())
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, x_star=np.asarray(x_star), meta=np.asarray(json.dumps(meta)), **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:  # an error or an interrupt mid-write: no torn temporary file left
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


def is_state(path: str) -> bool:
    """Whether ``path`` is a state file jaxbco wrote (its ``meta`` names ``FORMAT``), read
    without trusting it: False for any other or unreadable file."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
        return isinstance(meta, dict) and meta.get("format") == FORMAT
    except Exception:  # noqa: BLE001 - whatever else the file is, it is not ours
        return False


def load(path: str, like_carry, config_hash: str, *, with_wall: bool = False):
    """(carry leaves as NumPy arrays in ``like_carry``'s structure, x_star, next_round), and
    the wall time spent so far when ``with_wall``.

    ValueError (one line, naming the file and the fix) when the file is empty, truncated or
    otherwise unreadable, was written by another configuration or version, or does not match
    the carry's shapes; the file is left as it is."""
    fix = f"delete {path!r} to start afresh, or rerun with the configuration that wrote it"
    try:
        if os.path.getsize(path) == 0:
            raise ValueError(
                f"resume file {path!r} is empty (a run killed while creating it); "
                f"delete it to start afresh"
            )
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            x_star = z["x_star"]
            n = sum(1 for f in z.files if f.startswith("leaf"))
            leaves = [z[f"leaf{i}"] for i in range(n)]
        if not isinstance(meta, dict):
            raise KeyError("meta")
        next_round, config = int(meta["next_round"]), meta["config"]
        wall = float(meta.get("wall_s", 0.0))
    except ValueError as err:
        if str(err).startswith("resume file"):
            raise
        raise ValueError(
            f"resume file {path!r} cannot be read (ValueError: not a complete state file); {fix}"
        ) from None
    except (
        OSError,
        KeyError,
        EOFError,
        TypeError,
        AttributeError,
        zipfile.BadZipFile,
        json.JSONDecodeError,
    ) as err:
        what = {
            "BadZipFile": "truncated or not a state file",
            "EOFError": "truncated",
            "KeyError": "a field is missing",
        }.get(type(err).__name__, "not a complete state file")
        raise ValueError(
            f"resume file {path!r} cannot be read ({type(err).__name__}: {what}); {fix}"
        ) from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"resume file {path!r} is not a jaxbco state file; {fix}")
    now = versions()
    for name in ("jaxbco", "jax", "prng"):
        if meta.get(name) != now[name]:
            raise ValueError(
                f"resume file {path!r} was written by {name} {meta.get(name)}, this is "
                f"{now[name]}; {fix}"
            )
    if meta.get("digest") != _digest(meta, x_star, leaves):
        raise ValueError(
            f"resume file {path!r} was changed after jaxbco wrote it (its contents do "
            f"not match the digest inside); delete it to start afresh"
        )
    if config != config_hash:
        raise ValueError(
            f"resume file {path!r} was written by a different configuration (problem, "
            f"algorithm, hyperparameters, seeds, key, horizon, checkpoints or dtype); {fix}"
        )
    like, treedef = jax.tree_util.tree_flatten(like_carry)
    if len(leaves) != len(like) or any(
        a.shape != np.shape(b) or str(a.dtype) != str(b.dtype) for a, b in zip(leaves, like)
    ):
        raise ValueError(
            f"resume file {path!r} holds a state of other shapes or types (a different number "
            f"of devices pads the seeds differently); {fix}"
        )
    out = (jax.tree_util.tree_unflatten(treedef, leaves), x_star, next_round)
    return out + (wall,) if with_wall else out
