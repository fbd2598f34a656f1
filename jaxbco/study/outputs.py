"""The output folder of a long run, shared by ``run``, ``sweep``, ``compare`` and ``tune``
(``jaxbco.cli``): which host writes which files (``host_tag``, ``init_hosts``), the checks
before a study starts that nothing is lost (``prepare_output``: a live run's folder, an
unfinished run's state, a finished study's outputs), the leftovers of killed runs
(``clean_leftovers``) and outputs staged and moved in together (``Staging``)."""

from __future__ import annotations

import os

from jaxbco._src import hosts
from jaxbco._src import resume as _resume
from jaxbco._src.output_folders import STAGING as _STAGING
from jaxbco._src.output_folders import lock_folder

STATE = "state.npz"


def init_hosts(args) -> tuple[int, int]:
    """Join the other hosts (``jax.distributed``) when --coordinator is given: (process index,
    count).  Must run
    before anything touches a JAX backend; a process that cannot join (unreachable or missing
    peers, mismatched options) is a one-line ValueError within ``args.connect_timeout`` s."""
    given = [args.coordinator, args.num_processes, args.process_id]
    if all(v is None for v in given):
        return 0, 1
    if any(v is None for v in given):
        raise ValueError(
            "a multi-host run needs all of --coordinator HOST:PORT, --num-processes N "
            "and --process-id I"
        )
    hosts.join(
        args.coordinator, args.num_processes, args.process_id, getattr(args, "connect_timeout", 300)
    )
    return args.process_id, args.num_processes


def host_tag(index: int, count: int) -> str:
    """'' on one host, '.hostI-of-N' in a multi-host run (each host writes its own files)."""
    return "" if count == 1 else f".host{index}-of-{count}"


def output_names(out: str, index: int, count: int) -> tuple[str, str]:
    """(results file, state file) of this host."""
    tag = host_tag(index, count)
    return os.path.join(out, f"results{tag}.nc"), os.path.join(out, f"state{tag}.npz")


def resume_path(state: str, resume: bool) -> str:
    """The state file to pass to ``sweep``; refuses to overwrite an unfinished run's state."""
    if os.path.exists(state) and not resume and not _resume.is_state(state):
        raise ValueError(
            f"{state} exists and is not a jaxbco state file (this run would write its state "
            f"there); move it away, or choose another --out"
        )
    if os.path.exists(state) and not resume:
        raise ValueError(
            f"{state} holds the state of an unfinished run; continue it with --resume, "
            f"or delete it (or choose another --out) to start afresh"
        )
    return state


#: What a finished study leaves in its folder: ``run`` results.nc, summary.json, curves.png/.pdf;
#: ``sweep`` results.nc, results.png/.pdf, summary.json (each with the host tag on several hosts).
OUTPUTS = (
    "results*.nc",
    "summary*.json",
    "curves*.png",
    "curves*.pdf",
    "results*.png",
    "results*.pdf",
)
_TMP = ".tmp-"


def _own(name: str, index: int, count: int) -> bool:
    """Whether this host answers for an output ``name``: on one host every output; on several
    its own tagged files, and host 0 the untagged ones of an earlier one-host study."""
    if count == 1:
        return True
    return host_tag(index, count) in name or (index == 0 and ".host" not in name)


def outputs_in(out: str, index: int = 0, count: int = 1) -> list:
    """The earlier study's outputs in ``out`` that this host answers for (names, sorted)."""
    import fnmatch

    try:
        names = os.listdir(out)
    except OSError:
        return []
    return sorted(
        n
        for n in names
        if any(fnmatch.fnmatch(n, p) for p in OUTPUTS) and _TMP not in n and _own(n, index, count)
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def clean_leftovers(out: str, index: int = 0, count: int = 1) -> list:
    """Remove the temporary files and staging folders that a killed jaxbco process left in
    ``out`` (``*.tmp-PID``, ``.staging*-PID``; this host's only, and only where no process PID
    runs any more); returns their names."""
    import shutil

    tag, gone = host_tag(index, count), []
    mine = (
        f"state{tag}.npz{_TMP}",
        f"results{tag}.nc{_TMP}",
        f"summary{tag}.json{_TMP}",
        f"{_STAGING}{tag}-",
    )
    for name in os.listdir(out):
        prefix = next((m for m in mine if name.startswith(m)), None)
        if prefix is None:
            continue
        pid = name[len(prefix) :]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        path = os.path.join(out, name)
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.remove(path)
            except OSError:
                continue
        gone.append(name)
    return gone


def prepare_output(
    out: str, index: int, count: int, *, resume: bool, overwrite: bool, note=None
) -> tuple[str, str]:
    """(results file, state file) of this host in ``out``, after the checks that nothing is
    lost: a folder another live run writes into is refused (``output_folders.lock_folder``); an
    unfinished run's state is continued only with ``--resume``; a folder holding a
    finished study's outputs is refused unless ``--overwrite`` (which replaces them only once
    the new study is complete; see ``Staging``).  Leftover temporaries of killed runs go.
    ``note(text)`` reports what is worth knowing (default: stderr)."""
    import sys

    note = note or (lambda text: print(f"jaxbco: note: {text}", file=sys.stderr))
    lock_folder(out, host_tag(index, count))  # before looking: a live run owns its folder
    results_file, state = output_names(out, index, count)
    gone = clean_leftovers(out, index, count)
    if gone:
        note(f"removed temporary files of an earlier, killed run: {', '.join(gone)}")
    if os.path.exists(state):
        return results_file, resume_path(state, resume)
    done = outputs_in(out, index, count)
    if done and not overwrite:
        if resume:
            raise ValueError(
                f"nothing to resume: {out!r} has no {os.path.basename(state)}, the "
                f"study there finished ({', '.join(done)}); pass --overwrite to run "
                f"it again, or choose another --out"
            )
        raise ValueError(
            f"{out!r} already holds the results of an earlier study "
            f"({', '.join(done)}); pass --overwrite to replace them (once the new "
            f"study is complete), or choose another --out"
        )
    if resume:
        note(f"no {os.path.basename(state)} in {out!r} to resume from; starting from round 1")
    return results_file, state


class Staging:
    """Outputs written into ``OUT/.staging[TAG]-PID/`` and moved into ``OUT`` together by
    ``commit`` once all are complete, which then removes the earlier study's outputs that the
    new one did not replace (``clean``; see ``OUTPUTS``); an error or interrupt removes the staging folder (``with``), so
    partial files never replace complete ones."""

    def __init__(self, out: str, index: int = 0, count: int = 1, *, clean: bool = True):
        self.out, self.index, self.count, self.clean = out, index, count, clean
        self.dir = os.path.join(out, f"{_STAGING}{host_tag(index, count)}-{os.getpid()}")
        os.makedirs(self.dir, exist_ok=True)

    def path(self, name: str) -> str:
        """Where to write the output ``name`` now."""
        return os.path.join(self.dir, name)

    def final(self, path: str) -> str:
        """Where a staged ``path`` lands on ``commit``."""
        return os.path.join(self.out, os.path.relpath(path, self.dir))

    def commit(self) -> list:
        """Move every staged file into ``out`` (``os.replace``, each atomic), remove the stale
        outputs of the earlier study; the final paths."""
        names = sorted(os.listdir(self.dir))
        stale = (
            [n for n in outputs_in(self.out, self.index, self.count) if n not in names]
            if self.clean
            else []
        )
        for n in names:
            os.replace(os.path.join(self.dir, n), os.path.join(self.out, n))
        for n in stale:
            try:
                os.remove(os.path.join(self.out, n))
            except OSError:
                pass
        os.rmdir(self.dir)
        return [os.path.join(self.out, n) for n in names]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if os.path.isdir(self.dir):
            import shutil

            shutil.rmtree(self.dir, ignore_errors=True)
        return False
