"""`kubectl win serve`: doctor on every cluster, again every interval, in a background thread, and the figures of
the last completed scan served as Prometheus metrics (httpd.py) until SIGTERM or Ctrl-C.

Between scans only each cluster's ClusterFigures are kept (a few hundred numbers); the reports are dropped as
each cluster finishes and the freed memory handed back (heap.py), so memory stays what one scan needs. A
cluster that cannot be read keeps its last good figures with kubectl_win_scan_success 0, and one line on
stderr says why.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from kubectl_win.fleet.figures import ClusterFigures, figures_of
from kubectl_win.fleet.heap import fix_mmap_threshold, release_free_memory
from kubectl_win.fleet.httpd import Board, MetricsServer

if TYPE_CHECKING:
    from kubectl_win.doctor.run import DoctorOptions
    from kubectl_win.fleet.serve_options import ServeOptions

Log = Callable[[str], None]


def serve(options: ServeOptions, clusters: Mapping[str, str | None], log: Log, stop: threading.Event) -> bool:
    """Serve until `stop` is set. `clusters`: each cluster's label -> its kubeconfig context (None: the current
    one, or the in-cluster config). True when a scan was still under way: its threads end with the process."""
    fix_mmap_threshold()
    board = Board(options.cluster_label)
    server = MetricsServer(options.host, options.port, board)  # a busy port fails here, before any scan
    http = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="serve-http",
                            daemon=True)
    scans = threading.Thread(target=scan_forever, args=(options, clusters, board, log, stop), name="serve-scans",
                             daemon=True)
    http.start()
    log(f"serving {server.url}/metrics (and /healthz, /readyz); scanning {', '.join(clusters)} "
        f"every {options.interval:g}s")
    scans.start()
    try:
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    server.shutdown()
    server.server_close()
    return scans.is_alive()


def scan_forever(options: ServeOptions, clusters: Mapping[str, str | None], board: Board, log: Log,
                 stop: threading.Event) -> None:
    """A scan of every cluster, then the rest of the interval (measured from the scan's start), until `stop`."""
    while not stop.is_set():
        started = time.monotonic()
        board.publish(scan_round(options, clusters, board.figures, log))
        release_free_memory()
        stop.wait(max(0.0, options.interval - (time.monotonic() - started)))


def scan_round(options: ServeOptions, clusters: Mapping[str, str | None], previous: Mapping[str, ClusterFigures],
               log: Log) -> dict[str, ClusterFigures]:
    """Every cluster scanned once, `options.parallel` at a time; each report turned into figures and dropped."""
    from kubectl_win.fleet.scan import scan_clusters
    from kubectl_win.redact import redact

    fresh: dict[str, ClusterFigures] = {}
    try:
        for scan in scan_clusters(list(clusters), lambda label: doctor_options(options, clusters[label]),
                                  options.parallel):
            before = previous.get(scan.context)
            if scan.ok:
                fresh[scan.context] = figures_of(scan).counted(before)
                continue
            last = before if before is not None and before.last_success is not None else None
            fresh[scan.context] = (last.failed(scan.seconds) if last else figures_of(scan)).counted(before)
            log(f'serve: context "{scan.context}": scan failed'
                f'{", the last good figures are kept" if last else ""}: {redact(scan.error or "")}')
    except Exception as exc:  # noqa: BLE001 - a bug in one scan must not end the server
        log(f"serve: scan failed: internal error: {type(exc).__name__}: {redact(str(exc))}")
    for label in clusters:  # any cluster the round did not get to
        if label not in fresh:
            last = previous.get(label)
            fresh[label] = (last.failed(0.0) if last else ClusterFigures(label, False, 0.0)).counted(last)
    return fresh


def doctor_options(options: ServeOptions, context: str | None) -> DoctorOptions:
    from kubectl_win.doctor.run import DoctorOptions
    from kubectl_win.kube import KubeFlags

    flags = KubeFlags(kubeconfig=options.kubeconfig, context=context, request_timeout=options.request_timeout)
    return DoctorOptions(scope="cluster", kube_flags=flags, config=options.config)
