"""kubeconfig handling like kubectl's: files, KUBECONFIG merging, contexts, overrides, exec plugins,
in-cluster config, and one-line errors for bad input. Requests go to the test API server."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from kubectl_win.errors import ClusterUnreachable
from kubectl_win.kube import KubeconfigError, KubeFlags, NoKubeconfig, connect


def _config(clusters: dict, users: dict, contexts: dict, current: str | None = None) -> str:
    doc = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": n, "cluster": c} for n, c in clusters.items()],
           "users": [{"name": n, "user": u} for n, u in users.items()],
           "contexts": [{"name": n, "context": c} for n, c in contexts.items()]}
    if current:
        doc["current-context"] = current
    return yaml.safe_dump(doc)


def _cluster_entry(handle) -> dict:
    return {"server": handle.url, "certificate-authority": str(handle.server.pki.ca_cert)}


def test_kubeconfig_env_with_several_files_merges_first_wins(apiserver, tmp_path, monkeypatch) -> None:
    good = _cluster_entry(apiserver)
    first = tmp_path / "first.yaml"
    second = tmp_path / "second.yaml"
    first.write_text(_config({"test": good}, {"me": {"token": apiserver.token}},
                             {"work": {"cluster": "test", "user": "me", "namespace": "team-a"}}, current="work"))
    # The second file redefines `me` with a bad token (ignored: first wins) and adds a context.
    second.write_text(_config({"other": {"server": "https://127.0.0.1:1"}}, {"me": {"token": "wrong"}},
                              {"play": {"cluster": "test", "user": "me", "namespace": "team-b"}}, current="play"))
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(first), str(tmp_path / "missing.yaml"), str(second)]))
    cluster = connect(KubeFlags())
    assert (cluster.namespace, cluster.config.context) == ("team-a", "work")
    assert cluster.server_version()["gitVersion"] == "v1.32.0"
    other = connect(KubeFlags(context="play"))
    assert other.namespace == "team-b"
    assert other.server_version()["major"] == "1"  # the context from file 2 uses user `me` from file 1


def test_cluster_and_user_flags_override_the_context(apiserver, tmp_path) -> None:
    path = tmp_path / "kc"
    path.write_text(_config({"dead": {"server": "https://127.0.0.1:1"}, "test": _cluster_entry(apiserver)},
                            {"nobody": {"token": "wrong"}, "me": {"token": apiserver.token}},
                            {"ctx": {"cluster": "dead", "user": "nobody", "namespace": "ns1"}}, current="ctx"))
    cluster = connect(KubeFlags(kubeconfig=str(path), cluster="test", user="me"))
    assert cluster.server == apiserver.url and cluster.namespace == "ns1"
    assert cluster.server_version()["minor"] == "32"


def test_relative_certificate_paths_resolve_against_their_file(apiserver, tmp_path, monkeypatch) -> None:
    pki = apiserver.server.pki
    (tmp_path / "certs").mkdir()
    for src in (pki.ca_cert, pki.client_cert, pki.client_key):
        (tmp_path / "certs" / src.name).write_bytes(src.read_bytes())
    path = tmp_path / "kc"
    path.write_text(_config({"test": {"server": apiserver.url, "certificate-authority": "certs/ca.crt"}},
                            {"me": {"client-certificate": "certs/client.crt", "client-key": "certs/client.key"}},
                            {"ctx": {"cluster": "test", "user": "me"}}, current="ctx"))
    apiserver.put({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert [n["metadata"]["name"] for n in connect(KubeFlags(kubeconfig=str(path))).list("nodes")] == ["n1"]


def _exec_plugin(tmp_path: Path, tokens: list[str], expiry: str | None = None) -> dict:
    """A credential plugin that prints the next token of `tokens` on each run and counts runs."""
    script = tmp_path / "cred-plugin.py"
    state = tmp_path / "runs"
    script.write_text(textwrap.dedent(f"""\
        import json, pathlib
        state = pathlib.Path({str(state)!r})
        runs = int(state.read_text()) if state.exists() else 0
        state.write_text(str(runs + 1))
        tokens = {tokens!r}
        status = {{"token": tokens[min(runs, len(tokens) - 1)]}}
        if {expiry!r}:
            status["expirationTimestamp"] = {expiry!r}
        print(json.dumps({{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                          "status": status}}))
        """))
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": [str(script)], "interactiveMode": "Never"}}


def test_exec_credential_plugin_supplies_the_token(apiserver, tmp_path) -> None:
    path = tmp_path / "kc"
    path.write_text(_config({"test": _cluster_entry(apiserver)}, {"me": _exec_plugin(tmp_path, [apiserver.token])},
                            {"ctx": {"cluster": "test", "user": "me"}}, current="ctx"))
    cluster = connect(KubeFlags(kubeconfig=str(path)))
    assert cluster.server_version()["gitVersion"] == "v1.32.0"
    assert list(cluster.list("nodes")) == []
    assert (tmp_path / "runs").read_text() == "1"  # not re-run while the token is valid


def test_exec_plugin_is_rerun_after_a_401(apiserver, tmp_path) -> None:
    path = tmp_path / "kc"
    user = _exec_plugin(tmp_path, ["stale-token", apiserver.token])
    path.write_text(_config({"test": _cluster_entry(apiserver)}, {"me": user},
                            {"ctx": {"cluster": "test", "user": "me"}}, current="ctx"))
    assert connect(KubeFlags(kubeconfig=str(path))).server_version()["major"] == "1"
    assert (tmp_path / "runs").read_text() == "2"


def test_expired_exec_credential_is_refreshed_before_the_request(apiserver, tmp_path) -> None:
    path = tmp_path / "kc"
    user = _exec_plugin(tmp_path, [apiserver.token], expiry="2000-01-01T00:00:00Z")
    path.write_text(_config({"test": _cluster_entry(apiserver)}, {"me": user},
                            {"ctx": {"cluster": "test", "user": "me"}}, current="ctx"))
    cluster = connect(KubeFlags(kubeconfig=str(path)))
    cluster.server_version()
    list(cluster.list("nodes"))
    assert int((tmp_path / "runs").read_text()) >= 3  # loaded, then refreshed before each request


def test_no_kubeconfig_and_not_in_a_cluster(tmp_path, monkeypatch) -> None:
    """In-cluster configuration itself: tests/test_kube_incluster.py."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(NoKubeconfig) as err:
        connect(KubeFlags())
    assert isinstance(err.value, ClusterUnreachable) and err.value.exit_code == 3
    assert "no kubeconfig found" in str(err.value)


@pytest.mark.parametrize(("content", "flags", "message"), [
    (None, {}, "does not exist"),
    ("clusters: [\n", {}, "is not valid YAML at line"),
    ("- just\n- a list\n", {}, "is not a mapping"),
    ("apiVersion: v1\nkind: Config\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n", {},
     "no current context in"),
    ("apiVersion: v1\nkind: Config\ncurrent-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
     "clusters: [{name: c, cluster: {server: 'https://x:1'}}]\n", {"context": "nope"},
     'context "nope" not found in'),
    ("apiVersion: v1\nkind: Config\ncurrent-context: a\ncontexts: [{name: a, context: {cluster: gone, user: u}}]\n",
     {}, 'cluster "gone" of context "a" not found'),
    ("apiVersion: v1\nkind: Config\ncurrent-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
     "clusters: [{name: c, cluster: {server: 'https://x:1'}}]\n", {"user": "ghost"}, 'user "ghost" not found'),
])
def test_bad_kubeconfig_is_a_one_line_usage_error(tmp_path, content, flags, message) -> None:
    path = tmp_path / "kc"
    if content is not None:
        path.write_text(content)
    with pytest.raises(KubeconfigError) as err:
        connect(KubeFlags(kubeconfig=str(path), **flags))
    assert err.value.exit_code == 2
    assert message in str(err.value) and "\n" not in str(err.value)


def test_kubeflags_come_from_the_connection_flags_of_any_command() -> None:
    from kubectl_win.cli import parse_args

    _, options = parse_args(["explain", "pods", "-n", "apps", "-A", "-l", "app=web", "--request-timeout", "5s",
                             "--context", "eu"])
    flags = options.kube_flags()
    assert (flags.namespace, flags.all_namespaces, flags.selector, flags.request_timeout, flags.context) == (
        "apps", True, "app=web", 5.0, "eu")
    _, options = parse_args(["logs", "node-1", "--kubeconfig", "/x"])  # no -A or -l: their defaults
    bare = options.kube_flags()
    assert (bare.kubeconfig, bare.namespace, bare.all_namespaces, bare.selector, bare.request_timeout) == (
        "/x", None, False, None, 30.0)


def test_resource_names_resolve_like_kubectl() -> None:
    from kubectl_win.errors import UsageError
    from kubectl_win.kube import resolve

    for alias in ("po", "pod", "pods", "Pod"):
        assert resolve(alias).plural == "pods"
    assert resolve("deploy").api_version == "apps/v1"
    assert resolve("deployments.apps").kind == "Deployment"
    assert resolve("gmsa").collection_path(None) == "/apis/windows.k8s.io/v1/gmsacredentialspecs"
    assert resolve("cj").collection_path("x") == "/apis/batch/v1/namespaces/x/cronjobs"
    assert resolve("no").collection_path("ignored") == "/api/v1/nodes"
    with pytest.raises(UsageError):
        resolve("widgets")


def test_failing_exec_plugin_is_one_line_naming_the_user(apiserver, tmp_path, capfd) -> None:
    from kubectl_win.kube import CredentialPluginError

    script = tmp_path / "failing-plugin.py"
    script.write_text("import sys\nsys.stderr.write('login required: run az login\\n')\nsys.exit(1)\n")
    path = tmp_path / "kc"
    path.write_text(_config({"test": _cluster_entry(apiserver)},
                            {"me": {"exec": {"apiVersion": "client.authentication.k8s.io/v1",
                                             "command": sys.executable, "args": [str(script)],
                                             "interactiveMode": "Never"}}},
                            {"ctx": {"cluster": "test", "user": "me"}}, current="ctx"))
    with pytest.raises(CredentialPluginError) as err:
        connect(KubeFlags(kubeconfig=str(path)))
    assert str(err.value) == ('the credential plugin of user "me" failed: exec: process returned 1. '
                              "login required: run az login")
    assert err.value.exit_code == 3
    assert capfd.readouterr().err == ""  # nothing leaked through the logging module
