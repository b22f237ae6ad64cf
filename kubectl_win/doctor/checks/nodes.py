"""Windows nodes present and Ready, cordons, NetworkUnavailable, windows-build label and build support."""

from __future__ import annotations

from kubectl_win import builds
from kubectl_win.catalog import finding
from kubectl_win.doctor import fixes
from kubectl_win.doctor.records import Snapshot
from kubectl_win.findings import Finding, ObjectRef

LABEL_PATH = "metadata.labels['node.kubernetes.io/windows-build']"


def run(snapshot: Snapshot) -> list[Finding]:
    if "nodes" not in snapshot.read:
        return []
    findings: list[Finding] = []
    windows = snapshot.windows_nodes
    if not windows:
        oses = sorted({n.os or "unknown" for n in snapshot.nodes}) or ["none"]
        findings.append(finding("windows-nodes-missing", ObjectRef("", "Cluster", None, "cluster"), "",
                                route=fixes.cluster_route(snapshot, "add_windows_pool"),
                                nodes=len(snapshot.nodes), oses="/".join(oses)))
    for node in windows:
        ref, ignores = node.ref, node.ignores
        if node.ready is not True:
            reason, detail = _not_ready(node)
            findings.append(finding("windows-node-not-ready", ref, "status.conditions[Ready]", ignores=ignores,
                                    node=node.name, reason=reason, detail=detail))
        if node.unschedulable:
            findings.append(finding("windows-node-cordoned", ref, "spec.unschedulable", ignores=ignores,
                                    node=node.name))
        if node.network_unavailable:
            reason, detail = node.network_unavailable
            findings.append(finding("windows-node-network-unavailable", ref, "status.conditions[NetworkUnavailable]",
                                    ignores=ignores, node=node.name, reason=reason or "NetworkUnavailable",
                                    detail=detail or "no message"))
        findings.extend(_build_findings(snapshot, node))
    findings.extend(_retiring_pools(snapshot, windows))
    return findings


def _not_ready(node) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """What the Ready condition says, and what it leaves out: a condition without a reason is not "no condition"."""
    if node.ready is None:
        return "no Ready condition", "the node's status has none: its kubelet has not reported"
    reason = node.ready_reason or f"Ready is {node.ready_status or 'not True'}"
    given = "no reason or message" if not node.ready_reason else "no message"
    return reason, node.ready_message or f"the kubelet gave {given}"


def _retiring_pools(snapshot: Snapshot, nodes) -> list[Finding]:  # type: ignore[no-untyped-def]
    """Pools of a managed platform on a Windows Server build it has retired or retires within a year."""
    from kubectl_win import lifecycle

    pools: dict[tuple[str, str, int], list] = {}  # type: ignore[type-arg]
    for node in nodes:
        where = lifecycle.platform_of(snapshot.platform_of(node).id, node.labels)
        if where is None or node.build_number is None:
            continue
        pools.setdefault((*where, node.build_number), []).append(node)
    out = []
    for (platform, pool, number), members in sorted(pools.items()):
        found = lifecycle.retirement(platform, number)
        if found is None:
            continue
        status, entry = found
        info = builds.build_of(number)
        target = builds.resolve_build(str(entry["move_to"]))
        first = members[0]
        names = ", ".join(n.name for n in members[:5]) + (f" and {len(members) - 5} more" if len(members) > 5 else "")
        out.append(finding(
            "windows-os-retiring", first.ref, "status.nodeInfo.osImage", ignores=first.ignores, platform=platform,
            pool=f"pool {pool}" if pool else "a pool", nodes=names,
            os=info.display() if info else f"build {number}",
            when=f"{'retired on' if status == 'retired' else 'retires on'} {entry['date']}", note=entry["note"],
            target=target.display(), target_label=target.label))
    return out


def _build_findings(snapshot: Snapshot, node) -> list[Finding]:  # type: ignore[no-untyped-def]
    out = []
    build = node.windows_build
    ref, ignores = node.ref, node.ignores
    if build is None:
        out.append(finding("windows-build-unknown", ref, "status.nodeInfo.kernelVersion", ignores=ignores,
                           node=node.name, kernel=node.kernel_version or "<empty>"))
        return out
    if node.build_label is None:
        out.append(finding("windows-build-label-missing", ref, LABEL_PATH, ignores=ignores, node=node.name,
                           kernel=node.kernel_version or f"unknown, build {build} from the {node.build_source}",
                           build=build))
    elif node.build_label != build:
        out.append(finding("windows-build-label-mismatch", ref, LABEL_PATH, ignores=ignores, node=node.name,
                           label=node.build_label, kernel=node.kernel_version, build=build))
    known = builds.build_of(node.build_number)
    if known is None:
        out.append(finding("windows-build-unknown", ref, "status.nodeInfo.kernelVersion", ignores=ignores,
                           node=node.name, kernel=node.kernel_version or build))
    elif not known.supported:
        out.append(finding("windows-build-unsupported", ref, "status.nodeInfo.kernelVersion", ignores=ignores,
                           route=fixes.node_route(snapshot, node, "new_pool"), node=node.name, os_name=known.name,
                           build=build, note=known.note))
    return out
