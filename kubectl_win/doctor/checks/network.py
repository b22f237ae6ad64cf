"""kube-proxy and the CNI on every Windows node, where its platform runs them as pods or the cluster has a
Windows DaemonSet for them; the HNS load-balancer cost of the cluster's Services."""

from __future__ import annotations

from collections import defaultdict

from kubectl_win.catalog import finding
from kubectl_win.doctor import scheduling
from kubectl_win.doctor.checks import knowledge
from kubectl_win.doctor.checks.placement import suggested_taint
from kubectl_win.doctor.records import NodeRecord, Snapshot, WorkloadRecord
from kubectl_win.doctor.signatures.agents import agent_kinds
from kubectl_win.findings import Finding, Fix, ObjectRef

MISSING = {"kube_proxy": "windows-node-kube-proxy-missing", "cni": "windows-node-cni-missing"}
# The doubt a guess leaves (no DaemonSet for the agent, a platform recognised by no marker of its own).
UNLESS = {"kube_proxy": " unless kube-proxy runs there as a Windows service",
          "cni": " unless the CNI runs as a Windows service"}


def agents_by_node(snapshot: Snapshot) -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for pod in snapshot.pods:
        if pod.node:
            owner = pod.controller.name if pod.controller else ""
            found[pod.node] |= agent_kinds(pod.name, owner)
    return found


def agent_daemonsets(snapshot: Snapshot) -> dict[str, list[WorkloadRecord]]:
    """The cluster's DaemonSets that run a node agent on Windows nodes, by agent kind."""
    out: dict[str, list[WorkloadRecord]] = defaultdict(list)
    for workload in snapshot.workloads:
        if workload.ref.kind == "DaemonSet" and (workload.target.windows or workload.host_process):
            for kind in agent_kinds(workload.ref.name):
                out[kind].append(workload)
    return out


def expected_daemonsets(snapshot: Snapshot, daemonsets: list[WorkloadRecord], node: NodeRecord) -> list[WorkloadRecord]:
    """The DaemonSets among `daemonsets` whose selector and tolerations admit `node`."""
    return [ds for ds in daemonsets
            if scheduling.fits(scheduling.effective(ds.placement, snapshot.runtime_classes), node)]


def agent_missing(snapshot: Snapshot, node: NodeRecord, agent: str, present: set[str],
                  daemonsets: dict[str, list[WorkloadRecord]]) -> Finding | None:
    """A finding when the node lacks the agent's pod and the evidence says it should have one: a Windows
    DaemonSet for the agent admits the node (whatever the platform), or the node's platform runs the agent as a
    pod (kubeadm with sig-windows-tools, Cluster API; a cluster that shows no platform is taken for kubeadm).
    AKS, EKS, GKE, OpenShift and RKE2 run kube-proxy and the CNI as host services or processes: no pod there is
    no evidence of anything."""
    if agent in present or agent not in MISSING:
        return None
    expected = expected_daemonsets(snapshot, daemonsets.get(agent, []), node)
    if not expected and not snapshot.platform_of(node).runs_as_pod(agent):
        return None
    values = {"daemonset": "", "unless": UNLESS[agent]}
    fix = None
    if expected:
        ds = expected[0].ref
        values = {"daemonset": f" although DaemonSet {ds.namespace}/{ds.name} admits it", "unless": ""}
        fix = Fix(commands=(("kubectl", "describe", "daemonset", ds.name, "-n", ds.namespace or "default"),
                            ("kubectl", "get", "events", "-n", ds.namespace or "default", "--field-selector",
                             f"involvedObject.name={ds.name}")),
                  note=f"The DaemonSet's events and status say why it has no pod on {node.name} (a taint it does "
                       "not tolerate, an image it cannot pull, a HostProcess pod refused by Pod Security).")
    if agent == "kube_proxy":
        cni = sorted(snapshot.agents_seen)
        return finding(MISSING[agent], node.ref, "", ignores=node.ignores, route=fix, node=node.name,
                       cni=next((name for name in ("calico", "flannel") if any(name in c for c in cni)), "calico"),
                       **values)
    known = sorted(snapshot.agents_seen)
    return finding(MISSING[agent], node.ref, "", ignores=node.ignores, route=fix, node=node.name,
                   known=", ".join(known) if known else "calico, flannel, antrea, ...",
                   taint=suggested_taint(node, snapshot).key_value() + ":NoSchedule", **values)


def run(snapshot: Snapshot) -> list[Finding]:
    windows = snapshot.windows_nodes
    if not windows:
        return []
    out = []
    if "pods" in snapshot.read and snapshot.namespace is None:
        agents = agents_by_node(snapshot)
        daemonsets = agent_daemonsets(snapshot)
        for node in windows:
            present = agents.get(node.name, set())
            for agent in MISSING:
                found = agent_missing(snapshot, node, agent, present, daemonsets)
                if found is not None:
                    out.append(found)
    if "services" in snapshot.read and snapshot.namespace is None and snapshot.services:
        warn_at = int(knowledge("service_ports_warn_at"))
        severity = "warning" if snapshot.service_ports >= warn_at else None
        out.append(finding("windows-service-load-balancers", ObjectRef("", "Cluster", None, "services"), "",
                           severity=severity, services=snapshot.services, ports=snapshot.service_ports,
                           windows_nodes=len(windows), warn_at=warn_at))
    return out
