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
            "spec": {"nodeName": node,
                     "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022"}]},
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


@pytest.mark.parametrize("name", ["../../nodes/win-1", "a?watch=true", "x#y", "100%", "..", "sp ace"])
def test_names_and_namespaces_are_one_escaped_path_segment(apiserver, name: str) -> None:
    """A name with /, ?, # or % must not reach another resource, a query or a fragment."""
    apiserver.put(_node("win-1"))
    cluster = connect(KubeFlags(kubeconfig=str(apiserver.kubeconfig)))
    with pytest.raises(NotFound):
        cluster.get_object("pods", name, "default")
    with pytest.raises(NotFound):
        cluster.get_object("pods", "web", name)
    method, path = apiserver.server.requests[-1]
    assert path.startswith("/api/v1/namespaces/") and path.count("/") == 6 and "?" not in path


# -- paging and selectors ------------------------------------------------------------------------

def _cluster(handle, **flags):
    cluster = connect(KubeFlags(kubeconfig=str(handle.kubeconfig), **flags))
    cluster.backoff = 0.01  # keep retry tests fast; Retry-After still wins when the server sends it
    return cluster


def test_list_follows_continue_tokens_and_list_pages_yields_raw_pages(apiserver) -> None:
    apiserver.put(*[_pod(f"p{i:03d}", f"ns{i % 4}") for i in range(23)])
    cluster = _cluster(apiserver)
    pages = list(cluster.list_pages("pods", page_size=10))
    assert [len(p["items"]) for p in pages] == [10, 10, 3]
    assert {p["kind"] for p in pages} == {"PodList"}
    assert all(p["metadata"]["resourceVersion"] for p in pages)
    names = [p["metadata"]["name"] for p in cluster.list("po", page_size=7)]
    assert sorted(names) == [f"p{i:03d}" for i in range(23)]
    limits = [q for m, q in apiserver.server.requests if q.startswith("/api/v1/pods?")]
    assert len(limits) == 3 + 4 and all("limit=" in q for q in limits)


def test_list_namespace_scope_and_selectors(apiserver) -> None:
    apiserver.put(_pod("a", "apps", node="win-1", app="web"), _pod("b", "apps", node="win-2", app="web"),
                  _pod("c", "other", node="win-1", app="web"), _node("win-1"), _node("lin-1", "linux"))
    cluster = _cluster(apiserver)
    assert [p["metadata"]["name"] for p in cluster.list("pods", "apps")] == ["a", "b"]
    assert [p["metadata"]["name"] for p in cluster.list("pods", None, field_selector="spec.nodeName=win-1")] == \
        ["a", "c"]
    assert [p["metadata"]["name"] for p in cluster.list("pods", "apps", label_selector="app=web",
                                                        field_selector="spec.nodeName=win-2")] == ["b"]
    # A namespace on a cluster-scoped resource is ignored, like kubectl does.
    assert [n["metadata"]["name"] for n in cluster.list("nodes", "apps", label_selector="kubernetes.io/os=windows")] \
        == ["win-1"]


def test_namespace_comes_from_flag_then_context_then_default(apiserver) -> None:
    apiserver.server.write_kubeconfig(apiserver.kubeconfig, namespace="from-context")
    assert _cluster(apiserver).namespace == "from-context"
    assert _cluster(apiserver, namespace="from-flag").namespace == "from-flag"
    assert _cluster(apiserver, all_namespaces=True).list_namespace is None
    assert _cluster(apiserver).list_namespace == "from-context"


# -- retries and faults --------------------------------------------------------------------------

def test_retries_429_honouring_retry_after_then_succeeds(apiserver) -> None:
    import time

    apiserver.put(_node("win-1"))
    rule = apiserver.faults.status("^/api/v1/nodes", 429, count=2, retry_after=1)
    start = time.monotonic()
    assert [n["metadata"]["name"] for n in _cluster(apiserver).list("nodes")] == ["win-1"]
    assert rule.hits == 2
    assert time.monotonic() - start >= 2.0  # two Retry-After: 1 waits, not the 10 ms backoff


@pytest.mark.parametrize("code", [500, 503])
def test_retries_5xx_then_succeeds(apiserver, code: int) -> None:
    apiserver.put(_node("win-1"))
    rule = apiserver.faults.status("^/api/v1/nodes", code, count=3)
    assert len(list(_cluster(apiserver).list("nodes"))) == 1
    assert rule.hits == 3


def test_retries_are_bounded_then_a_one_line_error(apiserver) -> None:
    from kubectl_win.kube import ApiError

    rule = apiserver.faults.status("^/api/v1/nodes", 500)
    with pytest.raises(ApiError) as err:
        list(_cluster(apiserver).list("nodes"))
    assert rule.hits == 4
    assert err.value.exit_code == 3 and err.value.status == 500
    assert str(err.value).startswith("the server kept answering 500 InternalError for nodes after 4 attempts")
    assert "\n" not in str(err.value)


def test_dropped_connection_and_truncated_body_are_retried(apiserver) -> None:
    apiserver.put(*[_pod(f"p{i}", "apps") for i in range(30)])
    drop = apiserver.faults.drop("^/api/v1/pods", count=1)
    truncate = apiserver.faults.truncate("^/api/v1/pods", count=1)
    assert len(list(_cluster(apiserver).list("pods"))) == 30
    assert (drop.hits, truncate.hits) == (1, 1)


def test_connection_that_keeps_dropping_is_unreachable(apiserver) -> None:
    from kubectl_win.errors import ClusterUnreachable

    apiserver.faults.drop("^/api/v1/nodes")
    with pytest.raises(ClusterUnreachable) as err:
        list(_cluster(apiserver).list("nodes"))
    assert err.value.exit_code == 3
    assert "kept dropping (4 attempts)" in str(err.value) and apiserver.url in str(err.value)


def test_request_timeout(apiserver) -> None:
    from kubectl_win.errors import ClusterUnreachable

    apiserver.faults.delay("^/version", 2.0, count=1)
    with pytest.raises(ClusterUnreachable) as err:
        _cluster(apiserver, request_timeout=0.3).server_version()
    assert str(err.value) == f"{apiserver.url} did not answer within 0.3s (--request-timeout)"


# -- authentication and authorisation ------------------------------------------------------------

def test_wrong_or_expired_token_is_unauthorized_without_leaking_it(apiserver) -> None:
    from kubectl_win.kube import Unauthorized

    apiserver.server.write_kubeconfig(apiserver.kubeconfig, token="s3cr3t-wrong-token")
    with pytest.raises(Unauthorized) as err:
        _cluster(apiserver).server_version()
    assert str(err.value) == f"the server rejected the credentials (expired token?): {apiserver.url}"
    assert err.value.exit_code == 3
    apiserver.server.write_kubeconfig(apiserver.kubeconfig)
    apiserver.auth.expire_token(apiserver.token)
    with pytest.raises(Unauthorized) as err:
        _cluster(apiserver).server_version()
    assert apiserver.token not in str(err.value) and apiserver.token not in repr(err.value)


def test_forbidden_per_resource_lets_callers_skip_and_go_on(apiserver) -> None:
    from kubectl_win.kube import Forbidden

    apiserver.put(_node("win-1"), _pod("a", "apps"))
    apiserver.auth.deny("list", "events")
    apiserver.auth.deny("list", "pods", namespace="kube-system")
    cluster = _cluster(apiserver)
    read, skipped = {}, {}
    for resource, namespace in (("nodes", None), ("events", None), ("pods", "kube-system"), ("pods", "apps")):
        try:
            read[(resource, namespace)] = len(list(cluster.list(resource, namespace)))
        except Forbidden as exc:
            skipped[(resource, namespace)] = (exc.resource, exc.verb, exc.namespace, str(exc))
    assert read == {("nodes", None): 1, ("pods", "apps"): 1}
    assert skipped[("events", None)] == (
        "events", "list", None,
        'events is forbidden: User "admin" cannot list resource "events" in API group "" at the cluster scope')
    assert skipped[("pods", "kube-system")][:3] == ("pods", "list", "kube-system")


def test_client_certificate_over_https(apiserver) -> None:
    apiserver.put(_node("win-1"))
    apiserver.server.write_kubeconfig(apiserver.kubeconfig, client_cert=True)
    assert [n["metadata"]["name"] for n in _cluster(apiserver).list("nodes")] == ["win-1"]
    # Without a certificate (or token) the same server answers 401.
    apiserver.server.write_kubeconfig(apiserver.kubeconfig, user_entry={})
    from kubectl_win.kube import Unauthorized

    with pytest.raises(Unauthorized):
        _cluster(apiserver).server_version()


def test_embedded_ca_data_and_wrong_ca_is_a_tls_failure(apiserver, tmp_path) -> None:
    from kubectl_win.errors import ClusterUnreachable
    from tests.apiserver import tls

    apiserver.server.write_kubeconfig(apiserver.kubeconfig, embed=True)
    assert _cluster(apiserver).server_version()["major"] == "1"
    other = tls.generate(tmp_path / "other-pki")
    apiserver.server.write_kubeconfig(apiserver.kubeconfig)
    text = apiserver.kubeconfig.read_text().replace(str(apiserver.server.pki.ca_cert), str(other.ca_cert))
    apiserver.kubeconfig.write_text(text)
    with pytest.raises(ClusterUnreachable) as err:
        _cluster(apiserver).server_version()
    assert str(err.value).startswith(f"TLS handshake with {apiserver.url} failed")


def test_websocket_args_carry_the_credentials(apiserver) -> None:
    cluster = _cluster(apiserver)
    args = cluster.websocket_args("/api/v1/namespaces/apps/pods/web/exec", [("command", "cmd"), ("command", "/c"),
                                                                             ("stdout", "true")])
    assert args.url == (apiserver.url.replace("https://", "wss://") +
                        "/api/v1/namespaces/apps/pods/web/exec?command=cmd&command=%2Fc&stdout=true")
    assert args.headers == {"Authorization": f"Bearer {apiserver.token}"}
    assert args.sslopt["ca_certs"] == str(apiserver.server.pki.ca_cert)
    assert args.ssl_context is not None
    assert apiserver.token not in repr(args)


# -- unreachable servers -------------------------------------------------------------------------

def test_refused_connection_is_unreachable_naming_the_server(tmp_path) -> None:
    import socket

    from kubectl_win.errors import ClusterUnreachable
    from tests.apiserver import ApiServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ApiServer(workdir=tmp_path, port=port)
    kubeconfig = server.write_kubeconfig(tmp_path / "kc")  # never started
    with pytest.raises(ClusterUnreachable) as err:
        connect(KubeFlags(kubeconfig=str(kubeconfig))).server_version()
    assert str(err.value) == f"cannot connect to http://127.0.0.1:{port}: connection refused"
    assert err.value.exit_code == 3


def test_unresolvable_host_is_unreachable(tmp_path) -> None:
    from kubectl_win.errors import ClusterUnreachable

    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                          "clusters: [{name: c, cluster: {server: 'https://no-such-host.invalid:6443'}}]\n"
                          "users: [{name: u, user: {token: t}}]\n"
                          "contexts: [{name: c, context: {cluster: c, user: u}}]\n")
    with pytest.raises(ClusterUnreachable) as err:
        connect(KubeFlags(kubeconfig=str(kubeconfig), request_timeout=5)).server_version()
    assert "no-such-host.invalid" in str(err.value) and err.value.exit_code == 3


# -- what a user sees through the CLI -----------------------------------------------------------

@pytest.mark.parametrize(("kubeconfig_token", "expected"), [
    ("wrong-secret-token", "error: the server rejected the credentials (expired token?): {url}"),
    (None, "error: cannot connect to https://127.0.0.1:{dead_port}: connection refused"),
])
def test_cli_reports_access_errors_in_one_line_with_exit_3(apiserver, tmp_path, capsys, kubeconfig_token,
                                                           expected) -> None:
    import socket

    from kubectl_win.cli import main

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]
    kubeconfig = apiserver.server.write_kubeconfig(tmp_path / "kc", token=kubeconfig_token)
    if kubeconfig_token is None:
        kubeconfig.write_text(kubeconfig.read_text().replace(apiserver.url, f"https://127.0.0.1:{dead_port}"))
    code = main(["doctor", "--kubeconfig", str(kubeconfig)])
    err = capsys.readouterr().err
    assert code == 3
    assert err.splitlines() == [expected.format(url=apiserver.url, dead_port=dead_port)]
    assert "wrong-secret-token" not in err


def test_proxy_from_the_environment_like_kubectl(monkeypatch) -> None:
    from kubectl_win.kube.client import env_proxy

    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
    monkeypatch.setenv("NO_PROXY", ".internal,10.0.0.5")
    assert env_proxy("https://api.example.com:6443") == "http://proxy.corp:3128"
    assert env_proxy("https://k8s.internal:6443") is None
    assert env_proxy("https://10.0.0.5:6443") is None
    assert env_proxy("https://127.0.0.1:6443") is None  # loopback is never proxied
    assert env_proxy("http://api.example.com") is None  # HTTP_PROXY is unset


def test_a_proxy_in_the_environment_does_not_catch_the_local_test_server(apiserver, monkeypatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # nothing listens there
    assert _cluster(apiserver).server_version()["major"] == "1"
