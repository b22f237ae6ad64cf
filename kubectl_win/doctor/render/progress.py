"""doctor's progress line on stderr: resource being read, pages fetched, objects read, elapsed time.

One line, rewritten in place with a carriage return and erased when the scan ends. It is shown only
when stderr is a terminal and CI is not set (`--progress=auto`), or always/never when asked. A small
thread redraws it twice a second so the elapsed time moves while a slow page is on its way. This is a
dozen lines of terminal output, so it is written here rather than pulling in a progress-bar library
(and its import time) for every run.
"""

from __future__ import annotations

import io
import os
import threading
import time
from collections.abc import Mapping

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO

MODES = ("auto", "always", "never")
REDRAW_SECONDS = 0.5


def wanted(mode: str, stderr_isatty: bool, environ: Mapping[str, str] | None = None) -> bool:
    """Whether to show progress: `auto` means on a terminal and not under CI."""
    if mode == "always":
        return True
    if mode == "never":
        return False
    environ = os.environ if environ is None else environ
    ci = environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return stderr_isatty and not ci


class Progress:
    """Callable as the collector's `progress(resource, objects_so_far)`, once per page."""

    def __init__(self, out: IO[str], clock=time.monotonic) -> None:  # type: ignore[no-untyped-def]
        self._out = out
        self._clock = clock
        self._start = clock()
        self._resource = ""
        self._pages = 0
        self._objects = 0
        self._done: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False

    def __call__(self, resource: str, seen: int) -> None:
        with self._lock:
            self._resource = resource
            self._pages += 1
            self._done[resource] = seen
            self._objects = sum(self._done.values())
        self.draw()

    def line(self) -> str:
        elapsed = self._clock() - self._start
        with self._lock:
            resource, pages, objects = self._resource, self._pages, self._objects
        what = f"reading {resource}" if resource else "connecting"
        return (f"{what}: {pages:,} page{'s' if pages != 1 else ''} fetched, {objects:,} objects read, "
                f"{elapsed:.1f}s")

    def draw(self) -> None:
        try:
            self._out.write("\r" + self.line()[: self._columns() - 1] + "\033[K")
            self._out.flush()
            self._drawn = True
        except (OSError, ValueError):
            pass

    def _columns(self) -> int:
        """The terminal's width: a longer line would wrap, and \\r could no longer rewrite it."""
        try:
            columns = os.get_terminal_size(self._out.fileno()).columns
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            return 1000
        return columns if columns > 1 else 1000  # a terminal that reports no size

    def start(self) -> Progress:
        self.draw()
        self._thread = threading.Thread(target=self._tick, name="doctor-progress", daemon=True)
        self._thread.start()
        return self

    def _tick(self) -> None:
        while not self._stop.wait(REDRAW_SECONDS):
            self.draw()

    def stop(self) -> None:
        """Stop redrawing and erase the line, leaving the terminal as it was."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._erase()

    def _erase(self) -> None:
        if self._drawn:
            try:
                self._out.write("\r\033[K")
                self._out.flush()
            except (OSError, ValueError):
                pass

    def __enter__(self) -> Progress:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class FleetProgress(Progress):
    """The same line for doctor over several clusters: clusters done / total, objects read over all of them.

    `for_cluster(context)` is the collector's progress callable for one cluster (called from its thread)."""

    def __init__(self, out: IO[str], total: int, clock=time.monotonic) -> None:  # type: ignore[no-untyped-def]
        super().__init__(out, clock)
        self._total = total
        self._finished = 0
        self._failed = 0
        self._reading: dict[str, int] = {}  # context -> objects read so far
        self._read = 0  # objects of finished clusters
        self._hidden = False

    def for_cluster(self, context: str) -> Callable[[str, int], None]:
        def progress(resource: str, seen: int) -> None:
            with self._lock:
                key = f"{context}\0{resource}"
                self._reading[key] = seen
            self.draw()

        return progress

    def hide(self) -> None:
        """Erase the line and draw nothing until the next cluster_done: a cluster's report is being printed."""
        with self._lock:
            self._hidden = True
        self._erase()

    def draw(self) -> None:
        if not self._hidden:
            super().draw()

    def cluster_done(self, context: str, ok: bool) -> None:
        with self._lock:
            self._hidden = False
            prefix = f"{context}\0"
            for key in [k for k in self._reading if k.startswith(prefix)]:
                self._read += self._reading.pop(key)
            self._finished += 1
            self._failed += 0 if ok else 1
        self.draw()

    def line(self) -> str:
        elapsed = self._clock() - self._start
        with self._lock:
            done, failed = self._finished, self._failed
            objects = self._read + sum(self._reading.values())
        failed_text = f" ({failed} failed)" if failed else ""
        return (f"clusters: {done}/{self._total} done{failed_text}, {objects:,} objects read, {elapsed:.1f}s")
