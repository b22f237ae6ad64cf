"""Scan many clusters: doctor once per kubeconfig context, `parallel` at a time, each result handed on as it
is ready (and then dropped by the caller), so a fleet never sits in memory at once.

A cluster that cannot be read costs only its own entry: its ClusterScan has `error` set and no report.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubectl_win.doctor.render.report import DoctorReport
    from kubectl_win.doctor.run import DoctorOptions


NEEDED = ("nodes",)  # without these a cluster counts as not read (the single-cluster report skips them)


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


def scan_one(context: str, options: DoctorOptions, index: int = 0) -> ClusterScan:
    """doctor on one context; a KubectlWinError (unreachable, 401, 403 on nodes) becomes the scan's error."""
    from kubectl_win.doctor.run import run_doctor
    from kubectl_win.errors import KubectlWinError

    started = time.monotonic()
    server = _server_of(options)
    try:
        report = run_doctor(options)
    except KubectlWinError as exc:
        return ClusterScan(context, server, None, str(exc), int(exc.exit_code), time.monotonic() - started, index)
    unread = next((s for s in report.skipped if s.resource in NEEDED), None)
    if unread is not None:  # a report without the nodes says nothing about the cluster's Windows nodes
        return ClusterScan(context, server, None, f"cannot read {unread.resource}: {unread.reason}", 3,
                           time.monotonic() - started, index)
    return ClusterScan(context, server, report, seconds=time.monotonic() - started, index=index)


def scan_clusters(contexts: Sequence[str], options_for: Callable[[str], DoctorOptions], parallel: int = 4
                  ) -> Iterator[ClusterScan]:
    """Scans as they finish (each carries its `index` in `contexts`), at most `parallel` under way at once."""
    width = max(1, parallel)
    upcoming = iter(enumerate(contexts))
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="doctor-cluster") as pool:
        running: set[Future[ClusterScan]] = set()

        def submit() -> None:
            for index, context in upcoming:
                running.add(pool.submit(scan_one, context, options_for(context), index))
                return

        for _ in range(width):
            submit()
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                running.discard(future)
                submit()
                yield future.result()


def _server_of(options: DoctorOptions) -> str | None:
    try:
        from kubectl_win.kube.config import load

        return load(options.kube_flags).server
    except Exception:  # noqa: BLE001 - the scan itself reports why the context cannot be used
        return None
