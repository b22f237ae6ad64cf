"""Windows nodes present and Ready, cordons, NetworkUnavailable, windows-build label and build support."""

from __future__ import annotations

from kubectl_win import builds
from kubectl_win.doctor.catalog import finding
from kubectl_win.doctor.snapshot import Snapshot
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
                                nodes=len(snapshot.nodes), oses="/".join(oses)))
    for node in windows:
        ref, ignores = node.ref, node.ignores
        if node.ready is not True:
            findings.append(finding("windows-node-not-ready", ref, "status.conditions[Ready]", ignores=ignores,
                                    node=node.name, reason=node.ready_reason,
                                    detail=node.ready_message or "no message"))
        if node.unschedulable:
            findings.append(finding("windows-node-cordoned", ref, "spec.unschedulable", ignores=ignores,
                                    node=node.name))
        if node.network_unavailable:
            reason, detail = node.network_unavailable
            findings.append(finding("windows-node-network-unavailable", ref, "status.conditions[NetworkUnavailable]",
                                    ignores=ignores, node=node.name, reason=reason or "NetworkUnavailable",
                                    detail=detail or "no message"))
        findings.extend(_build_findings(node))
    return findings


def _build_findings(node) -> list[Finding]:  # type: ignore[no-untyped-def]
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
                           node=node.name, os_name=known.name, build=build, note=known.note))
    return out
