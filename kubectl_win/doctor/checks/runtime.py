"""Container runtime on Windows nodes: docker (dockershim removed in 1.24), containerd versions."""

from __future__ import annotations

import re
from typing import Any

from kubectl_win.catalog import finding
from kubectl_win.doctor import fixes
from kubectl_win.doctor.records import NodeRecord, Snapshot
from kubectl_win.findings import Finding
from kubectl_win.knowledge import load

PATH = "status.nodeInfo.containerRuntimeVersion"


def release_tuple(text: str) -> tuple[int, ...] | None:
    match = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", text.strip())
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups())


def runtime_entry(node: NodeRecord) -> dict[str, Any] | None:
    """The runtimes.yaml entry for the node's runtime and version, or None when unknown."""
    runtime = node.runtime
    version = release_tuple(node.runtime_release)
    for entry in load("runtimes")["runtimes"]:
        if entry["runtime"] != runtime:
            continue
        if version is None:
            return entry if runtime == "docker" else None
        since = release_tuple(str(entry.get("since") or "0"))
        until = release_tuple(str(entry["until"])) if entry.get("until") else None
        if since is not None and version < since:
            continue
        if until is not None and version >= until:
            continue
        return entry
    return None


def port_forward_mode(node: NodeRecord) -> str:
    entry = runtime_entry(node)
    return str(entry.get("port_forward") or "") if entry else ""


def run(snapshot: Snapshot) -> list[Finding]:
    findings = []
    data = load("runtimes")
    for node in snapshot.windows_nodes:
        if node.node_info_missing:
            continue  # unknown, not wrong: the snapshot's skipped list says why
        entry = runtime_entry(node)
        if node.runtime not in ("containerd", "docker"):
            findings.append(finding("runtime-unknown", node.ref, PATH, ignores=node.ignores, node=node.name,
                                    runtime_version=node.runtime_version or "<empty>"))
            continue
        if entry is None or not entry.get("check"):
            continue
        if entry["check"] == "runtime-docker":
            findings.append(finding("runtime-docker", node.ref, PATH, ignores=node.ignores, node=node.name,
                                    route=fixes.node_route(snapshot, node, "upgrade"),
                                    runtime_version=node.runtime_version, kubelet=node.kubelet_version or "?",
                                    note=" ".join(entry["note"].split())))
        else:
            findings.append(finding(entry["check"], node.ref, PATH, severity=entry.get("severity"),
                                    ignores=node.ignores, node=node.name, version=node.runtime_release,
                                    route=fixes.node_route(snapshot, node, "upgrade"),
                                    note=" ".join(entry["note"].split()),
                                    port_forward=" ".join(entry["port_forward"].split()),
                                    recommended=data["recommended"]))
    return findings
