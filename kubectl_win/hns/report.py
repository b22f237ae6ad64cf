"""HnsReport: one node's HNS analysis, its JSON contract (doctor's envelope plus `hns`) and its table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import IO, Any

from kubectl_win.findings import SCHEMA_VERSION, Finding, summarize
from kubectl_win.hns.model import HnsState
from kubectl_win.output.findings_table import render_by_severity
from kubectl_win.output.fold import Writer


def hns_section(node: str | None, state: HnsState) -> dict[str, Any]:
    """The `hns` entry for one node: what doctor -o json lists per node under hns.nodes as well."""
    return {"node": node, "version": state.version, "schemas": sorted(state.schemas),
            "counts": state.counts(), "read": sorted(state.present)}


@dataclass
class HnsReport:
    node: str | None
    state: HnsState
    findings: list[Finding]
    compared: list[str] = field(default_factory=list)  # the cluster kinds the dump was compared with

    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = summarize(self.findings)
        data["comparedWith"] = self.compared
        return data

    def to_dict(self, shell: str = "posix") -> dict[str, Any]:
        return {"schemaVersion": SCHEMA_VERSION, "kind": "HnsReport",
                "hns": hns_section(self.node, self.state),
                "findings": [f.to_dict(location=False, shell=shell) for f in self.findings],
                "summary": self.summary()}


def state_line(node: str | None, state: HnsState) -> str:
    counts = state.counts()
    version = f"HNS {state.version}" if state.version else "HNS version unknown"
    schemas = "/".join(sorted(state.schemas)) or "no objects"
    from kubectl_win.output.words import counted

    return (f"{node or 'node unknown'}: {version} ({schemas}): {counted(counts['networks'], 'network')}, "
            f"{counted(counts['endpoints'], 'endpoint')} ({counts['localEndpoints']} local, "
            f"{counts['remoteEndpoints']} remote), {counted(counts['loadBalancers'], 'load balancer')} "
            f"({counts['dsrLoadBalancers']} DSR, {counts['nodePortLoadBalancers']} node port)")


def render(report: HnsReport, out: IO[str], wide: bool = False, colour: bool = False,
           width: int | None = None, shell: str = "posix") -> None:
    """The node's state line, its findings (see output.findings_table) and a summary; with `width`, none wider."""
    from kubectl_win.catalog import family

    checks = family("hns")
    write = Writer(out, width).text if width else (lambda text: out.write(text + "\n"))
    write(state_line(report.node, report.state))
    out.write("\n")
    render_by_severity(report.findings, out, wide=wide, colour=colour, width=width, shell=shell,
                       title=lambda check_id: checks[check_id].title if check_id in checks else "")
    s = report.summary()
    from kubectl_win.output.words import severity_counts

    text = severity_counts(s["errors"], s["warnings"], s["infos"])
    text += "; compared with " + ", ".join(report.compared) if report.compared else \
        "; not compared with the cluster (give --cluster-from-dump)"
    write(("No problems found. " if not report.findings else "") + text)
