"""The test API server speaks kube-apiserver's HTTP: checked with the real kubectl, the kubernetes
Python client and plain HTTP requests."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.apiserver import ApiServer
from tests.apiserver.store import Store
from tests.apiserver.synthetic import SyntheticSpec, generate
from tests.support.tools import require_corpus
from tests.support.waiting import HANG_GUARD


def _node(name: str, os_name: str = "windows", ready: str = "True") -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/os": os_name}},
            "status": {"conditions": [{"type": "Ready", "status": ready}],
                       "nodeInfo": {"kubeletVersion": "v1.32.1"}}}


def _pod(name: str, namespace: str, node: str = "win-1", phase: str = "Running", **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"nodeName": node,
                     "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022"}]},
            "status": {"phase": phase}}


def _deploy(name: str, namespace: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}}},
            "status": {"readyReplicas": 1, "updatedReplicas": 2, "availableReplicas": 1}}


def _http(server, path: str, method: str = "GET", body: dict | None = None, token: str | None = None,
          accept: str = "application/json") -> tuple[int, dict, dict]:
    """A plain HTTP request to the plain-HTTP fixture server: (status, body, headers)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(server.url + path, data=data, method=method, headers={"Accept": accept})
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read()), dict(resp.headers)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read()), dict(err.headers)


def _kubectl(handle, kubectl: str, *args: str, cache: Path | None = None) -> subprocess.CompletedProcess:
    env = handle.kubectl_env()
    if cache is not None:  # a cold discovery cache, to see the discovery requests
        env["KUBECACHEDIR"] = str(cache)
    return subprocess.run([kubectl, *args], env=env, capture_output=True, text=True, timeout=60)


# -- the real kubectl ----------------------------------------------------------------------------

def test_kubectl_get_nodes_prints_server_side_table(apiserver, kubectl) -> None:
    apiserver.put(_node("win-1"), _node("lin-1", "linux", ready="False"))
    result = _kubectl(apiserver, kubectl, "get", "nodes")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert lines[1].split()[:3] == ["lin-1", "NotReady", "<none>"]
    assert lines[2].split()[:2] == ["win-1", "Ready"]


def test_kubectl_get_pods_all_namespaces_json_pages_through_every_pod(apiserver, kubectl) -> None:
    apiserver.put(*[_pod(f"p-{i:02d}", f"ns-{i % 3}") for i in range(12)])
    result = _kubectl(apiserver, kubectl, "get", "pods", "-A", "-o", "json", "--chunk-size=5")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["kind"] == "List"
    assert sorted(p["metadata"]["name"] for p in doc["items"]) == [f"p-{i:02d}" for i in range(12)]
    assert {p["kind"] for p in doc["items"]} == {"Pod"}
    pod_requests = [p for m, p in apiserver.server.requests if p.startswith("/api/v1/pods?")]
    assert len(pod_requests) == 3 and "continue=" in pod_requests[1]


def test_kubectl_get_several_types_as_json(apiserver, kubectl, tmp_path: Path) -> None:
    apiserver.put(_node("win-1"), _pod("web", "apps"), _deploy("web", "apps"))
    result = _kubectl(apiserver, kubectl, "get", "nodes,pods,deployments", "-A", "-o", "json",
                      cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    kinds = sorted(item["kind"] for item in json.loads(result.stdout)["items"])
    assert kinds == ["Deployment", "Node", "Pod"]
    # Aggregated discovery answered /api and /apis: no per-group-version documents were needed.
    paths = [p.split("?")[0] for _, p in apiserver.server.requests]
    assert "/apis" in paths and "/apis/apps/v1" not in paths


def test_kubectl_get_deploy_in_namespace_and_short_names(apiserver, kubectl) -> None:
    apiserver.put(_deploy("web", "apps"), _deploy("other", "elsewhere"))
    result = _kubectl(apiserver, kubectl, "get", "deploy", "-n", "apps")
    assert result.returncode == 0, result.stderr
    assert [line.split()[:2] for line in result.stdout.splitlines()] == [["NAME", "READY"], ["web", "1/2"]]


def test_kubectl_selectors_reach_the_server(apiserver, kubectl) -> None:
    apiserver.put(_pod("a", "apps", node="win-1", app="web"), _pod("b", "apps", node="win-2", app="web"),
                  _pod("c", "apps", node="win-1", app="db"))
    result = _kubectl(apiserver, kubectl, "get", "pods", "-n", "apps", "-l", "app in (web,api)",
                      "--field-selector", "spec.nodeName=win-1", "-o", "name")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["pod/a"]


def test_kubectl_reports_not_found_and_forbidden_like_a_real_server(apiserver, kubectl) -> None:
    apiserver.put(_pod("a", "apps"))
    missing = _kubectl(apiserver, kubectl, "get", "pod", "ghost", "-n", "apps")
    assert missing.returncode == 1
    assert 'pods "ghost" not found' in missing.stderr
    apiserver.auth.deny("list", "pods")
    denied = _kubectl(apiserver, kubectl, "get", "pods", "-A")
    assert denied.returncode == 1
    assert ('pods is forbidden: User "admin" cannot list resource "pods" in API group "" at the cluster scope'
            in denied.stderr)


def test_kubectl_rejected_with_a_wrong_token(apiserver, kubectl) -> None:
    apiserver.server.write_kubeconfig(apiserver.kubeconfig, token="not-the-token")
    result = _kubectl(apiserver, kubectl, "get", "nodes")
    assert result.returncode == 1
    assert "provide credentials" in result.stderr or "Unauthorized" in result.stderr


def test_kubectl_with_a_client_certificate(apiserver, kubectl) -> None:
    apiserver.put(_node("win-1"))
    apiserver.server.write_kubeconfig(apiserver.kubeconfig, client_cert=True)
    result = _kubectl(apiserver, kubectl, "get", "nodes", "-o", "name")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["node/win-1"]


def test_kubectl_falls_back_to_legacy_discovery(tmp_path: Path, kubectl) -> None:
    with ApiServer(tls=True, aggregated_discovery=False, workdir=tmp_path) as server:
        server.store.put(_deploy("web", "apps"))
        server.write_kubeconfig(tmp_path / "kc")
        env_handle = type("H", (), {"kubectl_env": lambda self: {
            "KUBECONFIG": str(tmp_path / "kc"), "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path),
            "PATH": "/usr/bin:/bin"}})()
        result = _kubectl(env_handle, kubectl, "get", "deployments.apps", "-A", "-o", "name")
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == ["deployment.apps/web"]
        assert ("GET", "/apis/apps/v1") in [(m, p.split("?")[0]) for m, p in server.requests]


# -- the kubernetes Python client ----------------------------------------------------------------

def test_kubernetes_python_client_lists_nodes_pods_and_deployments(apiserver) -> None:
    # The client validates its models, so feed it complete objects: a small synthetic cluster.
    from kubernetes import client, config

    counts = generate(apiserver.store, SyntheticSpec(nodes=6, windows_share=0.5, pods=30, seed=3))
    api_client = config.new_client_from_config(config_file=str(apiserver.kubeconfig))
    try:
        core = client.CoreV1Api(api_client)
        nodes = core.list_node()
        assert len(nodes.items) == 6
        windows = [n for n in nodes.items if n.status.node_info.operating_system == "windows"]
        assert len(windows) == 3 and windows[0].spec.taints[0].effect == "NoSchedule"
        page = core.list_pod_for_all_namespaces(limit=25)
        assert len(page.items) == 25 and page.metadata._continue
        rest = core.list_pod_for_all_namespaces(limit=25, _continue=page.metadata._continue)
        assert len(rest.items) == 5 and not rest.metadata._continue
        deployments = client.AppsV1Api(api_client).list_deployment_for_all_namespaces()
        assert len(deployments.items) == counts["Deployment"]
        first = deployments.items[0]
        read = client.AppsV1Api(api_client).read_namespaced_deployment(first.metadata.name, first.metadata.namespace)
        assert read.metadata.uid == first.metadata.uid
        with pytest.raises(client.ApiException) as err:
            core.read_namespaced_pod("ghost", "apps")
        assert err.value.status == 404 and json.loads(err.value.body)["reason"] == "NotFound"
    finally:
        api_client.close()


# -- HTTP details --------------------------------------------------------------------------------

def test_list_shape_paging_and_status_bodies(http_apiserver) -> None:
    http_apiserver.put(*[_pod(f"p{i}", "apps") for i in range(5)])
    status, doc, _ = _http(http_apiserver, "/api/v1/namespaces/apps/pods?limit=2")
    assert status == 200
    assert (doc["kind"], doc["apiVersion"]) == ("PodList", "v1")
    assert int(doc["metadata"]["resourceVersion"]) > 0
    assert doc["metadata"]["remainingItemCount"] == 3
    assert [p["metadata"]["name"] for p in doc["items"]] == ["p0", "p1"]
    token = doc["metadata"]["continue"]
    _, doc2, _ = _http(http_apiserver, f"/api/v1/namespaces/apps/pods?limit=2&continue={token}")
    assert [p["metadata"]["name"] for p in doc2["items"]] == ["p2", "p3"]
    status, bad, _ = _http(http_apiserver, "/api/v1/pods?limit=2&continue=garbage!")
    assert status == 400 and bad["kind"] == "Status" and bad["reason"] == "BadRequest"
    status, missing, _ = _http(http_apiserver, "/api/v1/namespaces/apps/pods/ghost")
    assert (status, missing["kind"], missing["reason"], missing["code"]) == (404, "Status", "NotFound", 404)
    assert missing["message"] == 'pods "ghost" not found'


@pytest.mark.parametrize(("selector", "expected"), [
    ("app=web", ["a", "b"]),
    ("app==web", ["a", "b"]),
    ("app!=web", ["c", "d"]),
    ("app in (web, db)", ["a", "b", "c"]),
    ("app notin (web)", ["c", "d"]),
    ("tier", ["a", "c"]),
    ("!tier", ["b", "d"]),
    ("app=web,tier", ["a"]),
])
def test_label_selectors(http_apiserver, selector: str, expected: list[str]) -> None:
    http_apiserver.put(_pod("a", "x", app="web", tier="front"), _pod("b", "x", app="web"),
                       _pod("c", "x", app="db", tier="back"), _pod("d", "x"))
    query = urllib.request.quote(selector)
    _, doc, _ = _http(http_apiserver, f"/api/v1/pods?labelSelector={query}")
    assert [p["metadata"]["name"] for p in doc["items"]] == expected


def test_field_selectors_on_pods_and_events(http_apiserver) -> None:
    http_apiserver.put(_pod("a", "x", node="n1", phase="Running"), _pod("b", "x", node="n2", phase="Pending"),
                       _pod("c", "y", node="n1", phase="Failed"))
    http_apiserver.put({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "x"},
                        "involvedObject": {"kind": "Pod", "name": "a", "namespace": "x"}, "reason": "BackOff"},
                       {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e2", "namespace": "x"},
                        "involvedObject": {"kind": "Node", "name": "n1"}, "reason": "NodeReady"})
    cases = {
        "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1": ["a", "c"],
        "/api/v1/pods?fieldSelector=status.phase!%3DRunning": ["b", "c"],
        "/api/v1/pods?fieldSelector=metadata.namespace%3Dy": ["c"],
        "/api/v1/pods?fieldSelector=metadata.name%3Db,spec.nodeName%3Dn2": ["b"],
        "/api/v1/events?fieldSelector=involvedObject.kind%3DPod,involvedObject.name%3Da": ["e1"],
        "/api/v1/namespaces/x/events?fieldSelector=involvedObject.name%3Dn1": ["e2"],
    }
    for path, names in cases.items():
        status, doc, _ = _http(http_apiserver, path)
        assert status == 200, doc
        assert [i["metadata"]["name"] for i in doc["items"]] == names, path
    status, doc, _ = _http(http_apiserver, "/api/v1/pods?fieldSelector=spec.bogus%3D1")
    assert status == 400 and doc["message"] == "field label not supported: spec.bogus"


def test_create_get_delete_and_conflicts(http_apiserver) -> None:
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}
    status, created, _ = _http(http_apiserver, "/api/v1/namespaces/apps/services", "POST", body)
    assert status == 201
    assert created["metadata"]["namespace"] == "apps" and created["metadata"]["uid"]
    assert created["metadata"]["creationTimestamp"].endswith("Z")
    status, again, _ = _http(http_apiserver, "/api/v1/namespaces/apps/services", "POST", body)
    assert (status, again["reason"]) == (409, "AlreadyExists")
    status, got, _ = _http(http_apiserver, "/api/v1/namespaces/apps/services/web")
    assert (status, got["kind"], got["apiVersion"]) == (200, "Service", "v1")
    status, _, _ = _http(http_apiserver, "/api/v1/namespaces/apps/services/web", "DELETE")
    assert status == 200
    status, _, _ = _http(http_apiserver, "/api/v1/namespaces/apps/services/web")
    assert status == 404


def test_discovery_documents(http_apiserver) -> None:
    _, version, _ = _http(http_apiserver, "/version")
    assert (version["major"], version["minor"], version["gitVersion"]) == ("1", "32", "v1.32.0")
    _, groups, _ = _http(http_apiserver, "/apis")
    names = {g["name"] for g in groups["groups"]}
    assert {"apps", "batch", "discovery.k8s.io", "node.k8s.io", "windows.k8s.io"} <= names
    _, core, _ = _http(http_apiserver, "/api/v1")
    by_name = {r["name"]: r for r in core["resources"]}
    assert by_name["pods"]["shortNames"] == ["po"] and by_name["pods"]["namespaced"] is True
    assert by_name["nodes"]["namespaced"] is False and "pods/exec" in by_name
    _, gmsa, _ = _http(http_apiserver, "/apis/windows.k8s.io/v1")
    assert gmsa["resources"][0]["kind"] == "GMSACredentialSpec"
    status, agg, headers = _http(http_apiserver, "/apis",
                                 accept="application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
    assert headers["Content-Type"].startswith("application/json;g=apidiscovery.k8s.io;v=v2")
    assert agg["kind"] == "APIGroupDiscoveryList"


def test_custom_resource_lists_carry_kind_and_cluster_scope(http_apiserver) -> None:
    http_apiserver.put({"apiVersion": "windows.k8s.io/v1", "kind": "GMSACredentialSpec",
                        "metadata": {"name": "webapp1", "namespace": "ignored"}, "credspec": {}})
    _, doc, _ = _http(http_apiserver, "/apis/windows.k8s.io/v1/gmsacredentialspecs")
    assert doc["kind"] == "GMSACredentialSpecList"
    assert doc["items"][0]["kind"] == "GMSACredentialSpec" and "namespace" not in doc["items"][0]["metadata"]


def test_table_when_asked(http_apiserver) -> None:
    http_apiserver.put(_pod("a", "apps"))
    _, table, _ = _http(http_apiserver, "/api/v1/namespaces/apps/pods",
                        accept="application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]][:1] == ["Name"]
    assert table["rows"][0]["cells"][0] == "a"
    assert table["rows"][0]["object"]["metadata"]["namespace"] == "apps"


# -- auth and RBAC -------------------------------------------------------------------------------

def test_token_auth_401_for_wrong_and_expired_tokens(tmp_path: Path) -> None:
    with ApiServer(token="good", workdir=tmp_path) as server:
        handle = type("H", (), {"url": server.url})()
        assert _http(handle, "/api/v1/nodes", token="good")[0] == 200
        status, body, _ = _http(handle, "/api/v1/nodes", token="bad")
        assert (status, body["kind"], body["reason"]) == (401, "Status", "Unauthorized")
        assert _http(handle, "/api/v1/nodes")[0] == 401
        server.auth.expire_token("good")
        assert _http(handle, "/api/v1/nodes", token="good")[0] == 401


def test_rbac_denial_names_resource_verb_and_scope(http_apiserver) -> None:
    http_apiserver.auth.deny("list", "events", namespace="apps")
    status, body, _ = _http(http_apiserver, "/api/v1/namespaces/apps/events")
    assert (status, body["reason"]) == (403, "Forbidden")
    assert body["message"] == ('events is forbidden: User "system:anonymous-admin" cannot list resource "events" '
                               'in API group "" in the namespace "apps"')
    assert body["details"] == {"group": "", "kind": "events"}
    assert _http(http_apiserver, "/api/v1/namespaces/other/events")[0] == 200
    http_apiserver.auth.deny("get", "deployments")
    status, body, _ = _http(http_apiserver, "/apis/apps/v1/namespaces/apps/deployments/web")
    assert status == 403
    assert body["message"].startswith('deployments.apps "web" is forbidden: User')


# -- faults --------------------------------------------------------------------------------------

def test_fault_status_with_count_then_recovers(http_apiserver) -> None:
    rule = http_apiserver.faults.status(r"^/api/v1/nodes", 429, count=2, retry_after=3)
    first = _http(http_apiserver, "/api/v1/nodes")
    assert first[0] == 429 and first[2]["Retry-After"] == "3" and first[1]["reason"] == "TooManyRequests"
    assert _http(http_apiserver, "/api/v1/nodes")[0] == 429
    assert _http(http_apiserver, "/api/v1/nodes")[0] == 200
    assert rule.hits == 2
    http_apiserver.faults.status("/pods", 503, methods="GET")
    assert _http(http_apiserver, "/api/v1/pods")[0] == 503
    assert _http(http_apiserver, "/api/v1/nodes")[0] == 200


def test_fault_drop_and_truncate_break_the_response(http_apiserver) -> None:
    import http.client

    http_apiserver.put(*[_pod(f"p{i}", "apps") for i in range(20)])
    http_apiserver.faults.drop("^/api/v1/pods", count=1)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError, urllib.error.URLError)):
        urllib.request.urlopen(http_apiserver.url + "/api/v1/pods", timeout=5).read()
    http_apiserver.faults.truncate("^/api/v1/pods", count=1)
    with pytest.raises(http.client.IncompleteRead):
        urllib.request.urlopen(http_apiserver.url + "/api/v1/pods", timeout=5).read()
    assert _http(http_apiserver, "/api/v1/pods")[0] == 200


def test_fault_delay(http_apiserver) -> None:
    import time

    http_apiserver.faults.delay("^/version", 0.3, count=1)
    start = time.monotonic()
    assert _http(http_apiserver, "/version")[0] == 200
    assert time.monotonic() - start >= 0.3


def test_fault_spec_parsing() -> None:
    from tests.apiserver.faults import FaultInjector

    assert FaultInjector.parse_spec("status:429:count=2@^/api/v1/pods") == {
        "path": "^/api/v1/pods", "action": "status", "status": 429, "count": 2}
    assert FaultInjector.parse_spec("delay:1.5@/apis")["delay"] == 1.5
    with pytest.raises(ValueError):
        FaultInjector.parse_spec("status:429")


# -- seeding and the synthetic cluster -------------------------------------------------------------

def test_seed_directory_with_multi_documents_and_lists(tmp_path: Path, http_apiserver) -> None:
    (tmp_path / "a.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p1}}\n"
        "- {apiVersion: apps/v1, kind: DaemonSet, metadata: {name: ds, namespace: kube-system}}\n")
    (tmp_path / "b.json").write_text(json.dumps({"apiVersion": "example.com/v1", "kind": "Widget",
                                                 "metadata": {"name": "w"}}))
    from tests.apiserver.seed import seed

    loaded, skipped = seed(http_apiserver.store, tmp_path)
    assert loaded == 3 and skipped == ["example.com/v1/Widget w: kind not served"]
    _, pod, _ = _http(http_apiserver, "/api/v1/namespaces/default/pods/p1")
    assert pod["metadata"]["namespace"] == "default" and pod["metadata"]["resourceVersion"]
    _, namespaces, _ = _http(http_apiserver, "/api/v1/namespaces")
    assert [n["metadata"]["name"] for n in namespaces["items"]] == ["default", "kube-system"]


def test_seed_from_the_shared_corpus(http_apiserver) -> None:
    from tests.apiserver.seed import seed

    loaded, _ = seed(http_apiserver.store, require_corpus())
    assert loaded > 0


def test_synthetic_cluster_is_deterministic_and_shaped_like_a_cluster() -> None:
    first, second = Store(), Store()
    counts = generate(first, SyntheticSpec(nodes=40, windows_share=0.25, pods=400, seed=7))
    generate(second, SyntheticSpec(nodes=40, windows_share=0.25, pods=400, seed=7))
    from tests.apiserver.resources import BY_KEY

    pods, nodes = BY_KEY[("", "v1", "pods")], BY_KEY[("", "v1", "nodes")]
    assert counts["Node"] == 40 and counts["Pod"] == 400 and counts["Service"] > 0 and counts["Event"] == 8
    assert [e.raw for e in first.list(pods).entries] == [e.raw for e in second.list(pods).entries]
    windows = [n for n in first.objects(nodes) if n["metadata"]["labels"]["kubernetes.io/os"] == "windows"]
    assert len(windows) == 10
    assert all(n["status"]["nodeInfo"]["operatingSystem"] == "windows" for n in windows)
    assert all(n["metadata"]["labels"]["node.kubernetes.io/windows-build"].startswith("10.0.") for n in windows)
    win_pods = [p for p in first.objects(pods)
                if any(word in p["spec"]["containers"][0]["image"] for word in ("windows", "dotnet", "powershell"))]
    win_nodes = {n["metadata"]["name"] for n in windows}
    assert win_pods and all(p["spec"]["nodeName"] in win_nodes for p in win_pods)
    assert all(p["metadata"]["ownerReferences"] for p in first.objects(pods))


def test_module_command_serves_a_synthetic_cluster(tmp_path: Path, kubectl) -> None:
    from tests.apiserver.process import spawn

    with spawn("--synthetic", "nodes=10,pods=60,windows=0.5", workdir=tmp_path) as proc:
        assert proc.counts["Pod"] == 60
        env = {"KUBECONFIG": str(proc.kubeconfig), "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path),
               "PATH": "/usr/bin:/bin"}
        result = subprocess.run([kubectl, "get", "nodes", "-l", "kubernetes.io/os=windows", "-o", "name"],
                                env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert len(result.stdout.split()) == 5


def test_a_valid_client_certificate_wins_over_a_bad_token(apiserver) -> None:
    from kubectl_win.kube import KubeFlags, connect

    apiserver.server.write_kubeconfig(apiserver.kubeconfig, user_entry={
        "token": "bad-token", "client-certificate": str(apiserver.server.pki.client_cert),
        "client-key": str(apiserver.server.pki.client_key)})
    assert connect(KubeFlags(kubeconfig=str(apiserver.kubeconfig))).server_version()["major"] == "1"


def test_pod_log_subresource(http_apiserver) -> None:
    pod = _pod("web", "apps")
    pod["metadata"]["annotations"] = {"test.kubectl-win.io/log": "listening on :80\n"}
    http_apiserver.put(pod)
    with urllib.request.urlopen(http_apiserver.url + "/api/v1/namespaces/apps/pods/web/log", timeout=5) as resp:
        assert resp.read() == b"listening on :80\n"


# -- watch ---------------------------------------------------------------------------------------

def test_watch_streams_initial_state_then_changes(http_apiserver) -> None:
    http_apiserver.put(_pod("a", "apps", app="web"), _pod("z", "other", app="web"))
    url = http_apiserver.url + "/api/v1/namespaces/apps/pods?watch=true&labelSelector=app%3Dweb&timeoutSeconds=600"
    with urllib.request.urlopen(url, timeout=HANG_GUARD) as resp:
        events = [json.loads(resp.readline())]  # the initial state is listed: the changes come after it
        http_apiserver.put(_pod("b", "apps", app="web"), _pod("c", "apps", app="db"), _pod("y", "other", app="web"))
        http_apiserver.store.delete(http_apiserver.store.resource("", "v1", "pods"), "apps", "a")
        events += [json.loads(resp.readline()) for _ in range(2)]  # c or y, wrongly sent, would come first
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "a"), ("ADDED", "b"), ("DELETED", "a")]
    assert events[0]["object"]["kind"] == "Pod"


def test_kubectl_wait_sees_a_pod_become_ready(apiserver, kubectl) -> None:
    import threading
    import time

    pod = _pod("web", "apps", phase="Pending")
    apiserver.put(pod)

    def become_ready() -> None:
        time.sleep(0.5)
        apiserver.put({**pod, "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})

    threading.Thread(target=become_ready).start()
    result = _kubectl(apiserver, kubectl, "wait", "--for=condition=Ready", "pod/web", "-n", "apps", "--timeout=20s")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "pod/web condition met"
