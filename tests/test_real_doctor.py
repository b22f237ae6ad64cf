"""doctor and live explain against a real kube-apiserver (each supported minor), compared with the test
API server holding the same objects; RBAC, paging and path escaping as the real server does them; and
kubectl's view of the cluster equal to doctor's inventory and --save-dump."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from kubectl_win.doctor.read import reduce
from kubectl_win.doctor.read.share import for_sharing
from kubectl_win.kube import KubeFlags, NotFound, connect
from tests.apiserver import ApiServer
from tests.realcluster.cluster import RealCluster
from tests.support.cli import run_cli
from tests.support.paths import SAMPLE_DUMP

# What doctor reads (kubectl_win/doctor/read/plan.py), as API collections.
COLLECTIONS = {
    "nodes": "/api/v1/nodes", "namespaces": "/api/v1/namespaces",
    "runtimeclasses": "/apis/node.k8s.io/v1/runtimeclasses",
    "gmsacredentialspecs": "/apis/windows.k8s.io/v1/gmsacredentialspecs",
    "pods": "/api/v1/pods", "deployments": "/apis/apps/v1/deployments", "statefulsets": "/apis/apps/v1/statefulsets",
    "daemonsets": "/apis/apps/v1/daemonsets", "jobs": "/apis/batch/v1/jobs", "cronjobs": "/apis/batch/v1/cronjobs",
    "replicationcontrollers": "/api/v1/replicationcontrollers", "services": "/api/v1/services",
    "endpointslices": "/apis/discovery.k8s.io/v1/endpointslices", "events": "/api/v1/events",
}
# Set by the API server on every object, never compared.
SKEW_IDS = {"kubelet-too-old", "kubelet-newer-than-apiserver"}


def test_the_sample_objects_a_real_server_refuses_are_the_ones_explain_says_it_refuses(
        real_cluster: RealCluster, sample_refused: list[tuple[dict[str, Any], str]]) -> None:
    """The sample dump holds workloads a real API server would never have admitted (it comes from a
    hand-edited cluster). Each refusal must be one explain predicts with `enforcedBy: api-server` and the
    same field; everything else is created. Runs on both real servers."""
    from kubectl_win.explain.lint import lint_object
    from kubectl_win.versions import parse_version

    refused_names = set()
    for obj, message in sample_refused:
        predicted = [f for f in lint_object(obj, k8s_version=parse_version(real_cluster.minor))
                     if f.enforced_by == "api-server"]
        assert predicted, f"{obj['kind']}/{obj['metadata']['name']} refused but explain predicts nothing: {message}"
        assert all(f.path in message for f in predicted), (message, [f.path for f in predicted])
        refused_names.add(obj["metadata"]["name"])
    items = json.loads(SAMPLE_DUMP.read_text())["items"]
    for obj in items:
        if obj["metadata"]["name"] not in refused_names:
            assert not [f for f in lint_object(obj, k8s_version=parse_version(real_cluster.minor))
                        if f.enforced_by == "api-server"], obj["metadata"]["name"]


def everything(cluster: RealCluster) -> list[dict[str, Any]]:
    """Every object doctor reads, as the real server returns it (items with kind and apiVersion)."""
    client = cluster.client()
    items = []
    for path in COLLECTIONS.values():
        listed = client.ok("GET", path)
        kind = listed["kind"].removesuffix("List")
        for item in listed["items"]:
            items.append({"apiVersion": listed["apiVersion"], "kind": kind, **item})
    return items


@pytest.fixture
def test_server_copy(real_sample: RealCluster, tmp_path: Path) -> Iterator[ApiServer]:
    """The test API server holding exactly what the real one holds, reporting the same version."""
    server = ApiServer(tls=True, workdir=tmp_path / "copy", git_version=real_sample.version)
    with server:
        for item in everything(real_sample):
            server.store.put(item)
        yield server


def doctor_json(kubeconfig: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    result = run_cli("doctor", "--kubeconfig", str(kubeconfig), "-o", "json", *args)
    return result.exit_code, (json.loads(result.stdout) if result.stdout else {}), result.stderr


def test_doctor_findings_on_the_real_server_equal_the_test_servers(real_sample: RealCluster,
                                                                   test_server_copy: ApiServer) -> None:
    """Runs on both servers: the real kube-apiserver and the test API server with the same objects."""
    code, real, err = doctor_json(real_sample.kubeconfig)
    assert (code, err) == (1, "")
    copy_code, copy, copy_err = doctor_json(test_server_copy.write_kubeconfig())
    assert (copy_code, copy_err) == (1, "")
    assert real["cluster"] == copy["cluster"] == {"serverVersion": real_sample.version, "platform": "unknown"}
    assert real["skipped"] == copy["skipped"] == []
    assert real["nodes"] == copy["nodes"]
    assert real["findings"] == copy["findings"]
    assert real["summary"] == copy["summary"]
    # The scenario came through: the sample's problems are found on the real server too.
    ids = {f["id"] for f in real["findings"]}
    assert {"windows-node-untainted", "linux-workload-can-land-on-windows", "image-build-mismatch",
            "hostprocess-blocked-by-pod-security", "symptom-hns-failure", "kubelet-too-old"} <= ids
    assert {n["name"] for n in real["nodes"] if n["os"] == "windows"} == {"win19-0", "win22-0", "win22-1"}


def test_live_explain_on_the_real_server_equals_the_test_servers(real_sample: RealCluster,
                                                                 test_server_copy: ApiServer) -> None:
    """Runs on both servers: explain of the live workloads in every namespace."""
    found = 0
    for resource in ("deployments", "daemonsets", "cronjobs", "pods"):
        real = run_cli("explain", resource, "-A", "--kubeconfig", str(real_sample.kubeconfig), "-o", "json")
        copy = run_cli("explain", resource, "-A", "--kubeconfig", str(test_server_copy.write_kubeconfig()),
                       "-o", "json")
        assert (real.exit_code, real.stderr) == (copy.exit_code, copy.stderr)
        assert real.stderr == ""
        assert real.json == copy.json
        found += len(real.json["findings"])
    assert found


def kubectl_json(kubectl: str, cluster: RealCluster, *args: str) -> dict[str, Any]:
    result = subprocess.run([kubectl, "--kubeconfig", str(cluster.kubeconfig), *args, "-o", "json"],
                            capture_output=True, text=True, timeout=120,
                            env={"HOME": str(cluster.workdir), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_kubectl_get_equals_doctor_inventory_and_save_dump(real_sample: RealCluster, kubectl: str,
                                                           tmp_path: Path) -> None:
    """What `kubectl get nodes,pods -A -o json` returns is what doctor's inventory and --save-dump hold."""
    listed = kubectl_json(kubectl, real_sample, "get", "nodes,pods", "-A")["items"]
    dump_path = tmp_path / "dump.json"
    code, report, err = doctor_json(real_sample.kubeconfig, "--save-dump", str(dump_path))
    assert (code, err) == (1, "")
    nodes = [o for o in listed if o["kind"] == "Node"]
    pods = [o for o in listed if o["kind"] == "Pod"]

    inventory = {n["name"]: n for n in report["nodes"]}
    assert set(inventory) == {n["metadata"]["name"] for n in nodes}
    for node in nodes:
        info = node["status"]["nodeInfo"]
        row = inventory[node["metadata"]["name"]]
        assert (row["os"], row["kernelVersion"], row["osImage"], row["kubeletVersion"]) == (
            node["metadata"]["labels"].get("kubernetes.io/os"), info["kernelVersion"], info["osImage"],
            info["kubeletVersion"])
        assert row["taints"] == [f"{t['key']}={t['value']}:{t['effect']}" if t.get("value") else
                                 f"{t['key']}:{t['effect']}" for t in node["spec"].get("taints") or ()]
    assert report["summary"]["nodes"] == len(nodes)
    assert report["summary"]["podsScanned"] == len(pods)

    dumped = json.loads(dump_path.read_text())["items"]
    by_key = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in dumped}
    for node in nodes:
        assert by_key[("Node", None, node["metadata"]["name"])] == for_sharing(reduce.node(node))
    kept = [p for p in pods if ("Pod", p["metadata"]["namespace"], p["metadata"]["name"]) in by_key]
    assert kept, "the dump keeps the pods doctor reports on"
    for pod in kept:
        assert by_key[("Pod", pod["metadata"]["namespace"], pod["metadata"]["name"])] == for_sharing(reduce.pod(pod))

    # kubectl's own JSON as --from-dump gives the live findings (bar the skew checks: it has no version).
    everything_json = kubectl_json(kubectl, real_sample, "get", ",".join(
        ["nodes", "namespaces", "runtimeclasses", "gmsacredentialspecs", "pods", "deployments", "statefulsets",
         "daemonsets", "jobs", "cronjobs", "replicationcontrollers", "services", "events"]), "-A")
    from_kubectl = tmp_path / "kubectl.json"
    from_kubectl.write_text(json.dumps(everything_json))
    offline = run_cli("doctor", "--from-dump", str(from_kubectl), "-o", "json")
    assert offline.stderr == ""
    live_findings = [f for f in report["findings"] if f["id"] not in SKEW_IDS]
    assert offline.json["findings"] == live_findings
    assert offline.json["nodes"] == report["nodes"]


def test_a_narrow_role_gets_a_partial_report_without_a_traceback(real_sample: RealCluster) -> None:
    """A user who may read nodes and, in one namespace, pods: doctor reports what it could read and lists
    the rest as skipped, as RBAC on the real server denies it."""
    client = real_sample.client()
    rules_nodes = [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]}]
    rules_shop = [{"apiGroups": ["", "apps"], "resources": ["pods", "deployments"], "verbs": ["get", "list"]}]
    for path, obj in [
        ("/apis/rbac.authorization.k8s.io/v1/clusterroles",
         {"metadata": {"name": "narrow-nodes"}, "rules": rules_nodes}),
        ("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
         {"metadata": {"name": "narrow-nodes"}, "subjects": [{"kind": "User", "name": "narrow"}],
          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "narrow-nodes"}}),
        ("/apis/rbac.authorization.k8s.io/v1/namespaces/shop/roles",
         {"metadata": {"name": "narrow-shop"}, "rules": rules_shop}),
        ("/apis/rbac.authorization.k8s.io/v1/namespaces/shop/rolebindings",
         {"metadata": {"name": "narrow-shop"}, "subjects": [{"kind": "User", "name": "narrow"}],
          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "narrow-shop"}}),
    ]:
        status, body = client.request("POST", path, obj)
        assert status in (201, 409), body
    config = real_sample.user_kubeconfig("narrow", namespace="shop")

    code, report, err = doctor_json(config)
    assert err == "" and code in (0, 1)
    skipped = {s["resource"]: s["reason"] for s in report["skipped"]}
    assert {"pods", "events", "namespaces", "services", "gmsacredentialspecs"} <= set(skipped)
    assert 'User "narrow" cannot list resource "pods" in API group "" at the cluster scope' in skipped["pods"]
    assert {n["name"] for n in report["nodes"]} == {o["metadata"]["name"] for o in json.loads(
        SAMPLE_DUMP.read_text())["items"] if o["kind"] == "Node"}
    assert "windows-node-untainted" in {f["id"] for f in report["findings"]}

    code, report, err = doctor_json(config, "workloads", "-n", "shop")
    assert err == "" and code in (0, 1)
    assert "pods" not in {s["resource"] for s in report["skipped"]}
    assert report["summary"]["podsScanned"] > 0

    table = run_cli("doctor", "--kubeconfig", str(config))
    assert "Traceback" not in table.stderr and "skipped: " in table.stdout


PAGING_PODS = 1000
PAGE = 25


def test_paging_a_thousand_pods_with_a_small_chunk_size(real_cluster: RealCluster) -> None:
    """limit/continue on the real server: 1000 pods read 25 at a time (40 pages), each exactly once; doctor itself
    reads them in pages of its own size."""
    client = real_cluster.client()
    status, body = client.request("POST", "/api/v1/namespaces", {"metadata": {"name": "paging"}})
    assert status in (201, 409), body

    def create(start: int) -> None:
        own = real_cluster.client()
        for index in range(start, PAGING_PODS, 4):
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{index:05d}", "labels": {"app": "p"}},
                   "spec": {"containers": [{"name": "c", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022"}],
                            "nodeSelector": {"kubernetes.io/os": "windows"}}}
            status, body = own.request("POST", "/api/v1/namespaces/paging/pods", pod)
            assert status in (201, 409), body

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(create, range(4)))
    try:
        cluster = connect(KubeFlags(kubeconfig=str(real_cluster.kubeconfig)))
        pages = list(cluster.list_pages("pods", namespace="paging", page_size=PAGE))
        names = [item["metadata"]["name"] for page in pages for item in page["items"]]
        assert len(pages) == PAGING_PODS // PAGE
        assert len(names) == len(set(names)) == PAGING_PODS
        assert all(page["metadata"].get("continue") for page in pages[:-1]) and not pages[-1]["metadata"].get(
            "continue")
        code, report, err = doctor_json(real_cluster.kubeconfig, "workloads", "-n", "paging")
        assert err == "" and report["summary"]["podsScanned"] == PAGING_PODS
    finally:
        client.ok("DELETE", "/api/v1/namespaces/paging/pods?gracePeriodSeconds=0")


@pytest.mark.parametrize("name", ["../../nodes/win19-0", "a?watch=true", "x#y", "sp ace", "100%"])
def test_names_are_escaped_into_paths_on_the_real_server(real_sample: RealCluster, name: str) -> None:
    """A name or namespace with /, ?, # or % is one escaped path segment: the server answers for that
    name (NotFound, or for `%` its own 400 "may not contain '%'"), never with another object or a watch."""
    from kubectl_win.kube import ApiError

    cluster = connect(KubeFlags(kubeconfig=str(real_sample.kubeconfig)))
    for resource, obj_name, namespace in (("pods", name, "default"), ("deployments", "web-frontend", name)):
        with pytest.raises(ApiError) as err:
            cluster.get_object(resource, obj_name, namespace)
        if "%" in name and resource == "pods":  # a name with % is refused outright; a namespace is looked up
            assert err.value.status == 400 and "may not contain '%'" in str(err.value)
        else:
            assert isinstance(err.value, NotFound) and name in str(err.value)
    assert cluster.get_object("nodes", "win19-0")["metadata"]["name"] == "win19-0"
