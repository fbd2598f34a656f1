"""``sweep``'s progress: a tqdm bar on a terminal, plain lines in a log file.

On a terminal the bar shows rounds/s and the ETA, and during the comparator pass (one compiled
call that reports nothing until it ends) the elapsed time.  Where stderr is not a terminal (a
log file, a pipe) carriage-return bars leave stale text behind ("1% ... ETA 01:40" for a run
that finished), so ``LineBar`` writes whole lines instead: the comparator pass's start and end,
each tenth of the rounds, and the end of the run.
"""

from __future__ import annotations

import sys
import threading
import time

import tqdm


class LineBar:
    """tqdm's ``update``/``set_description``/``reset``/``refresh`` as whole lines on stderr:
    one at every tenth of ``total`` and one when the run ends (``close``)."""

    def __init__(self, total: int, initial: int, desc: str, stream=None):
        self.total, self.n, self.desc = total, initial, desc
        self.stream = sys.stderr if stream is None else stream
        self.start = time.perf_counter()
        self.next_tenth = initial * 10 // max(total, 1) + 1
        self.closed = False

    def _line(self, text: str) -> None:
        print(f"{self.desc}: {text}", file=self.stream, flush=True)

    def update(self, n: int) -> None:
        self.n += n
        tenth = self.n * 10 // max(self.total, 1)
        if tenth >= self.next_tenth and self.n < self.total:
            self.next_tenth = tenth + 1
            rate = self.n / max(time.perf_counter() - self.start, 1e-9)
            eta = (self.total - self.n) / rate
            self._line(
                f"{100 * self.n // self.total}% ({self.n}/{self.total} rounds), "
                f"{time.perf_counter() - self.start:.1f} s, ETA {eta:.0f} s"
            )

    def set_description(self, desc: str, refresh: bool = True) -> None:
        self.desc = desc

    def reset(self, total: int | None = None) -> None:
        self.start = time.perf_counter()  # rates from the runs alone

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._line(
                f"done, {self.n}/{self.total} rounds in {time.perf_counter() - self.start:.1f} s"
            )

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.close()
        return False


def bar(total: int, initial: int, desc: str, enabled: bool):
    """The progress display of ``sweep``: tqdm on a terminal, ``LineBar`` otherwise, a
    disabled tqdm when ``enabled`` is False."""
    if enabled and not sys.stderr.isatty():
        return LineBar(total, initial, desc)
    return tqdm.tqdm(
        total=total,
        initial=initial,
        unit="round",
        unit_scale=True,
        disable=not enabled,
        dynamic_ncols=True,
        leave=False,
        desc=desc,
    )


class comparator_progress:
    """While x* is computed (one compiled pass, compile included, that reports nothing until
    it ends): on a terminal the bar reads "x* for S seeds over T rounds" with the elapsed time,
    refreshed every second by a thread, then it is back to the runs; in a log file one line
    when the pass starts and one with its time when it ends."""

    def __init__(self, bar, n_seeds: int, horizon: int):
        self.bar, self.n_seeds, self.horizon = bar, n_seeds, horizon
        self.what = f"x* for {n_seeds} seeds over {horizon} rounds"

    def __enter__(self):
        self.begin = time.perf_counter()
        if isinstance(self.bar, LineBar):
            print(
                f"{self.what}: one compiled pass (compile included), started",
                file=self.bar.stream,
                flush=True,
            )
            return self
        if self.bar is None:
            return self
        self.desc = self.bar.desc
        self.bar.set_description(f"{self.what} (one pass, elapsed time only)", refresh=True)
        self.stop = threading.Event()

        def beat():
            while not self.stop.wait(1.0):
                self.bar.refresh()

        self.thread = threading.Thread(target=beat, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        if isinstance(self.bar, LineBar):
            if exc[0] is None:
                print(
                    f"{self.what}: done in {time.perf_counter() - self.begin:.1f} s",
                    file=self.bar.stream,
                    flush=True,
                )
            self.bar.reset()
        elif self.bar is not None:
            self.stop.set()
            self.thread.join()
            self.bar.set_description(self.desc, refresh=False)
            self.bar.reset(total=self.bar.total)  # rounds/s and the ETA from the runs alone
        return False
