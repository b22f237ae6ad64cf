"""kubelet vs kube-apiserver version skew, per knowledge/version_skew.yaml."""

from __future__ import annotations

from kubectl_win.catalog import finding
from kubectl_win.doctor import fixes
from kubectl_win.doctor.records import Snapshot
from kubectl_win.findings import Finding
from kubectl_win.knowledge import load
from kubectl_win.versions import format_version, in_range, parse_version

PATH = "status.nodeInfo.kubeletVersion"


def allowed_older(server: tuple[int, int]) -> int:
    for entry in load("version_skew")["policy"]:
        if in_range(server, entry.get("since"), entry.get("until")):
            return int(entry["kubelet_older_max"])
    return 3


def run(snapshot: Snapshot) -> list[Finding]:
    if not snapshot.server_version:
        return []
    try:
        server = parse_version(snapshot.server_version)
    except ValueError:
        return []
    allowed = allowed_older(server)
    findings = []
    for node in snapshot.nodes:
        try:
            kubelet = parse_version(node.kubelet_version)
        except ValueError:
            continue
        if kubelet[0] != server[0]:
            continue
        behind = server[1] - kubelet[1]
        if behind < 0:
            findings.append(finding("kubelet-newer-than-apiserver", node.ref, PATH, ignores=node.ignores,
                                    route=fixes.node_route(snapshot, node, "control_plane"),
                                    node=node.name, kubelet=node.kubelet_version, server=snapshot.server_version,
                                    kubelet_minor=format_version(kubelet), server_minor=format_version(server)))
        elif behind > allowed:
            findings.append(finding("kubelet-too-old", node.ref, PATH, ignores=node.ignores, node=node.name,
                                    route=fixes.node_route(snapshot, node, "upgrade"),
                                    kubelet=node.kubelet_version, server=snapshot.server_version, behind=behind,
                                    allowed=allowed, minimum=format_version((server[0], server[1] - allowed))))
    return findings
