"""The platform model: which platform runs a node and its cluster, what doctor then expects as pods, how it
fixes a node in the platform's own terms, and one taint scheme that doctor, scaffold and `scaffold node-taint`
all answer with."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_win import platforms
from kubectl_win.builds import build_of
from kubectl_win.doctor.checks.plan import run_checks
from kubectl_win.findings import Finding
from kubectl_win.scaffold.node_taint import plan_node_taints
from kubectl_win.scaffold.options import PlacementOptions
from kubectl_win.scaffold.placement import windows_placement
from kubectl_win.taint_scheme import windows_taint
from tests.support.kube_objects import daemonset_pod, namespace, node, snapshot_of, windows_spec, workload

AKS = {"kubernetes.azure.com/agentpool": "win22", "kubernetes.azure.com/cluster": "MC_rg_prod_westeurope",
       "kubernetes.azure.com/mode": "user", "kubernetes.azure.com/os-sku": "Windows2022", "agentpool": "win22"}
EKS = {"eks.amazonaws.com/nodegroup": "gpu-win", "eks.amazonaws.com/capacityType": "ON_DEMAND",
       "alpha.eksctl.io/cluster-name": "prod"}
GKE = {"cloud.google.com/gke-nodepool": "win-pool", "cloud.google.com/gke-os-distribution": "windows_ltsc"}
HP = {"securityContext": {"windowsOptions": {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}},
      "hostNetwork": True}


def _node(name: str, labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
          provider: str | None = None, kubelet: str = "v1.31.4", **kw: Any) -> dict[str, Any]:
    obj = node(name, labels=labels, annotations=annotations, kubelet=kubelet, **kw)
    if provider:
        obj["spec"]["providerID"] = provider
    return obj


@pytest.mark.parametrize(("labels", "annotations", "provider", "kubelet", "expected"), [
    (AKS, {}, "azure:///subscriptions/s/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachineScaleSets/"
     "akswin22/virtualMachines/5", "v1.31.4", "aks"),
    (EKS, {}, "aws:///us-west-2a/i-0cd1c351f3c0d11a1", "v1.31.4-eks-ae9a62a", "eks"),
    ({}, {}, "aws:///us-west-2a/i-0cd1c351f3c0d11a1", "v1.31.4-eks-ae9a62a", "eks"),  # self-managed: its kubelet
    (GKE, {}, "gce://p/europe-west4-a/gke-prod-win-pool-1a2b", "v1.30.5-gke.1014001", "gke"),
    ({"node.openshift.io/os_id": "Windows", "node-role.kubernetes.io/worker": ""},
     {"windowsmachineconfig.openshift.io/version": "10.17.0"}, "aws:///us-east-1a/i-0abc", "v1.30.4", "openshift"),
    ({"node.kubernetes.io/instance-type": "rke2"}, {"rke2.io/node-args": "[]"}, "rke2://win-1", "v1.30.4+rke2r1",
     "rke2"),
    ({}, {"cluster.x-k8s.io/cluster-name": "capz", "cluster.x-k8s.io/machine": "capz-md-win-x"},
     "azure:///subscriptions/s/resourceGroups/capz/providers/Microsoft.Compute/virtualMachines/capz-win", "v1.31.4",
     "capi"),
    ({"kubernetes.azure.com/role": "agent", "kubernetes.azure.com/cluster": "k8s-eastus", "agentpool": "winpool"},
     {}, "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/6837k8s000",
     "v1.23.17", "aks-engine"),
    ({}, {"kubeadm.alpha.kubernetes.io/cri-socket": "npipe:////./pipe/containerd-containerd"}, "", "v1.31.4",
     "kubeadm"),
    ({}, {}, "", "v1.31.4", "unknown"),
    ({}, {}, "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm", "v1.31.4",
     "unknown"),  # a cloud's provider ID alone says where the VM is, not who runs Kubernetes on it
])
def test_a_node_shows_its_platform(labels: dict[str, str], annotations: dict[str, str], provider: str,
                                   kubelet: str, expected: str) -> None:
    assert platforms.detect(labels, annotations, provider, kubelet) == expected
    obj = _node("n", labels=labels, annotations=annotations, provider=provider, kubelet=kubelet)
    assert platforms.detect_node(obj) == expected
    assert snapshot_of(obj).nodes[0].platform == expected


def test_a_cluster_platform_is_read_from_any_node_that_shows_it() -> None:
    # Self-managed Windows nodes beside a managed Linux node group: the group says EKS.
    snap = snapshot_of(_node("ip-1", os="linux", labels=EKS), _node("win-1"))
    assert snap.platform == "eks"
    assert snap.platform_of(snap.node("win-1")).id == "eks"
    assert platforms.of_cluster(["unknown", "kubeadm", "kubeadm"]) == "kubeadm"
    assert platforms.of_cluster(["unknown"]) == "unknown"
    assert platforms.of_cluster([]) == "unknown"


def _agents_on_kubeadm(name: str) -> list[dict[str, Any]]:
    proxy = windows_spec("sigwindowstools/kube-proxy:v1.31.4-calico-hostprocess", toleration=False,
                         tolerations=[{"operator": "Exists"}], **HP)
    return [daemonset_pod("kube-proxy-windows", name, proxy)]


def _network(findings: list[Finding]) -> list[str]:
    return sorted(f"{f.id} {f.object.name}" for f in findings
                  if f.id in ("windows-node-kube-proxy-missing", "windows-node-cni-missing"))


@pytest.mark.parametrize("labels", [AKS, EKS, GKE], ids=["aks", "eks", "gke"])
def test_no_kube_proxy_or_cni_claim_on_a_managed_node_that_runs_them_as_services(labels: dict[str, str]) -> None:
    objs = [_node("linux-0", os="linux", labels=labels), _node("win-0", labels=labels), namespace("shop")]
    assert _network(run_checks(snapshot_of(*objs))) == []


def test_a_kubeadm_node_without_its_agents_is_still_named() -> None:
    kubeadm = {"kubeadm.alpha.kubernetes.io/cri-socket": "npipe:////./pipe/containerd-containerd"}
    objs = [_node("linux-0", os="linux", annotations=kubeadm), _node("win-0", annotations=kubeadm),
            namespace("shop")]
    assert _network(run_checks(snapshot_of(*objs))) == [
        "windows-node-cni-missing win-0", "windows-node-kube-proxy-missing win-0"]


def test_a_windows_daemonset_without_a_pod_on_a_node_is_named_on_any_platform() -> None:
    """AKS in a CNS mode runs azure-cns-win on every Windows node: a node without its pod is missing it."""
    spec = windows_spec("mcr.microsoft.com/containernetworking/azure-cns:v1.6.0", toleration=False,
                        tolerations=[{"operator": "Exists"}], **HP)
    cns = workload("DaemonSet", "azure-cns-win", spec, namespace="kube-system")
    objs = [_node("linux-0", os="linux", labels=AKS), _node("win-0", labels=AKS), _node("win-1", labels=AKS),
            namespace("shop"), cns, daemonset_pod("azure-cns-win", "win-0", spec)]
    findings = [f for f in run_checks(snapshot_of(*objs)) if f.id == "windows-node-cni-missing"]
    assert [f.object.name for f in findings] == ["win-1"]
    assert "although DaemonSet kube-system/azure-cns-win admits it" in findings[0].message
    assert ("kubectl", "describe", "daemonset", "azure-cns-win", "-n", "kube-system") in findings[0].fix.commands


def _untainted_fix(labels: dict[str, str], os_sku_build: int = 20348) -> Finding:
    objs = [_node("linux-0", os="linux", labels=labels), _node("win-0", labels=labels, build=os_sku_build, taints=[]),
            namespace("shop")]
    [found] = [f for f in run_checks(snapshot_of(*objs)) if f.id == "windows-node-untainted"]
    return found


def test_an_untainted_aks_node_is_fixed_through_its_node_pool() -> None:
    found = _untainted_fix(AKS)
    [argv] = found.fix.commands
    assert argv[:4] == ("az", "aks", "nodepool", "update")
    assert argv[argv.index("--name") + 1] == "win22"
    assert argv[argv.index("--node-taints") + 1] == "os=Win2022:NoSchedule"
    assert "kubectl route does not last" in found.fix.note


def test_an_untainted_eks_node_is_fixed_through_its_node_group() -> None:
    [argv] = _untainted_fix(EKS).fix.commands
    assert argv[:3] == ("aws", "eks", "update-nodegroup-config")
    assert argv[argv.index("--cluster-name") + 1] == "prod"
    assert argv[argv.index("--nodegroup-name") + 1] == "gpu-win"
    assert argv[-1] == "addOrUpdateTaints=[{key=os,value=Win2022,effect=NO_SCHEDULE}]"


def test_an_untainted_kubeadm_node_keeps_the_kubectl_route() -> None:
    found = _untainted_fix({})
    assert found.fix.commands == (("kubectl", "taint", "nodes", "win-0", "os=Win2022:NoSchedule"),)


def test_gke_and_openshift_answer_with_their_own_taint() -> None:
    assert windows_taint(build_of(20348), [], "gke").text() == "node.kubernetes.io/os=windows:NoSchedule"
    assert windows_taint(build_of(20348), [], "openshift").text() == "os=Windows:NoSchedule"
    assert windows_taint(build_of(20348), [], "aks").text() == "os=Win2022:NoSchedule"
    # The cluster's own taints win, per build where they follow KEP-116.
    assert windows_taint(build_of(17763), [("os", "Win2022", "NoSchedule")], "gke").text() == "os=Win1809:NoSchedule"
    assert windows_taint(build_of(17763), [("sku", "windows", "NoSchedule")]).text() == "sku=windows:NoSchedule"


def test_doctor_scaffold_and_node_taint_give_one_answer_on_an_untainted_cluster() -> None:
    """Following doctor's taint and deploying what scaffold writes leaves no pod Pending."""
    nodes = [_node("linux-0", os="linux"), _node("win-0", build=20348, taints=[])]
    [found] = [f for f in run_checks(snapshot_of(*nodes, namespace("shop"))) if f.id == "windows-node-untainted"]
    doctor_taint = found.fix.commands[0][-1]
    options = PlacementOptions(build=build_of(20348), from_cluster=True)
    plan = plan_node_taints(options, nodes)
    assert plan.commands == [f"kubectl taint nodes win-0 {doctor_taint}"]
    offline = windows_placement(PlacementOptions(build=build_of(20348)))
    from_cluster = windows_placement(options, nodes)
    key, _, rest = doctor_taint.partition("=")
    value, _, effect = rest.partition(":")
    toleration = {"key": key, "operator": "Equal", "value": value, "effect": effect}
    assert toleration in offline.tolerations
    assert toleration in from_cluster.tolerations


def test_node_taint_on_a_managed_cluster_says_the_pools_route() -> None:
    nodes = [_node("linux-0", os="linux", labels=AKS), _node("win-0", labels=AKS, taints=[])]
    plan = plan_node_taints(PlacementOptions(from_cluster=True), nodes)
    assert plan.commands == ["kubectl taint nodes win-0 os=Win2022:NoSchedule"]
    [warning] = plan.warnings
    assert "az aks nodepool update" in warning and "--name win22" in warning


def test_every_platform_cites_its_sources_and_names_each_agent() -> None:
    for entry in platforms.platforms():
        assert entry.sources, entry.id
        assert set(entry.agents) == set(platforms.AGENTS), entry.id
        for spec in entry.fixes.values():
            assert spec.get("note") and spec.get("lasting"), entry.id
    assert [p.id for p in platforms.platforms()][-1] == "unknown"


def test_memory_reservations_on_eks_go_through_the_launch_template() -> None:
    objs = [_node("linux-0", os="linux", labels=EKS), _node("win-0", labels=EKS, allocatable="16Gi"),
            namespace("shop")]
    [found] = [f for f in run_checks(snapshot_of(*objs)) if f.id == "windows-node-no-memory-reserve"]
    assert "-KubeletExtraArgs" in found.fix.note and "--system-reserved=memory=2Gi" in found.fix.note
    kubeadm = [_node("linux-0", os="linux"), _node("win-0", allocatable="16Gi"), namespace("shop")]
    [plain] = [f for f in run_checks(snapshot_of(*kubeadm)) if f.id == "windows-node-no-memory-reserve"]
    assert "systemReserved" in plain.fix.note


def test_a_kubelet_ahead_of_the_api_server_on_aks_upgrades_the_control_plane() -> None:
    objs = [_node("linux-0", os="linux", labels=AKS), _node("win-0", labels=AKS, kubelet="v1.32.1"),
            namespace("shop")]
    [found] = [f for f in run_checks(snapshot_of(*objs, server="v1.31.4")) if f.id == "kubelet-newer-than-apiserver"]
    [argv] = found.fix.commands
    assert argv[:3] == ("az", "aks", "upgrade") and "--control-plane-only" in argv


def test_an_unsupported_build_on_gke_moves_to_a_new_pool() -> None:
    objs = [_node("linux-0", os="linux", labels=GKE), _node("win-0", labels=GKE, build=18363), namespace("shop")]
    [found] = [f for f in run_checks(snapshot_of(*objs)) if f.id == "windows-build-unsupported"]
    [argv] = found.fix.commands
    assert argv[:4] == ("gcloud", "container", "node-pools", "create") and "ltsc2022" in argv
    assert "win-pool" in found.fix.note
