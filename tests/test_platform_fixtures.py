"""doctor on the real Node objects of each platform (tests/fixtures/platforms, sources beside each file): the
platform it reads, no kube-proxy or CNI claim where the platform runs them as host services, kubeadm's missing
agents still named, and an untainted managed node fixed through its pool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "platforms"
NETWORK = ("windows-node-kube-proxy-missing", "windows-node-cni-missing")
EXPECTED = {"aks": "aks", "aks-engine": "aks-engine", "capi": "capi", "eks": "eks", "kubeadm": "kubeadm",
            "kubeadm-missing": "kubeadm", "openshift": "openshift", "rke2": "rke2"}


def _linux_pods(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Linux kube-proxy pod every such cluster runs, for dumps whose source listed no pods (doctor judges the
    node agents only when it read the cluster's pods)."""
    linux = next((i["metadata"]["name"] for i in items if i["kind"] == "Node"
                  and i["metadata"].get("labels", {}).get("kubernetes.io/os") == "linux"), None)
    if linux is None or any(i["kind"] == "Pod" for i in items):
        return []
    return [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "kube-proxy-linux-0", "namespace": "kube-system",
                          "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "kube-proxy",
                                               "controller": True, "uid": "u"}]},
             "spec": {"nodeName": linux, "nodeSelector": {"kubernetes.io/os": "linux"},
                      "containers": [{"name": "kube-proxy", "image": "registry.k8s.io/kube-proxy:v1.30.4"}]},
             "status": {"phase": "Running"}}]


def _doctor(name: str, tmp_path: Path) -> dict[str, Any]:
    dump = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    dump["items"] += _linux_pods(dump["items"])
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(dump), encoding="utf-8")
    result = run_cli("doctor", "--from-dump", str(path), "-o", "json")
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_doctor_reads_each_platform_from_its_real_nodes(name: str, tmp_path: Path) -> None:
    report = _doctor(name, tmp_path)
    assert report["cluster"]["platform"] == EXPECTED[name]
    assert {n["platform"] for n in report["nodes"]} == {EXPECTED[name]}


@pytest.mark.parametrize("name", ["aks", "eks", "openshift", "rke2", "aks-engine"])
def test_no_kube_proxy_or_cni_claim_on_a_platform_that_runs_them_on_the_host(name: str, tmp_path: Path) -> None:
    findings = _doctor(name, tmp_path)["findings"]
    assert [f["id"] for f in findings if f["id"] in NETWORK] == []
    assert not any("calico-node-windows" in ((f["fix"] or {}).get("note") or "") for f in findings)


def test_the_kubeadm_clusters_missing_agents_are_still_named(tmp_path: Path) -> None:
    assert [f for f in _doctor("kubeadm", tmp_path)["findings"] if f["id"] in NETWORK] == []
    missing = {f["id"]: f["message"] for f in _doctor("kubeadm-missing", tmp_path)["findings"] if f["id"] in NETWORK}
    assert "DaemonSet kube-system/kube-proxy-windows" in missing["windows-node-kube-proxy-missing"]
    assert "calico-node-windows" in missing["windows-node-cni-missing"]


@pytest.mark.parametrize(("name", "command"), [("aks", ["az", "aks", "nodepool", "update"]),
                                              ("eks", ["aws", "eks", "update-nodegroup-config"])])
def test_every_untainted_managed_node_is_fixed_through_its_pool(name: str, command: list[str],
                                                               tmp_path: Path) -> None:
    report = _doctor(name, tmp_path)
    untainted = [f for f in report["findings"] if f["id"] == "windows-node-untainted"]
    windows = [n["name"] for n in report["nodes"] if n["os"] == "windows"]
    assert sorted(f["object"]["name"] for f in untainted) == sorted(windows)
    for found in untainted:
        assert all(argv[:len(command)] == command for argv in found["fix"]["argv"])
        assert "kubectl route does not last" in found["fix"]["note"]
        assert "kubectl taint" not in " ".join(found["fix"]["commands"])


def test_openshift_nodes_carry_wmcos_taint_and_draw_no_taint_finding(tmp_path: Path) -> None:
    ids = {f["id"] for f in _doctor("openshift", tmp_path)["findings"]}
    assert not ids & {"windows-node-untainted", "windows-node-taints-not-os"}
