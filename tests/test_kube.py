"""The access layer against the test API server over real HTTP(S): lists, gets, paging, selectors."""

from __future__ import annotations

import pytest

from kubectl_win.kube import KubeFlags, NotFound, connect


def _node(name: str, os_name: str = "windows", **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/os": os_name, **labels}}}


def _pod(name: str, namespace: str = "default", node: str = "win-1", phase: str = "Running", **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022"}]},
            "status": {"phase": phase}}


def test_connect_lists_and_gets_over_https_with_a_token(apiserver) -> None:
    apiserver.put(_node("win-1"), _node("lin-1", "linux"), _pod("web-1", "apps"))
    cluster = connect(KubeFlags(kubeconfig=str(apiserver.kubeconfig)))

    assert cluster.server == apiserver.url
    assert cluster.namespace == "default"
    assert cluster.server_version()["gitVersion"] == "v1.32.0"
    nodes = list(cluster.list("no"))
    assert [n["metadata"]["name"] for n in nodes] == ["lin-1", "win-1"]
    assert {(n["kind"], n["apiVersion"]) for n in nodes} == {("Node", "v1")}
    pod = cluster.get_object("po", "web-1", "apps")
    assert pod["kind"] == "Pod" and pod["spec"]["nodeName"] == "win-1"


def test_get_missing_object_raises_not_found_naming_it(apiserver) -> None:
    cluster = connect(KubeFlags(kubeconfig=str(apiserver.kubeconfig)))
    with pytest.raises(NotFound) as err:
        cluster.get_object("pods", "ghost", "apps")
    assert err.value.exit_code == 2
    assert str(err.value) == 'pods "ghost" not found in namespace "apps"'
