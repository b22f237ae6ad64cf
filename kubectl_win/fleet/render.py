"""Rendering a fleet run: one renderer per output format, fed each cluster as it finishes, then finished.

`RENDERERS` maps every `-o` format to its renderer class (imported only when chosen), so a format is one line
here. A renderer gets `add(scan, summary)` once per cluster, in finish order, and must not keep the scan: the
report is dropped as soon as every renderer has seen it. Formats that put clusters in the order they were asked
for use `InOrder`, which writes a cluster's part at once when the ones before it are written and otherwise keeps
the rendered bytes in a spooled temporary file (memory up to a MiB, then disk), never the report.
"""

from __future__ import annotations

import importlib
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Protocol

from kubectl_win.fleet.summary import ClusterSummary, summarise

if TYPE_CHECKING:
    from kubectl_win.fleet.scan import ClusterScan

RENDERERS = {
    "table": "kubectl_win.fleet.table:TableRenderer",
    "wide": "kubectl_win.fleet.table:TableRenderer",
    "json": "kubectl_win.fleet.documents:JsonRenderer",
    "yaml": "kubectl_win.fleet.documents:YamlRenderer",
    "sarif": "kubectl_win.fleet.ci:SarifRenderer",
    "junit": "kubectl_win.fleet.ci:JunitRenderer",
    "html": "kubectl_win.fleet.html:HtmlRenderer",
    "openmetrics": "kubectl_win.fleet.metrics:OpenMetricsRenderer",
}
SPOOL_BYTES = 1 << 20


@dataclass
class FleetOutput:
    """Where and how a renderer writes: the stream and the terminal facts the single-cluster renderers take."""

    out: IO[str]
    output: str = "table"
    shell: str = "posix"
    colour: bool = False
    width: int | None = None  # a terminal's; None when piped
    scope: str = "cluster"
    cluster_label: str | None = None  # -o openmetrics: the label that names each cluster (metrics.label_for)


class FleetRenderer(Protocol):
    def add(self, scan: ClusterScan, summary: ClusterSummary) -> None: ...

    def finish(self, summaries: list[ClusterSummary]) -> None: ...


def renderer(output: FleetOutput) -> FleetRenderer:
    module, _, name = RENDERERS[output.output].partition(":")
    return getattr(importlib.import_module(module), name)(output)  # type: ignore[no-any-return]


def render_fleet(scans: Iterable[ClusterScan], renderers: list[FleetRenderer], fail_on: str, shell: str = "posix",
                 on_arrive: Callable[[ClusterScan], None] | None = None,
                 on_done: Callable[[ClusterScan], None] | None = None) -> list[ClusterSummary]:
    """Feed each scan to every renderer as it arrives, keep its summary, drop it; then finish them all.
    `on_arrive` and `on_done` bracket the rendering (a progress line steps aside for the text)."""
    summaries = []
    for scan in scans:
        if on_arrive is not None:
            on_arrive(scan)
        summary = summarise(scan, fail_on, shell)
        for each in renderers:
            each.add(scan, summary)
        summaries.append(summary)
        if on_done is not None:
            on_done(scan)
        del scan  # the report goes now, not when the next one arrives
    for each in renderers:
        each.finish(summaries)
    return summaries


class InOrder:
    """Parts written in index order as soon as they can be; a part that is early waits, as bytes, in a spool."""

    def __init__(self, write: Callable[[bytes], Any]) -> None:
        self._write = write
        self._next = 0
        self._waiting: dict[int, Any] = {}

    def put(self, index: int, data: bytes) -> None:
        if index != self._next:
            spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES, mode="w+b")
            spool.write(data)
            self._waiting[index] = spool
            return
        self._write(data)
        self._next += 1
        while self._next in self._waiting:
            spool = self._waiting.pop(self._next)
            spool.seek(0)
            while chunk := spool.read(SPOOL_BYTES):
                self._write(chunk)
            spool.close()
            self._next += 1

    def flush(self) -> None:
        """Whatever still waits (indexes never put leave gaps), in index order."""
        for index in sorted(self._waiting):
            self._next = index
            spool = self._waiting.pop(index)
            spool.seek(0)
            self._write(spool.read())
            spool.close()
