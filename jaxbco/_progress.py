"""``sweep``'s progress bar during the comparator pass (elapsed time; no ETA is possible)."""

from __future__ import annotations


class comparator_progress:
    """While x* is computed (one compiled pass, compile included, that reports nothing until
    it ends), the bar reads "x* for S seeds over T rounds" with the elapsed time, refreshed
    every second by a thread; then it is back to the runs."""

    def __init__(self, bar, n_seeds: int, horizon: int):
        self.bar, self.n_seeds, self.horizon = bar, n_seeds, horizon

    def __enter__(self):
        import threading

        if self.bar is None:
            return self
        self.desc = self.bar.desc
        self.bar.set_description(f"x* for {self.n_seeds} seeds over {self.horizon} rounds "
                                 f"(one pass, no ETA)", refresh=True)
        self.stop = threading.Event()

        def beat():
            while not self.stop.wait(1.0):
                self.bar.refresh()

        self.thread = threading.Thread(target=beat, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.stop.set()
            self.thread.join()
            self.bar.set_description(self.desc, refresh=False)
            self.bar.reset(total=self.bar.total)  # rounds/s and the ETA from the runs alone
        return False
