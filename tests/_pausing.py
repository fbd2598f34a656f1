"""A `jaxbco` run that pauses itself mid-way, for tests that signal or race a live run."""

import os
import time

# ``jaxbco`` (as ``python -m jaxbco``: ``sys.exit(main())``) that stops itself with SIGSTOP
# right after writing the first state past round ARGV[1] (taken off the command line): the run
# has shown it is running (its state is on disk) and cannot end before the test acts, so what
# the test does next (a signal, a second run) meets a live run mid-way every time, with no
# sleep and no race with the run's end.
PAUSING_JAXBCO = """
import os, signal, sys
from jaxbco._src import resume
from jaxbco.cli import main
after, real = int(sys.argv.pop(1)), resume.save
def save(path, carry, x_star, next_round, *rest, **kw):
    real(path, carry, x_star, next_round, *rest, **kw)
    if next_round > after:
        resume.save = real
        os.kill(os.getpid(), signal.SIGSTOP)
resume.save = save
sys.exit(main())
"""


def paused(proc, timeout=300):
    """Wait until ``proc`` (``PAUSING_JAXBCO``) has stopped itself; fail with its stderr if it
    ended instead (it cannot reach the end of its run without pausing first)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        pid, status = os.waitpid(proc.pid, os.WUNTRACED | os.WNOHANG)
        if pid and os.WIFSTOPPED(status):
            return
        if pid:  # ended: reaped here, so tell Popen its exit status
            proc.returncode = os.waitstatus_to_exitcode(status)
            raise AssertionError(
                f"exit {proc.returncode} before pausing: {proc.stderr.read()[-2000:]!r}"
            )
        time.sleep(0.02)
    proc.kill()
    raise AssertionError(f"no pause within {timeout} s")
