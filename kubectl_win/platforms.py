"""The one platform model (knowledge/platforms.yaml): which platform runs a node and its cluster, what the
platform runs as pods and what as host services, the taint it gives Windows nodes, and its own way to change a
pool's nodes. doctor's checks and fixes, `logs`, the patch fixes, the lifecycle data and scaffold read it here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from kubectl_win.knowledge import load

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any

    from kubectl_win.findings import Fix

UNKNOWN = "unknown"
KUBEADM = "kubeadm"
AGENTS = ("kube_proxy", "cni", "csi_proxy")


@dataclass(frozen=True)
class Platform:
    id: str
    name: str
    markers: tuple[dict[str, str], ...]
    pool_label: str
    cluster_label: str
    agents: dict[str, dict[str, str]]
    taint: tuple[str, str, str] | None  # (key, value, effect) the platform puts on Windows nodes itself
    fixes: dict[str, dict[str, Any]]
    sources: tuple[str, ...]

    @property
    def specific(self) -> bool:
        """Recognised from a marker of its own (not the kubeadm guess for a cluster without any)."""
        return self.id not in (KUBEADM, UNKNOWN)

    def runs_as_pod(self, agent: str) -> bool:
        return self.agents.get(agent, {}).get("runs_as", "pod") == "pod"

    def pool_of(self, labels: Mapping[str, str]) -> str:
        return str(labels.get(self.pool_label) or "") if self.pool_label else ""

    def cluster_of(self, labels: Mapping[str, str]) -> str:
        return str(labels.get(self.cluster_label) or "") if self.cluster_label else ""


def _platform(entry: dict[str, Any]) -> Platform:
    taint = entry.get("taint")
    return Platform(
        id=str(entry["id"]), name=str(entry["name"]),
        markers=tuple({str(k): str(v) for k, v in m.items()} for m in entry.get("markers") or ()),
        pool_label=str(entry.get("pool_label") or ""), cluster_label=str(entry.get("cluster_label") or ""),
        agents={k: {str(a): str(b) for a, b in v.items()} for k, v in (entry.get("agents") or {}).items()},
        taint=(str(taint["key"]), str(taint["value"]), str(taint["effect"])) if taint else None,
        fixes=dict(entry.get("fixes") or {}), sources=tuple(entry.get("sources") or ()))


@cache
def platforms() -> tuple[Platform, ...]:
    """Every platform, in the order they are tried."""
    return tuple(_platform(entry) for entry in load("platforms")["platforms"])


@cache
def platform(platform_id: str) -> Platform:
    """A platform by id; an id the model does not know is `unknown`."""
    return next((p for p in platforms() if p.id == platform_id), None) or platform(UNKNOWN)


def _matches(marker: dict[str, str], labels: Mapping[str, str], annotations: Mapping[str, str],
             provider_id: str, kubelet_version: str) -> bool:
    if "label" in marker:
        value = labels.get(marker["label"])
        return value is not None and ("value" not in marker or re.search(marker["value"], str(value)) is not None)
    if "annotation" in marker:
        return marker["annotation"] in annotations
    if "label_prefix" in marker:
        return any(key.startswith(marker["label_prefix"]) for key in labels)
    if "annotation_prefix" in marker:
        return any(key.startswith(marker["annotation_prefix"]) for key in annotations)
    if "provider_id" in marker:
        return provider_id.startswith(marker["provider_id"])
    if "kubelet_version" in marker:
        return re.search(marker["kubelet_version"], kubelet_version) is not None
    return False


def detect(labels: Mapping[str, str], annotations: Mapping[str, str] | None = None, provider_id: str = "",
           kubelet_version: str = "") -> str:
    """The id of the platform a node shows by its own markers (`unknown` when it shows none)."""
    annotations = annotations or {}
    for entry in platforms():
        if any(_matches(m, labels, annotations, provider_id or "", kubelet_version or "") for m in entry.markers):
            return entry.id
    return UNKNOWN


def detect_node(node: Mapping[str, Any]) -> str:
    """detect() on a raw Node object."""
    meta = node.get("metadata") if isinstance(node.get("metadata"), dict) else {}
    spec = node.get("spec") if isinstance(node.get("spec"), dict) else {}
    status = node.get("status") if isinstance(node.get("status"), dict) else {}
    info = status.get("nodeInfo") if isinstance(status.get("nodeInfo"), dict) else {}
    labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
    annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    provider = spec.get("providerID")
    kubelet = info.get("kubeletVersion")
    return detect(labels, annotations, provider if isinstance(provider, str) else "",
                  kubelet if isinstance(kubelet, str) else "")


def of_cluster(node_platforms: Iterable[str]) -> str:
    """A cluster's platform from its nodes' own: the platform most of the nodes that show one show (any node
    decides), else kubeadm when a node carries kubeadm's annotation, else unknown."""
    counts = Counter(node_platforms)
    specific = [(n, pid) for pid, n in counts.items() if platform(pid).specific]
    if specific:
        return max(specific)[1]
    return KUBEADM if counts.get(KUBEADM) else UNKNOWN


def resolve(node_platform: str, cluster_platform: str) -> Platform:
    """A node's platform: its own when it shows one, else its cluster's."""
    return platform(node_platform if platform(node_platform).specific else cluster_platform)


class _Node(Protocol):
    name: str
    platform: str


def of_nodes(nodes: Iterable[_Node]) -> dict[str, Platform]:
    """Each node's platform by name, read as a cluster: a node that shows none takes its cluster's."""
    listed = list(nodes)
    cluster = of_cluster(n.platform for n in listed)
    return {n.name: resolve(n.platform, cluster) for n in listed}


def fix_values(entry: Platform, node: str, labels: Mapping[str, str], **extra: str) -> dict[str, str]:
    """The placeholders a platform fix names, for one node: its pool and cluster where a label names them, the
    user's to fill (<pool>, <cluster>, <cluster-namespace>) where none does."""
    return {"node": node, "pool": entry.pool_of(labels) or "<pool>", "cluster": entry.cluster_of(labels) or "<cluster>",
            "cluster_namespace": "<cluster-namespace>", **extra}


def fix(entry: Platform, kind: str, values: Mapping[str, Any]) -> Fix | None:
    """The platform's own fix of `kind` ('taint', 'upgrade', ...) filled with `values`, ending in why the kubectl
    route does not last there; None where the platform has none (kubeadm, unknown: the kubectl route stands)."""
    from kubectl_win.findings import Fix

    spec = entry.fixes.get(kind)
    if not spec:
        return None
    filled = {**values, "platform": entry.name}
    commands = tuple(tuple(str(arg).format_map(filled) for arg in argv) for argv in spec.get("commands") or ())
    note = str(spec.get("note") or "").format_map(filled)
    lasting = str(spec.get("lasting") or "").format_map(filled)
    if lasting:
        note = f"{note} On {entry.name} the kubectl route does not last: {lasting}."
    return Fix(commands=commands, note=note.strip())
