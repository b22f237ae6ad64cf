"""Scan many clusters: doctor once per kubeconfig context, up to `parallel` at a time, each result handed on as
it is ready (and then dropped by the caller), so a fleet never sits in memory at once.

A cluster that cannot be read costs only its own entry: its ClusterScan has `error` set and no report. That
includes a 403 on nodes (the report's NEEDED reads): such a scan is incomplete (exit 5), as the single-cluster
report says.

Threads, not processes, decided by measurement (bench/bench_fleet.py: 8 clusters of 500 nodes and 15,000 pods,
each its own test API server on loopback, 2 shared cores). Reading a cluster is CPU-bound in Python (turning
pages into records), so threads share one interpreter lock: the gain over a shell loop is the interpreter
start and imports paid once instead of per cluster, and the overlap of network waits. Worker processes
were no faster on busy cores and each costs its own interpreter and imports. With threads, clusters in flight
on loopback contend for the lock and each holds its read-ahead pages, so the number in flight follows pace.py:
one more only while the process is waiting rather than busy. With latency per page (a remote control plane)
the pace lets several clusters be read at once. bench/bench_fleet.py measures the fleet's time against the
shell loop's and its peak memory against one cluster's run, with and without latency (`--latency`).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubectl_win.doctor.render.report import DoctorReport
    from kubectl_win.doctor.run import DoctorOptions


@dataclass
class ClusterScan:
    """One cluster's outcome: a report, or the one-line reason it could not be read."""

    context: str
    server: str | None
    report: DoctorReport | None
    error: str | None = None
    exit_code: int = 0  # the error's exit status (3 unreachable, ...); 0 when the cluster was read
    seconds: float = 0.0
    index: int = 0  # position among the contexts asked for

    @property
    def ok(self) -> bool:
        return self.report is not None


GRACE = 2.0  # seconds past a scan's deadline before the fleet stops waiting for its thread

# Scans given up at their deadline whose threads have not ended yet, by context: the next round reports such
# a cluster as still stuck instead of starting a second thread on it (at most one stuck thread per cluster).
_abandoned: dict[str, threading.Thread] = {}


def scan_one(context: str, options: DoctorOptions, index: int = 0, timeout: float | None = None) -> ClusterScan:
    """doctor on one context; a KubectlWinError (unreachable, 401, 403 on nodes, past `timeout` seconds)
    becomes the scan's error."""
    from dataclasses import replace

    from kubectl_win.doctor.run import run_doctor
    from kubectl_win.errors import KubectlWinError

    started = time.monotonic()
    server = _server_of(options)
    if timeout is not None:
        from kubectl_win.kube import KubeFlags
        from kubectl_win.kube.deadline import Deadline

        options = replace(options, kube_flags=replace(options.kube_flags or KubeFlags(),
                                                      deadline=Deadline.after(timeout)))
    try:
        report = run_doctor(options)
    except KubectlWinError as exc:
        return ClusterScan(context, server, None, str(exc), int(exc.exit_code), time.monotonic() - started, index)
    return scan_of(context, server, report, time.monotonic() - started, index)


def scan_of(context: str, server: str | None, report: DoctorReport, seconds: float, index: int = 0) -> ClusterScan:
    """A read cluster's scan; one whose nodes could not be read is a failed, incomplete one (exit 5): a report
    without the nodes says nothing about the cluster's Windows nodes."""
    from kubectl_win.errors import ExitStatus

    unread = report.unread()
    if unread:
        reasons = "; ".join(f"{s.resource}: {s.reason}" for s in unread)
        return ClusterScan(context, server, None, f"cannot read {reasons}", int(ExitStatus.INCOMPLETE),
                           seconds, index)
    return ClusterScan(context, server, report, seconds=seconds, index=index)


def scan_clusters(contexts: Sequence[str], options_for: Callable[[str], DoctorOptions], parallel: int = 4,
                  timeout: float | None = None) -> Iterator[ClusterScan]:
    """Scans as they finish (each carries its `index` in `contexts`), at most `parallel` under way at once:
    fewer while the process is busy with the ones it has (see pace.py). Each scan runs in a daemon thread, so
    Ctrl-C ends the run at once instead of waiting for the clusters in flight.

    `timeout`: each scan's deadline in seconds (--scan-timeout). The scan itself stops at it (requests and
    credential plugins are bounded by it); whatever it still waits on past GRACE more, the cluster is
    reported as failed and the others go on."""
    from kubectl_win.fleet.pace import WINDOW, Pace

    pace = Pace(parallel)
    upcoming = iter(enumerate(contexts))
    finished: queue.Queue[tuple[int, ClusterScan | None, BaseException | None]] = queue.Queue()
    running: dict[int, tuple[str, threading.Thread, float]] = {}  # index -> context, thread, started
    left = len(contexts)

    def scan(context: str, options: DoctorOptions, index: int) -> None:
        try:
            finished.put((index, scan_one(context, options, index, timeout), None))
        except BaseException as exc:  # a bug, not a cluster's trouble: raised in the caller
            finished.put((index, None, exc))

    while left:
        while len(running) < pace.allowed():
            item = next(upcoming, None)
            if item is None:
                break
            index, context = item
            stuck = _abandoned.get(context)
            if stuck is not None and stuck.is_alive():
                left -= 1
                yield ClusterScan(context, None, None, f"the previous scan of this cluster is still stuck past its "
                                  f"--scan-timeout of {timeout:g}s; not scanned again until it ends", 3, 0.0, index)
                continue
            _abandoned.pop(context, None)
            thread = threading.Thread(target=scan, args=(context, options_for(context), index), daemon=True,
                                      name=f"doctor-cluster-{index}")
            running[index] = (context, thread, time.monotonic())
            thread.start()
        try:
            index, result, error = finished.get(timeout=WINDOW)
        except queue.Empty:
            for late in _overdue(running, timeout):
                context, thread, started = running.pop(late)
                _abandoned[context] = thread
                left -= 1
                yield ClusterScan(context, None, None, f"the scan did not finish within {timeout:g}s "
                                  "(--scan-timeout)", 3, time.monotonic() - started, late)
            continue
        if index not in running:  # a scan given up at its deadline that ended after all: already reported
            continue
        del running[index]
        left -= 1
        if error is not None:
            raise error
        assert result is not None
        yield result


def _overdue(running: dict[int, tuple[str, threading.Thread, float]], timeout: float | None) -> list[int]:
    if timeout is None:
        return []
    now = time.monotonic()
    return [index for index, (_, _, started) in running.items() if now - started > timeout + GRACE]


def _server_of(options: DoctorOptions) -> str | None:
    """The context's server, from the kubeconfig alone: credentials (an exec plugin) are loaded once, by the scan."""
    from kubectl_win.kube import KubeFlags
    from kubectl_win.kube.config import context_server

    try:
        return context_server(options.kube_flags or KubeFlags())
    except Exception:  # noqa: BLE001 - the scan itself reports why the context cannot be used
        return None
