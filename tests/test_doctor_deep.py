"""doctor --deep against the test API server: hns on each Windows node (HostProcess pods replaying recorded
dumps) and the last hour of node logs, joined to doctor's report."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.apiserver.exec import settings_for
from tests.apiserver.nodelogs import NodeLogs
from tests.support.cli import run_cli
from tests.support.hns_scenarios import HNS_FIXTURES, SCENARIOS, cluster_items
from tests.support.paths import ROOT
from tests.support.waiting import wait_until
from tests.test_hns_live import FakeKubelet


def klog(level: str, ago: timedelta, text: str) -> str:
    t = datetime.now(UTC) - ago
    return f"{level}{t:%m%d %H:%M:%S}.000000    4321 {text}"


class CountingKubelet(FakeKubelet):
    """Also records how many of our pods existed at once."""

    def __init__(self, store) -> None:  # noqa: ANN001
        super().__init__(store)
        self.most = 0
        self._watch = threading.Thread(target=self._count, daemon=True)

    def __enter__(self) -> CountingKubelet:
        super().__enter__()
        self._watch.start()
        return self

    def _count(self) -> None:
        while not self._stop.wait(0.01):
            self.most = max(self.most, len(self.ours()))


@pytest.fixture
def deep_cluster(apiserver, tmp_path: Path):  # noqa: ANN001, ANN201
    apiserver.put(*cluster_items())
    settings = settings_for(apiserver.server)
    settings.hns_dumps.clear()
    broken, _ = {s.name: s for s in SCENARIOS}["missing load balancer"].build()  # recorded on win-a
    (tmp_path / "win-a.json").write_text(json.dumps(broken))
    settings.hns_dumps["win-a"] = (str(tmp_path / "win-a.json"), 0.3)
    settings.hns_dumps["win-b"] = (str(HNS_FIXTURES / "win-b-v2.json"), 0.3)
    apiserver.server.node_logs["win-a"] = NodeLogs(files={"kubelet/kubelet.err.log": "\n".join([
        klog("E", timedelta(hours=3), '"RunPodSandbox failed" err="hnsCall failed in Win32: old (0x1392)"'),
        klog("E", timedelta(minutes=20), '"RunPodSandbox from runtime service failed" err="failed to setup network '
                                         'for sandbox: hnsCall failed in Win32: The object already exists. (0x1392)"'),
    ]) + "\n"})
    # kube-proxy runs as a HostProcess DaemonSet pod here: its log comes from pods/log.
    kube_proxy = next(i for i in cluster_items() if i["metadata"]["name"] == "kube-proxy-windows-win-a")
    kube_proxy["metadata"]["annotations"] = {"test.kubectl-win.io/log": klog(
        "E", timedelta(minutes=5), '"Stale loadbalancers still remaining" count=3') + "\n"}
    apiserver.put(kube_proxy)
    with CountingKubelet(apiserver.store) as kubelet:
        yield apiserver, settings, kubelet
    settings.end_all()


def test_deep_findings_join_doctors_report(deep_cluster) -> None:  # noqa: ANN001
    apiserver, _, kubelet = deep_cluster
    result = run_cli("doctor", "--deep", "-o", "json", "--kubeconfig", str(apiserver.kubeconfig))
    assert result.exit_code == 1, result.stderr
    report = result.json
    by_id = {}
    for finding in report["findings"]:
        by_id.setdefault(finding["id"], []).append(finding)
    [missing] = by_id["hns-missing-loadbalancer"]
    assert missing["object"]["name"] == "whoami-windows" and "win-a" in missing["message"]
    [sandbox] = by_id["symptom-hns-failure"]
    assert sandbox["object"] == {"apiVersion": "v1", "kind": "Node", "namespace": None, "name": "win-a"}
    assert sandbox["path"] == "logs/kubelet" and "The object already exists" in sandbox["message"]
    assert "old" not in sandbox["message"]  # three hours ago: outside the last hour
    [sync] = by_id["hns-kube-proxy-sync-error"]
    assert "Stale loadbalancers still remaining" in sync["message"] and sync["confidence"] == "unsure"
    nodes = report["hns"]["nodes"]
    assert [n["node"] for n in nodes] == ["win-a", "win-b"]
    assert nodes[0]["counts"]["loadBalancers"] == 6 and nodes[1]["counts"]["loadBalancers"] == 9
    assert kubelet.ours() == [] and len(kubelet.seen) == 2
    skipped = {s["resource"]: s["reason"] for s in report["skipped"]}
    assert "containerd" in skipped["logs win-a"]  # no containerd log on a kubeadm node here: said, not hidden


def test_max_nodes_and_bounded_concurrency(deep_cluster) -> None:  # noqa: ANN001
    apiserver, _, kubelet = deep_cluster
    result = run_cli("doctor", "--deep", "--max-nodes", "1", "-o", "json", "--kubeconfig", str(apiserver.kubeconfig))
    report = result.json
    assert [n["node"] for n in report["hns"]["nodes"]] == ["win-a"]
    assert any(s["resource"] == "deep" and "not inspected: win-b" in s["reason"] for s in report["skipped"])
    assert kubelet.most == 1 and kubelet.ours() == []


def test_concurrency_is_bounded(apiserver, deep_cluster) -> None:  # noqa: ANN001
    from kubectl_win.doctor.deep import DeepOptions, run_deep
    from kubectl_win.doctor.run import DoctorOptions, take_snapshot
    from kubectl_win.kube import KubeFlags, connect

    apiserver, settings, kubelet = deep_cluster
    for index in range(5):
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"win-{index}", "labels": {
            "kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}},
            "status": {"nodeInfo": {"operatingSystem": "windows", "kernelVersion": "10.0.20348.2762"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}
        apiserver.put(node)
        settings.hns_dumps[f"win-{index}"] = (str(HNS_FIXTURES / "win-b-v2.json"), 0.5)
    flags = KubeFlags(kubeconfig=str(apiserver.kubeconfig))
    snapshot = take_snapshot(DoctorOptions(kube_flags=flags))
    with connect(flags) as cluster:
        result = run_deep(cluster, snapshot, DeepOptions(max_nodes=10, concurrency=2))
    assert len(result.hns) == 7 and all("counts" in n for n in result.hns)
    assert kubelet.most == 2 and kubelet.ours() == []


def test_deep_needs_a_live_cluster() -> None:
    result = run_cli("doctor", "--deep", "--from-dump", str(HNS_FIXTURES / "cluster.json"))
    assert result.exit_code == 2 and "--deep looks inside live nodes" in result.stderr


def test_interrupting_deep_deletes_every_pod(deep_cluster) -> None:  # noqa: ANN001
    import signal
    import subprocess
    import sys

    apiserver, settings, kubelet = deep_cluster
    for node in ("win-a", "win-b"):
        settings.hns_dumps[node] = (settings.hns_dumps[node][0], 60.0)
    process = subprocess.Popen([sys.executable, "-m", "kubectl_win", "doctor", "--deep", "--kubeconfig",
                                str(apiserver.kubeconfig)], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: len(settings.live_sessions()) >= 2, "both nodes' deep sessions to start")
        assert len(kubelet.ours()) == 2
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert kubelet.ours() == []


def test_deep_sarif_describes_the_hns_rules(deep_cluster) -> None:  # noqa: ANN001
    apiserver, _, _ = deep_cluster
    result = run_cli("doctor", "--deep", "-o", "sarif", "--kubeconfig", str(apiserver.kubeconfig))
    rules = {r["id"]: r for r in result.json["runs"][0]["tool"]["driver"]["rules"]}
    assert "Service has no HNS load balancer" in json.dumps(rules["hns-missing-loadbalancer"])
