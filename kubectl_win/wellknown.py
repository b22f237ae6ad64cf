"""Well-known node labels and taint keys of Windows nodes, defined once for explain, doctor and scaffold.

The taint keys live in knowledge/taints.yaml (with the schemes that use them); the labels are fixed by
Kubernetes (k8s.io/api/core/v1 well_known_labels.go) and are plain constants here.
"""

from __future__ import annotations

import re
from functools import cache

OS_LABEL = "kubernetes.io/os"
LEGACY_OS_LABEL = "beta.kubernetes.io/os"
OS_LABELS = (OS_LABEL, LEGACY_OS_LABEL)
ARCH_LABEL = "kubernetes.io/arch"
BUILD_LABEL = "node.kubernetes.io/windows-build"


@cache
def windows_taint_keys() -> frozenset[str]:
    """Keys of the taints the Windows schemes use (knowledge/taints.yaml windows_taint_keys)."""
    from kubectl_win.knowledge import load

    return frozenset(load("taints")["windows_taint_keys"])


def os_from_labels(labels: dict[str, str]) -> str | None:
    """The OS the node's labels say: the OS labels, else a cloud label (knowledge/node_labels.yaml)."""
    for label in OS_LABELS:
        if labels.get(label):
            return labels[label].lower()
    for entry in _cloud_labels():
        value = labels.get(entry["label"])
        if value and re.search(entry["windows"], value):
            return "windows"
    return None


def node_os(node: dict) -> str | None:
    """The OS of a Node object: its labels first, else status.nodeInfo.operatingSystem (None when neither says)."""
    meta = node.get("metadata") if isinstance(node.get("metadata"), dict) else {}
    labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
    status = node.get("status") if isinstance(node.get("status"), dict) else {}
    info = status.get("nodeInfo") if isinstance(status.get("nodeInfo"), dict) else {}
    found = os_from_labels({k: v for k, v in labels.items() if isinstance(v, str)})
    operating_system = info.get("operatingSystem")
    return found or (operating_system.lower() if isinstance(operating_system, str) and operating_system else None)


def build_from_labels(labels: dict[str, str]) -> tuple[str, str] | None:
    """(major.minor.build, the label it came from) from the build label or a cloud label."""
    value = labels.get(BUILD_LABEL) or ""
    match = re.match(r"^(\d+\.\d+\.\d+)", value)
    if match:
        return match.group(1), BUILD_LABEL
    for entry in _cloud_labels():
        value = labels.get(entry["label"]) or ""
        if value in (entry.get("builds") or {}):
            return str(entry["builds"][value]), entry["label"]
        pattern = entry.get("build_pattern")
        found = re.search(pattern, value) if pattern and value else None
        if found:
            return f"10.0.{found.group(1)}", entry["label"]
    return None


@cache
def _cloud_labels() -> tuple[dict, ...]:
    from kubectl_win.knowledge import load

    return tuple(load("node_labels")["cloud_labels"])


@cache
def per_node_labels() -> frozenset[str]:
    """Labels that differ between the nodes of one pool: host name, zones (knowledge/node_labels.yaml)."""
    from kubectl_win.knowledge import load

    return frozenset(entry["label"] for entry in load("node_labels")["per_node_labels"])
