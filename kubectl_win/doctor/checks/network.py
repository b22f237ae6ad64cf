"""kube-proxy and a CNI pod on every Windows node; the HNS load-balancer cost of the cluster's Services."""

from __future__ import annotations

from collections import defaultdict

from kubectl_win.catalog import finding
from kubectl_win.doctor.checks import knowledge
from kubectl_win.doctor.checks.placement import suggested_taint
from kubectl_win.doctor.records import Snapshot
from kubectl_win.doctor.signatures.agents import agent_kinds
from kubectl_win.findings import Finding, ObjectRef


def agents_by_node(snapshot: Snapshot) -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for pod in snapshot.pods:
        if pod.node:
            owner = pod.controller.name if pod.controller else ""
            found[pod.node] |= agent_kinds(pod.name, owner)
    return found


def run(snapshot: Snapshot) -> list[Finding]:
    windows = snapshot.windows_nodes
    if not windows:
        return []
    out = []
    if "pods" in snapshot.read and snapshot.namespace is None:
        agents = agents_by_node(snapshot)
        cni = sorted(snapshot.agents_seen)
        cni_dir = next((name for name in ("calico", "flannel") if any(name in c for c in cni)), "calico")
        for node in windows:
            present = agents.get(node.name, set())
            if "kube_proxy" not in present:
                out.append(finding("windows-node-kube-proxy-missing", node.ref, "", ignores=node.ignores,
                                   node=node.name, cni=cni_dir))
            if "cni" not in present:
                out.append(finding("windows-node-cni-missing", node.ref, "", ignores=node.ignores, node=node.name,
                                   known=", ".join(cni) if cni else "calico, flannel, antrea, ...",
                                   taint=suggested_taint(node, windows) + ":NoSchedule"))
    if "services" in snapshot.read and snapshot.namespace is None and snapshot.services:
        warn_at = int(knowledge("service_ports_warn_at"))
        severity = "warning" if snapshot.service_ports >= warn_at else None
        out.append(finding("windows-service-load-balancers", ObjectRef("", "Cluster", None, "services"), "",
                           severity=severity, services=snapshot.services, ports=snapshot.service_ports,
                           windows_nodes=len(windows), warn_at=warn_at))
    return out
