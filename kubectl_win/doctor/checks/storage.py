"""CSI node plugins on Windows nodes need csi-proxy unless they run as HostProcess; a platform that installs
csi-proxy as a Windows service on its nodes (AKS, GKE, OpenShift) needs no csi-proxy pod."""

from __future__ import annotations

from kubectl_win.catalog import finding
from kubectl_win.doctor.records import PodRecord, Snapshot
from kubectl_win.doctor.signatures.agents import agent_kinds
from kubectl_win.findings import Finding


def run(snapshot: Snapshot) -> list[Finding]:
    if "pods" not in snapshot.read or snapshot.namespace is not None:
        return []
    proxies: set[str] = set()
    plugins: dict[str, PodRecord] = {}
    for pod in snapshot.pods:
        node = snapshot.node(pod.node)
        if node is None or not node.windows:
            continue
        kinds = agent_kinds(pod.name, pod.controller.name if pod.controller else "", *(c.image for c in pod.containers))
        if "csi_proxy" in kinds:
            proxies.add(node.name)
        elif "csi_node" in kinds and not pod.host_process:
            plugins.setdefault(node.name, pod)
    out = []
    for node_name, pod in sorted(plugins.items()):
        node = snapshot.node(node_name)
        if node_name in proxies or (node is not None and not snapshot.platform_of(node).runs_as_pod("csi_proxy")):
            continue
        out.append(finding("windows-csi-proxy-missing", pod.ref, "spec.nodeName", ignores=pod.ignores,
                           pod=f"{pod.namespace}/{pod.name}", node=node_name))
    return out
