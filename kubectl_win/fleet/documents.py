"""A fleet run as one JSON or YAML document (`-o json|yaml`), clusters in the order they were asked for.

    {"schemaVersion": "kubectl-win/v1", "kind": "DoctorFleetReport",
     "clusters": [{"context": "A", "server": "https://...", "ok": true, "serverVersion": "v1.32.0",
                   "summary": {...}, "findings": [...], "skipped": [...]},
                  {"context": "B", "server": "https://...", "ok": false, "error": "...", "exitCode": 3}],
     "summary": {"clusters": 2, "read": 1, "failed": 1, "errors": 3, "warnings": 1, "infos": 0, ...}}

A cluster's `summary`, `findings` and `skipped` (and for `doctor nodes` its `nodes`) are exactly the
single-cluster report's (DoctorReport.to_dict).
Each cluster is encoded when it finishes and written as soon as the clusters before it are (see InOrder), so
the document streams and only the small summaries are kept. The YAML is the same document: PyYAML writes a
one-item list exactly as that item appears in the whole list, so each cluster is dumped on its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubectl_win.findings import SCHEMA_VERSION
from kubectl_win.fleet.render import FleetOutput, InOrder
from kubectl_win.fleet.summary import ClusterSummary, fleet_counts

if TYPE_CHECKING:
    from kubectl_win.fleet.scan import ClusterScan

KIND = "DoctorFleetReport"


def cluster_entry(scan: ClusterScan, shell: str, lazy: bool = False) -> dict[str, Any]:
    head: dict[str, Any] = {"context": scan.context, "server": scan.server, "ok": scan.ok}
    if scan.report is None:
        return {**head, "error": scan.error, "exitCode": scan.exit_code}
    report = scan.report.to_dict(shell, lazy=lazy)
    nodes = {"nodes": report["nodes"]} if scan.report.scope == "nodes" else {}  # `doctor nodes`: the inventory
    return {**head, "serverVersion": report["cluster"]["serverVersion"], **nodes, "summary": report["summary"],
            "findings": report["findings"], "skipped": report["skipped"],
            **({"hns": report["hns"]} if "hns" in report else {})}


def fleet_summary(summaries: list[ClusterSummary]) -> dict[str, Any]:
    total = fleet_counts(summaries)
    from kubectl_win.fleet.summary import fleet_exit_code

    return {**total, "exitCode": fleet_exit_code(summaries)}


class JsonRenderer:
    def __init__(self, output: FleetOutput) -> None:
        from kubectl_win.output.structured import byte_writer, encode

        self.o = output
        self._encode = encode
        self._write = byte_writer(output.out)
        self._write(b'{\n  "schemaVersion": ' + encode(SCHEMA_VERSION, 0) + b',\n  "kind": ' + encode(KIND, 0)
                    + b',\n  "clusters": [\n')
        self._parts = InOrder(self._write)
        self._first = True

    def add(self, scan: ClusterScan, summary: ClusterSummary) -> None:
        entry = cluster_entry(scan, self.o.shell)
        separator = b"" if summary.index == 0 else b",\n"
        self._parts.put(summary.index, separator + b"    " + self._encode(entry, 4))

    def finish(self, summaries: list[ClusterSummary]) -> None:
        self._parts.flush()
        self._write(b"\n  ],\n  \"summary\": " + self._encode(fleet_summary(summaries), 2) + b"\n}\n")


class YamlRenderer:
    def __init__(self, output: FleetOutput) -> None:
        from kubectl_win.output.structured import byte_writer, render_yaml

        self.o = output
        self._render_yaml = render_yaml
        self._write = byte_writer(output.out)
        self._write(self._dump({"schemaVersion": SCHEMA_VERSION, "kind": KIND}) + b"clusters:\n")
        self._parts = InOrder(self._write)

    def _dump(self, value: Any) -> bytes:
        import io

        text = io.StringIO()
        self._render_yaml(value, text)
        return text.getvalue().encode("utf-8")

    def add(self, scan: ClusterScan, summary: ClusterSummary) -> None:
        self._parts.put(summary.index, self._dump([cluster_entry(scan, self.o.shell)]))

    def finish(self, summaries: list[ClusterSummary]) -> None:
        self._parts.flush()
        self._write(self._dump({"summary": fleet_summary(summaries)}))
