"""What runs on a node, by version, for the known bugs (knowledge/failure_model.yaml known_bugs): the kubelet
(Kubernetes), containerd (the node's runtime), and the node agents whose pods run there (Calico, Antrea,
flannel, csi-proxy, the EBS CSI node plugin: the version their image's tag names, knowledge/failure_model.yaml
agent_images). One reading for an event, a `doctor --deep` log line and a bundle's log on the same node."""

from __future__ import annotations

import re
from functools import cache

from kubectl_win import builds
from kubectl_win.doctor.records import Snapshot
from kubectl_win.knowledge import load

_TAG_VERSION = re.compile(r"^v?\d+\.\d+(\.\d+)?")


@cache
def _agent_images() -> dict[str, tuple[str, ...]]:
    return {str(component): tuple(str(p).lower() for p in patterns)
            for component, patterns in (load("failure_model").get("agent_images") or {}).items()}


def agent_of(image: str) -> tuple[str, str] | None:
    """(component, version) an agent image names ('calico/node-windows:v3.30.1' -> ('calico', 'v3.30.1')); None
    for another image, or a tag that is no version (latest, a digest)."""
    tag = builds.tag_of(image)
    name = image.split("@", 1)[0].removesuffix(f":{tag}").lower()
    component = next((c for c, patterns in _agent_images().items() if any(p in name for p in patterns)), None)
    if component is None or not _TAG_VERSION.match(tag):
        return None
    return component, tag


def of_node(snapshot: Snapshot | None, node_name: str | None) -> tuple[dict[str, str], int | None]:
    """(component -> version, the node's Windows build) for a node doctor read; empty where it did not."""
    node = snapshot.node(node_name) if snapshot is not None else None
    if node is None:
        return {}, None
    versions = {"kubernetes": node.kubelet_version} if node.kubelet_version else {}
    if node.runtime == "containerd":
        versions["containerd"] = node.runtime_release
    for component, version in _agents(snapshot).get(node.name, {}).items():
        versions.setdefault(component, version)
    return versions, node.build_number


def _agents(snapshot: Snapshot) -> dict[str, dict[str, str]]:
    """Per node, the agents its pods' images name (read once per snapshot: every finding on a node asks)."""
    found = snapshot.__dict__.get("_agent_versions")
    if found is None:
        found = {}
        for pod in snapshot.pods:
            if not pod.node:
                continue
            for container in pod.containers:
                agent = agent_of(container.image or "")
                if agent is not None:
                    found.setdefault(pod.node, {}).setdefault(*agent)
        object.__setattr__(snapshot, "_agent_versions", found)
    return found
