"""How many clusters a fleet run reads at once: up to --parallel, but only while another one can help.

Python threads share one interpreter lock, so the clusters' pages are turned into records one at a time
whatever the number of threads. A cluster read over a slow link spends most of its time waiting for pages, and
then several at once overlap the waits; a cluster that answers at once (loopback, a big fast control plane)
keeps the process busy by itself, and a second one in flight only adds its pages to memory and its thread to
the contention for the lock (bench/bench_fleet.py on 2 cores: 4 clusters in flight on loopback took longer than
1, at twice the memory). So the pace starts at one cluster and admits one more each time the process wanted
less than BUSY of a CPU over the last window, never more than --parallel, and never takes one back.

"Wanted" is time on a CPU plus time runnable but waiting for one (Linux's per-thread schedstat): on a machine
other work keeps busy, a process that gets half a CPU is still busy, not waiting for its clusters; elsewhere it
is the process's CPU time.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

BUSY = 0.5  # seconds of CPU wanted per second above which the process counts as busy (set higher, windows of
# connection set-up admitted clusters that only added their pages to memory; bench/bench_fleet.py measures the
# fleet's peak memory against one cluster's)
WINDOW = 0.25  # seconds between two decisions


class Demand:
    """Seconds of CPU the process's threads used or waited for so far (threads that ended keep counting)."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}
        self._total = 0

    def __call__(self) -> float:
        try:
            tasks = os.listdir("/proc/self/task")
        except OSError:
            return time.process_time()
        for task in tasks:
            try:
                with open(f"/proc/self/task/{task}/schedstat") as stat:
                    running, waiting = stat.read().split()[:2]
            except (OSError, ValueError):
                continue
            now = int(running) + int(waiting)
            self._total += now - self._seen.get(task, 0)
            self._seen[task] = now
        return self._total / 1e9


class Pace:
    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic,
                 demand: Callable[[], float] | None = None) -> None:
        self.limit = max(1, limit)
        self.level = 1
        self._clock, self._demand = clock, demand or Demand()
        self._since, self._wanted_since = clock(), self._demand()

    def allowed(self) -> int:
        """How many clusters may be in flight now (call it often: it decides once per WINDOW)."""
        now = self._clock()
        elapsed = now - self._since
        if elapsed >= WINDOW:
            wanted = self._demand()
            if (wanted - self._wanted_since) / elapsed < BUSY and self.level < self.limit:
                self.level += 1
            self._since, self._wanted_since = now, wanted
        return self.level
