"""port-forward against a real kube-apiserver (each supported minor): deploy, sts, rs and svc targets
resolve to the ready pod the real kubectl picks, and a pod without a node or without a reachable kubelet
gives the error kubectl gives. The exec stream itself needs a kubelet; it is tested on the test API
server (test_portforward_e2e.py)."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from kubectl_win.kube import KubeFlags, connect
from kubectl_win.portforward import targets
from kubectl_win.portforward.ports import parse_port_pair
from tests.realcluster.cluster import RealCluster
from tests.support.waiting import wait_until

NS = "pf"
IMAGE = "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"


def closed_port() -> int:
    """A loopback port nothing listens on: the 'kubelet' the API server will fail to reach."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _pod(name: str, labels: dict[str, str], node: str | None, ready: bool | None,
         owner: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if owner:
        meta["ownerReferences"] = [owner]
    spec: dict[str, Any] = {"os": {"name": "windows"}, "nodeSelector": {"kubernetes.io/os": "windows"},
                            "containers": [{"name": "iis", "image": IMAGE,
                                            "ports": [{"name": "http", "containerPort": 8080}]}]}
    if node:
        spec["nodeName"] = node
    status = None
    if ready is not None:
        now = "2026-01-01T00:00:00Z"
        status = {"phase": "Running", "startTime": now, "podIP": "127.0.0.1", "hostIP": "127.0.0.1",
                  "conditions": [{"type": "Ready", "status": str(ready)},
                                 {"type": "ContainersReady", "status": str(ready)}],
                  "containerStatuses": [{"name": "iis", "image": IMAGE, "imageID": "", "ready": ready,
                                         "restartCount": 0, "started": True,
                                         "state": {"running": {"startedAt": now}}}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}, status


@pytest.fixture(scope="session")
def pf_cluster(real_cluster: RealCluster) -> RealCluster:
    """Namespace pf: a Windows node whose kubelet port is closed on 127.0.0.1; Deployment web with its
    ReplicaSet (web-1 not ready and older, web-2 ready), StatefulSet db (db-0 ready), Service web, and
    pod lonely (Running but bound to no node)."""
    client = real_cluster.client()
    port = closed_port()

    def create(path: str, obj: dict[str, Any]) -> dict[str, Any]:
        status, body = client.request("POST", path, obj)
        assert status == 201, body
        return body

    create("/api/v1/namespaces", {"metadata": {"name": NS}})
    create("/api/v1/nodes", {
        "metadata": {"name": "pf-win", "labels": {"kubernetes.io/os": "windows"}},
        "status": {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                   "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
                   "conditions": [{"type": "Ready", "status": "True"}],
                   "nodeInfo": {"operatingSystem": "windows", "architecture": "amd64",
                                "kubeletVersion": real_cluster.version}}})
    selector = {"matchLabels": {"app": "web"}}
    template = {"metadata": {"labels": {"app": "web"}}, "spec": _pod("t", {}, None, None)[0]["spec"]}
    deploy = create(f"/apis/apps/v1/namespaces/{NS}/deployments",
                    {"metadata": {"name": "web"}, "spec": {"selector": selector, "template": template}})
    rs = create(f"/apis/apps/v1/namespaces/{NS}/replicasets", {
        "metadata": {"name": "web-abc", "labels": {"app": "web", "pod-template-hash": "abc"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                          "uid": deploy["metadata"]["uid"], "controller": True}]},
        "spec": {"selector": {"matchLabels": {"app": "web", "pod-template-hash": "abc"}},
                 "template": {"metadata": {"labels": {"app": "web", "pod-template-hash": "abc"}},
                              "spec": template["spec"]}}})
    create(f"/apis/apps/v1/namespaces/{NS}/statefulsets", {
        "metadata": {"name": "db"}, "spec": {"selector": {"matchLabels": {"app": "db"}}, "serviceName": "db",
                                             "template": {"metadata": {"labels": {"app": "db"}},
                                                          "spec": template["spec"]}}})
    create(f"/api/v1/namespaces/{NS}/services", {
        "metadata": {"name": "web"}, "spec": {"selector": {"app": "web"},
                                              "ports": [{"port": 80, "targetPort": "http"}]}})
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "uid": rs["metadata"]["uid"],
             "controller": True}
    pods = [_pod("web-1", {"app": "web", "pod-template-hash": "abc"}, "pf-win", False, owner),
            _pod("web-2", {"app": "web", "pod-template-hash": "abc"}, "pf-win", True, owner),
            _pod("db-0", {"app": "db"}, "pf-win", True),
            _pod("lonely", {"app": "lonely"}, None, True)]
    for obj, status in pods:
        created = create(f"/api/v1/namespaces/{NS}/pods", obj)["metadata"]["creationTimestamp"]
        # distinct creationTimestamps (whole seconds, this machine's clock): web-1 is the older one
        wait_until(lambda c=created: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) > c, "the next second")
        client.ok("PATCH", f"/api/v1/namespaces/{NS}/pods/{obj['metadata']['name']}/status", {"status": status},
                  "application/merge-patch+json")
    return real_cluster


def kubectl_choice(kubectl: str, cluster: RealCluster, target: str, port: str) -> tuple[str | None, str]:
    """(the pod kubectl port-forward connects to, its error) from its request log."""
    result = subprocess.run([kubectl, "--kubeconfig", str(cluster.kubeconfig), "-n", NS, "port-forward", target,
                             f":{port}", "-v=6"], capture_output=True, text=True, timeout=60,
                            env={"HOME": str(cluster.workdir), "PATH": "/usr/bin:/bin"})
    chosen = re.search(rf"/namespaces/{NS}/pods/([^/]+)/portforward", result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    return (chosen.group(1) if chosen else None), (errors[-1] if errors else "")


@pytest.mark.parametrize(("target", "port", "pod", "remote"), [
    ("deploy/web", "8080", "web-2", 8080), ("rs/web-abc", "8080", "web-2", 8080),
    ("sts/db", "8080", "db-0", 8080), ("svc/web", "80", "web-2", 8080), ("pod/db-0", "http", "db-0", 8080),
])
def test_targets_resolve_to_the_ready_pod_kubectl_picks(pf_cluster: RealCluster, kubectl: str, target: str,
                                                         port: str, pod: str, remote: int) -> None:
    """Runs on both real servers; the real kubectl is the reference for which pod a target means."""
    cluster = connect(KubeFlags(kubeconfig=str(pf_cluster.kubeconfig)))
    resolved = targets.resolve(cluster, targets.parse_target(target), NS, [parse_port_pair(f":{port}")],
                               timeout=5)
    assert (resolved.name, resolved.ports[0][1]) == (pod, remote)
    chosen, _ = kubectl_choice(kubectl, pf_cluster, target, port)
    assert chosen == pod


def plugin_error(cluster: RealCluster, target: str, tmp_path: Path) -> str:
    """Start `kubectl-win port-forward`, make one connection, and return the error it reports."""
    from tests.support.plugin_shim import install_shim

    shim = install_shim(tmp_path / "bin")
    proc = subprocess.Popen([str(shim), "port-forward", target, ":8080", "-n", NS, "--kubeconfig",
                             str(cluster.kubeconfig)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        match = re.search(r"127\.0\.0\.1:(\d+)", line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        with socket.create_connection(("127.0.0.1", int(match.group(1))), timeout=10) as conn:
            conn.settimeout(30)
            try:
                conn.recv(1)
            except OSError:
                pass
        deadline = time.monotonic() + 30
        errors: list[str] = []
        while time.monotonic() < deadline and not errors:
            text = proc.stderr.readline() if proc.stderr else ""
            if text.startswith("error:"):
                errors.append(text.strip())
        return errors[0] if errors else ""
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.mark.parametrize(("target", "kubectl_words"), [
    ("pod/lonely", "does not have a host assigned"),
    ("deploy/web", "connect: connection refused"),
])
def test_no_node_and_unreachable_kubelet_give_kubectls_error(pf_cluster: RealCluster, kubectl: str,
                                                              tmp_path: Path, target: str,
                                                              kubectl_words: str) -> None:
    """Runs on both real servers: the API server's own answer reaches the user, as with kubectl."""
    _, kubectl_error = kubectl_choice(kubectl, pf_cluster, target, "8080")
    assert kubectl_words in kubectl_error
    error = plugin_error(pf_cluster, target, tmp_path)
    assert kubectl_words in error, (error, kubectl_error)
