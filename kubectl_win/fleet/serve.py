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
from kubectl_win.terminal import terminal_safe

if TYPE_CHECKING:
    from kubectl_win.doctor.run import DoctorOptions
    from kubectl_win.fleet.serve_options import ServeOptions

Log = Callable[[str], None]


def serve(options: ServeOptions, clusters: Mapping[str, str | None], log: Log, stop: threading.Event) -> bool:
    """Serve until `stop` is set. `clusters`: each cluster's label -> its kubeconfig context (None: the current
    one, or the in-cluster config). True when a scan was still under way: its threads end with the process."""
    fix_mmap_threshold()
    # Healthy while some cluster's scan finishes at least once per interval plus two scan deadlines.
    board = Board(tuple(clusters), options.interval + 2 * options.scan_timeout + 60.0,
                  options.cluster_label)
    server = MetricsServer(options.host, options.port, board)  # a busy port fails here, before any scan
    http = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="serve-http",
                            daemon=True)
    scans = threading.Thread(target=scan_forever, args=(options, clusters, board, log, stop), name="serve-scans",
                             daemon=True)
    http.start()
    log(f"serving {server.url}/metrics (and /healthz, /readyz); scanning {', '.join(map(terminal_safe, clusters))} "
        f"every {options.interval:g}s")
    scans.start()
    try:
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    server.shutdown()
    server.server_close()
    _stop_credential_plugins()
    return scans.is_alive()


def _stop_credential_plugins() -> None:
    """Credential plugins still running for a scan under way end with serve, with their children."""
    import sys

    plugins = sys.modules.get("kubectl_win.kube.credential_plugin")
    if plugins is not None:
        plugins.kill_running()


def scan_forever(options: ServeOptions, clusters: Mapping[str, str | None], board: Board, log: Log,
                 stop: threading.Event) -> None:
    """A scan of every cluster, then the rest of the interval (measured from the scan's start), until `stop`."""
    while not stop.is_set():
        started = time.monotonic()
        scan_round(options, clusters, board, log)
        release_free_memory()
        stop.wait(max(0.0, options.interval - (time.monotonic() - started)))


def scan_round(options: ServeOptions, clusters: Mapping[str, str | None], board: Board, log: Log) -> None:
    """Every cluster scanned once, `options.parallel` at a time, each published on the board as it finishes
    (its report turned into figures and dropped); a cluster past --scan-timeout counts as failed."""
    from kubectl_win.fleet.scan import scan_clusters
    from kubectl_win.redact import redact

    done: set[str] = set()
    try:
        for scan in scan_clusters(list(clusters), lambda label: doctor_options(options, clusters[label]),
                                  options.parallel, options.scan_timeout):
            before = board.figures.get(scan.context)
            done.add(scan.context)
            if scan.ok:
                board.publish_one(scan.context, figures_of(scan).counted(before))
                continue
            last = before if before is not None and before.last_success is not None else None
            board.publish_one(scan.context, (last.failed(scan.seconds) if last else figures_of(scan)).counted(before))
            log(f'serve: context "{terminal_safe(scan.context)}": scan failed'
                f'{", the last good figures are kept" if last else ""}: {terminal_safe(redact(scan.error or ""))}')
    except Exception as exc:  # noqa: BLE001 - a bug in one scan must not end the server
        log(f"serve: scan failed: internal error: {type(exc).__name__}: {terminal_safe(redact(str(exc)))}")
    for label in clusters:  # any cluster the round did not get to
        if label not in done:
            last = board.figures.get(label)
            board.publish_one(label, (last.failed(0.0) if last else ClusterFigures(label, False, 0.0)).counted(last))


def doctor_options(options: ServeOptions, context: str | None) -> DoctorOptions:
    from kubectl_win.doctor.run import DoctorOptions
    from kubectl_win.kube import KubeFlags

    flags = KubeFlags(kubeconfig=options.kubeconfig, context=context, request_timeout=options.request_timeout)
    return DoctorOptions(scope="cluster", kube_flags=flags, config=options.config)
