"""A Windows pod the scheduler cannot place because the cluster has no Windows node that can take it: the
FailedScheduling event states that cause (the cluster's nodes decide it), in the platform's terms, and says
nothing more than the message when a Windows node could take the pod."""

from __future__ import annotations

from typing import Any

from kubectl_win.doctor.checks.plan import run_checks
from kubectl_win.findings import CONFIDENCE_CAUSE, Finding
from tests.support.kube_objects import deployment_pod, event, node, pod, snapshot_of, windows_spec, workload

MISS = "0/3 nodes are available: 3 node(s) didn't match node selector."
AKS = {"kubernetes.azure.com/agentpool": "sys", "kubernetes.azure.com/mode": "system"}
EKS = {"eks.amazonaws.com/nodegroup": "linux", "alpha.eksctl.io/cluster-name": "prod"}


def _findings(*nodes: dict[str, Any], spec: dict[str, Any] | None = None, message: str = MISS) -> list[Finding]:
    web = pod("web", spec or windows_spec("mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"),
              node=None)
    return run_checks(snapshot_of(*nodes, web, event(("Pod", "shop", "web"), "FailedScheduling", message)))


def _on_pod(found: list[Finding]) -> Finding:
    return next(f for f in found if f.object.display() == "shop/Pod/web")


def test_no_windows_node_is_the_cause_and_the_fix_adds_a_pool_the_platform_way() -> None:
    found = _findings(node("sys-1", os="linux", labels=AKS))
    answer = _on_pod(found)
    assert answer.confidence == CONFIDENCE_CAUSE
    assert answer.id == "windows-node-failure"
    assert "the cluster has no Windows node" in answer.message
    assert ("az", "aks", "nodepool", "add") == answer.fix.commands[0][:4]
    assert "--os-type" in answer.fix.commands[0]
    # One answer: the cluster-level finding gives the same fix.
    missing = next(f for f in found if f.id == "windows-nodes-missing")
    assert missing.fix.commands == answer.fix.commands


def test_eks_names_its_cluster_in_the_node_group_it_adds() -> None:
    answer = _on_pod(_findings(node("lin-1", os="linux", labels=EKS)))
    assert answer.fix.commands[0][:3] == ("eksctl", "create", "nodegroup")
    assert "prod" in answer.fix.commands[0]
    assert "enable-windows-ipam" in answer.fix.note


def test_windows_nodes_that_cannot_take_pods_are_named() -> None:
    answer = _on_pod(_findings(node("lin-1", os="linux"), node("win-1", os="windows", ready=False),
                               node("win-2", os="windows", unschedulable=True)))
    assert answer.confidence == CONFIDENCE_CAUSE
    assert "win-1, win-2" in answer.message
    assert ("kubectl", "get", "nodes", "-l", "kubernetes.io/os=windows") in answer.fix.commands


def test_a_ready_windows_node_leaves_the_message_unexplained() -> None:
    answer = _on_pod(_findings(node("lin-1", os="linux"), node("win-1", os="windows")))
    assert answer.confidence != CONFIDENCE_CAUSE
    assert "no Windows node" not in answer.message


def test_a_pod_that_does_not_ask_for_windows_is_not_explained_by_windows_nodes() -> None:
    linux = {"containers": [{"name": "app", "image": "nginx:1.27"}], "nodeSelector": {"disk": "ssd"}}
    found = _findings(node("lin-1", os="linux"), spec=linux)
    assert all("no Windows node" not in f.message for f in found)


def test_other_scheduling_failures_keep_their_own_reading() -> None:
    taint = "0/2 nodes are available: 2 node(s) had untolerated taint {os: windows}."
    answer = _on_pod(_findings(node("lin-1", os="linux"), message=taint))
    assert "no Windows node" not in answer.message


def test_a_selector_no_windows_node_matches_is_the_cause_and_both_findings_give_one_fix() -> None:
    """A Deployment still pinned to Windows Server 2019 after its nodes moved to 2022: its pending pod's
    FailedScheduling event and the workload's placement finding say the same thing."""
    spec = windows_spec("mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019")
    spec["nodeSelector"]["node.kubernetes.io/windows-build"] = "10.0.17763"
    pending = deployment_pod("web", "x1", spec)
    objs = [node("lin-1", os="linux"), node("win-1", build=20348), workload("Deployment", "web", spec), pending,
            event(("Pod", "shop", pending["metadata"]["name"]), "FailedScheduling",
                  "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")]
    found = run_checks(snapshot_of(*objs))
    [answer] = [f for f in found if f.object.name == pending["metadata"]["name"]]
    assert answer.confidence == CONFIDENCE_CAUSE and answer.id == "windows-node-failure"
    assert "node.kubernetes.io/windows-build=10.0.17763" in answer.message
    assert "matches none of the cluster's 1 Windows nodes" in answer.message
    [placement] = [f for f in found if f.id == "windows-workload-no-matching-node"]
    assert answer.fix == placement.fix and "builds present: 10.0.20348" in answer.fix.note
