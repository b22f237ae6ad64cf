"""DoctorReport: the result of one run, its JSON contract and its table rendering."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from kubectl_win.doctor.quantity import format_bytes
from kubectl_win.doctor.records import NodeRecord, Skipped, Snapshot
from kubectl_win.findings import SCHEMA_VERSION, Finding, summarize
from kubectl_win.output.findings_table import render_by_severity
from kubectl_win.output.table import render_table

if TYPE_CHECKING:
    from kubectl_win.platforms import Platform

# What doctor must read to judge anything: without the nodes it cannot tell which pods run on Windows, nor check a
# node, a placement or a network agent, so a run that could not read them is incomplete, never clean.
NEEDED = ("nodes",)
NOT_CHECKED = ("doctor could not check the Windows nodes, placement, network agents, runtimes or patches, nor tell "
               "which pods run on Windows")


@dataclass(frozen=True)
class ServerMove:
    """Nodes of one pool on a Windows Server build their platform retired or retires."""

    platform: str
    pool: str
    build: int
    status: str  # retired or retiring
    entry: dict[str, Any]  # the lifecycle entry: its date and the build to move to
    nodes: tuple[NodeRecord, ...]


@dataclass
class DoctorReport:
    scope: str
    server_version: str | None
    nodes: list[NodeRecord]
    findings: list[Finding]
    skipped: list[Skipped]
    counts: dict[str, int] = field(default_factory=dict)
    windows_node_count: int = 0
    services: int = 0  # Services with a cluster IP: each becomes an HNS load balancer on every Windows node
    service_ports: int = 0
    services_read: bool = False
    hns: list[dict[str, Any]] | None = None  # doctor --deep: one hns section per inspected Windows node
    locations: bool = False  # findings carry the file and line they came from (doctor --from-bundle)
    # Each Windows node's patch level by name (doctor/patchlevel.py): its update, and how far behind it is.
    patches: dict[str, Any] = field(default_factory=dict)
    # How current the update data is and what "behind" was counted from (doctor/patchlevel.update_data).
    update_data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, snapshot: Snapshot, findings: list[Finding], scope: str) -> DoctorReport:
        from kubectl_win.doctor import patchlevel

        return cls(scope, snapshot.server_version, list(snapshot.nodes), findings, list(snapshot.skipped),
                   dict(snapshot.counts), len(snapshot.windows_nodes), snapshot.services, snapshot.service_ports,
                   "services" in snapshot.read and snapshot.namespace is None,
                   patches=dict(patchlevel.of(snapshot)), update_data=patchlevel.update_data(snapshot))

    def server_moves(self) -> list[ServerMove]:
        """Pools on a Windows Server their platform retired or retires (knowledge/windows_lifecycle.yaml), by
        platform, pool and build."""
        from kubectl_win import lifecycle, platforms

        pools: dict[tuple[str, str, int], list[NodeRecord]] = defaultdict(list)
        running = platforms.of_nodes(self.nodes)
        for node in self.nodes:
            where = lifecycle.platform_of(running[node.name].id, node.labels) if node.windows else None
            if where is not None and node.build_number is not None:
                pools[(*where, node.build_number)].append(node)
        out = []
        for (platform, pool, number), nodes in sorted(pools.items()):
            found = lifecycle.retirement(platform, number)
            if found is not None:
                out.append(ServerMove(platform, pool, number, found[0], found[1],
                                      tuple(sorted(nodes, key=lambda n: n.name))))
        return out

    def hns_load_balancers(self) -> dict[str, int] | None:
        """Load balancers per Windows node as read from the nodes' HNS, when doctor looked inside them.

        Takes the per-node sections of `kubectl win hns` ({"node": ..., "counts": {"loadBalancers": n}}), as a
        list, under "nodes", or keyed by node name."""
        data: Any = self.hns
        if isinstance(data, dict) and isinstance(data.get("nodes"), list):
            data = data["nodes"]
        if isinstance(data, list):
            data = {str(s.get("node")): s for s in data if isinstance(s, dict) and s.get("node")}
        if not isinstance(data, dict):
            return None
        out = {}
        for node, section in data.items():
            counts = section.get("counts", section) if isinstance(section, dict) else {}
            value = counts.get("loadBalancers") if isinstance(counts, dict) else None
            if isinstance(value, int) and not isinstance(value, bool):
                out[str(node)] = value
        return out or None

    def unread(self) -> list[Skipped]:
        """The skipped reads doctor needs to judge anything (NEEDED); empty when the run is complete."""
        return [s for s in self.skipped if s.resource in NEEDED]

    def incomplete_text(self) -> str | None:
        """One sentence saying what could not be read and what was therefore not checked; None when complete."""
        unread = self.unread()
        if not unread:
            return None
        what = "; ".join(f"{s.resource} ({s.reason})" for s in unread)
        return f"Incomplete: could not read {what}; without them {NOT_CHECKED}."

    def exit_code(self, fail_on: str) -> int:
        """1 findings at or above --fail-on; else 5 when the nodes could not be read (never a clean 0); else 0."""
        from kubectl_win.errors import ExitStatus
        from kubectl_win.findings import exit_code

        code = exit_code(self.findings, fail_on)
        return code or (int(ExitStatus.INCOMPLETE) if self.unread() else 0)

    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = summarize(self.findings)
        data.update({"nodes": len(self.nodes), "windowsNodes": self.windows_node_count,
                     "podsScanned": self.counts.get("pods", 0), "skipped": len(self.skipped),
                     "incomplete": [s.resource for s in self.unread()]})
        return data

    def to_dict(self, shell: str = "posix", *, lazy: bool = False) -> dict[str, Any]:
        """The JSON contract. `lazy`: nodes and findings as iterators, for render_json to stream (a large
        cluster's report is then never held as dicts all at once)."""
        from kubectl_win import platforms

        nodes = self.nodes if self.scope != "nodes" else [n for n in self.nodes if n.windows]
        running = platforms.of_nodes(self.nodes)
        node_dicts = (node_dict(n, self.patches.get(n.name), running.get(n.name)) for n in nodes)
        finding_dicts = (f.to_dict(location=self.locations, shell=shell) for f in self.findings)
        return {
            "schemaVersion": SCHEMA_VERSION,
            "kind": "DoctorReport",
            "scope": self.scope,
            "cluster": {"serverVersion": self.server_version,
                        "platform": platforms.of_cluster(n.platform for n in self.nodes)},
            "nodes": node_dicts if lazy else list(node_dicts),
            "findings": finding_dicts if lazy else list(finding_dicts),
            "summary": self.summary(),
            "skipped": [{"resource": s.resource, "reason": s.reason} for s in self.skipped],
            **({"updateData": self.update_data} if self.update_data else {}),
            **({"hns": {"nodes": self.hns}} if self.hns is not None else {}),
        }


def node_dict(node: NodeRecord, patch: Any = None, platform: Platform | None = None) -> dict[str, Any]:
    """A node in the JSON contract; `patch`: its patch level (doctor/patchlevel.NodePatch), null when unknown;
    `platform`: the platform that runs it (the node's own markers, else its cluster's)."""
    return {
        "name": node.name,
        "platform": platform.id if platform else node.platform,
        "pool": (platform.pool_of(node.labels) or None) if platform else None,
        "os": node.os,
        "osImage": node.os_image or None,
        "kernelVersion": node.kernel_version or None,
        "windowsBuild": node.windows_build,
        "windowsBuildLabel": node.build_label,
        "runtime": node.runtime,
        "runtimeVersion": node.runtime_release or None,
        "kubeletVersion": node.kubelet_version or None,
        "ready": node.ready,
        "taints": [t.text() for t in node.taints],
        "memoryCapacity": node.memory_capacity,
        "memoryAllocatable": node.memory_allocatable,
        "patch": patch.to_dict() if patch is not None else None,
    }


def render_nodes(report: DoctorReport, out: IO[str], wide: bool = False, width: int | None = None) -> None:
    """The Windows node inventory (`doctor nodes`), one row per pool of nodes alike but for their names (-o json
    keeps one entry per node); `width`: a terminal's, no line is wider."""
    from kubectl_win.doctor.grouping import node_pools

    pools = node_pools((n for n in report.nodes if n.windows), report.findings)
    if not pools:
        out.write("No Windows nodes found.\n")
        return
    folded = any(len(pool.nodes) > 1 for pool in pools)  # the count column only where a row stands for several
    headers = ["name", *(["nodes"] if folded else []), "ready", "os-image", "build", "revision", "update", "behind",
               "build-label", "runtime", "kubelet", "memory", "taints"]
    rows = []
    for pool in pools:
        n = pool.first
        memory = f"{format_bytes(n.memory_allocatable)}/{format_bytes(n.memory_capacity)}"
        runtime = f"{n.runtime}/{n.runtime_release}" if n.runtime else (n.runtime_version or None)
        name = n.name if len(pool.nodes) == 1 else f"{n.name} +{len(pool.nodes) - 1} more"
        patch = report.patches.get(n.name)
        rows.append([name, *([len(pool.nodes)] if folded else []), _ready(n), n.os_image or None, n.windows_build,
                     *patch_cells(patch), n.build_label, runtime, n.kubelet_version or None, memory,
                     ",".join(t.text() for t in n.taints) or None])
    if wide:
        from kubectl_win import platforms
        from kubectl_win.doctor.checks.runtime import port_forward_mode

        running = platforms.of_nodes(report.nodes)
        headers += ["platform", "pool", "port-forward"]
        for row, pool in zip(rows, pools, strict=True):
            where = running[pool.first.name]
            row += [where.name, where.pool_of(pool.first.labels) or None, port_forward_mode(pool.first) or None]
    render_table(headers, rows, out, width=width)
    note = update_data_note(report)
    if note:
        if width:
            from kubectl_win.output.fold import Writer

            Writer(out, width).text(note)
        else:
            out.write(note + "\n")


def update_data_note(report: DoctorReport) -> str:
    """The footer under the node table: how current the update data is, and what a "≥" in BEHIND means."""
    data = report.update_data
    if not data or not report.patches:
        return ""
    text = f"Update data: Microsoft's updates to {data['updatesTo']} (reviewed {data['reviewed']})"
    if data.get("releaseTags"):
        return text + f"; the updates after it counted from the tags of {data['releaseTags']}."
    estimated = [p for p in report.patches.values() if p.estimated]
    if estimated:
        since = data.get("estimatedSince") or []
        months = f" ({', '.join(since)})" if since else ""
        return (text + f"; ≥: a lower bound, with the monthly updates the data lacks{months} estimated from "
                       "Microsoft's monthly release cadence (--check-images counts them from Microsoft's image tags).")
    return text + "."


def patch_cells(patch: Any) -> list[Any]:
    """revision, update ('KB5044281 2024-10', 'newer than known') and monthly updates behind, of a node."""
    if patch is None:
        return [None, None, None]
    if patch.newer_than_data:
        update = "newer than known"
    else:
        kb, month = patch.kb_text(), patch.month()
        update = " ".join(part for part in (kb, month) if part) or None
    return [patch.revision, update, patch.behind_text()]


def _ready(node: NodeRecord) -> str:
    state = "Ready" if node.ready else ("NotReady" if node.ready is False else "Unknown")
    return state + (",SchedulingDisabled" if node.unschedulable else "")


def render_findings(report: DoctorReport, out: IO[str], wide: bool = False, colour: bool = False,
                    width: int | None = None, shell: str = "posix") -> None:
    """The findings (see output.findings_table), then one summary line; with `width`, none wider. Piped, the
    findings are the blocks a terminal shows (at output.fold.page_width()), so that a pasted copy reads the same;
    `-o wide` piped stays one table per severity with a fix column."""
    if width is None and not wide:
        from kubectl_win.output.fold import page_width

        width = page_width()
    render_by_severity(report.findings, out, wide=wide, colour=colour, width=width, title=check_title,
                       shell=shell)
    if width:
        from kubectl_win.output.fold import Writer

        Writer(out, width).text(summary_line(report))
    else:
        out.write(summary_line(report) + "\n")


def check_title(check_id: str) -> str:
    """The one-line description of a check: doctor's catalogue, or explain's rule for its field checks."""
    from kubectl_win.catalog import doctor_checks

    info = doctor_checks().get(check_id)
    if info:
        return info.title
    from kubectl_win.explain.rules import all_rules

    return next((rule.summary for rule in all_rules() if rule.id == check_id), "")


def summary_line(report: DoctorReport) -> str:
    s = report.summary()
    from kubectl_win.output.words import counted, severity_counts

    parts = [severity_counts(s["errors"], s["warnings"], s["infos"]),
             f"{counted(s['nodes'], 'node')} ({s['windowsNodes']} Windows)"]
    if report.scope != "nodes":
        parts.append(f"{counted(s['podsScanned'], 'pod')} scanned")
    text = "; ".join(parts)
    if report.skipped:
        text += "; skipped: " + ", ".join(f"{sk.resource} ({sk.reason})" for sk in report.skipped)
    incomplete = report.incomplete_text()
    if incomplete:
        text = incomplete + " " + text
    elif not report.findings:
        text = "No problems found. " + text
    return text
