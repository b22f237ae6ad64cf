"""In-cluster configuration as client-go reads it, against the test API server: the service account's
token, CA and namespace; the fallback order of clientcmd (--kubeconfig > KUBECONFIG > ~/.kube/config >
in-cluster); a token file the kubelet rotates while the process keeps running."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kubectl_win.kube import Forbidden, KubeconfigError, KubeFlags, NoKubeconfig, connect
from kubectl_win.kube.incluster import join_host_port
from tests.support.cli import run_cli


def _rotate(folder: Path, name: str, text: str) -> None:
    """The kubelet's atomic writer: the files live in a timestamped folder, `..data` is a symlink to it
    swapped with a rename, and `token` is a symlink to `..data/token`."""
    target = folder / f"..{name}"
    target.mkdir()
    (target / "token").write_text(text)
    link = folder / "..data_tmp"
    link.symlink_to(target.name)
    os.replace(link, folder / "..data")
    if not (folder / "token").is_symlink():
        (folder / "token").symlink_to("..data/token")


@pytest.fixture
def pod(apiserver, tmp_path, monkeypatch):
    """The environment of a pod: the service's host and port, the service account files, no kubeconfig."""
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    _rotate(sa, "first", apiserver.token + "\n")
    (sa / "ca.crt").write_bytes(apiserver.server.pki.ca_cert.read_bytes())
    (sa / "namespace").write_text("monitoring\n")
    monkeypatch.setenv("KUBECTL_WIN_TEST_INCLUSTER_DIR", str(sa))
    monkeypatch.delenv("KUBECTL_WIN_TEST_INCLUSTER_TOKEN_PERIOD", raising=False)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(apiserver.server.port))
    return sa


def test_in_cluster_config_when_there_is_no_kubeconfig(apiserver, pod) -> None:
    cluster = connect(KubeFlags())
    assert (cluster.server, cluster.namespace, cluster.config.source) == (apiserver.url, "monitoring",
                                                                          "in-cluster config")
    assert cluster.server_version()["major"] == "1"
    assert cluster.config.authorization() == f"Bearer {apiserver.token}"  # the file's newline dropped


def test_namespace_is_the_flag_then_pod_namespace_then_the_file(pod, monkeypatch) -> None:
    monkeypatch.setenv("POD_NAMESPACE", "from-downward-api")
    assert connect(KubeFlags()).namespace == "from-downward-api"
    assert connect(KubeFlags(namespace="team")).namespace == "team"
    monkeypatch.delenv("POD_NAMESPACE")
    (pod / "namespace").unlink()
    assert connect(KubeFlags()).namespace == "default"


def test_doctor_runs_in_the_pod_without_a_kubeconfig(apiserver, pod) -> None:
    apiserver.put({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "win-1", "labels": {
        "kubernetes.io/os": "windows"}}, "status": {"nodeInfo": {"osImage": "Windows Server 2022 Datacenter",
                                                                 "kernelVersion": "10.0.20348.2227"}}})
    result = run_cli("doctor", "nodes", "-o", "json")
    assert result.exit_code in (0, 1), result.stderr
    assert [n["name"] for n in result.json["nodes"]] == ["win-1"]


def _kubeconfig_for(apiserver, path: Path, server: str) -> Path:
    apiserver.server.write_kubeconfig(path)
    text = path.read_text().replace(apiserver.url, server)
    path.write_text(text)
    return path


@pytest.mark.parametrize("where", ["flag", "KUBECONFIG", "home"])
def test_a_kubeconfig_wins_over_the_in_cluster_config(apiserver, pod, tmp_path, monkeypatch, where) -> None:
    """clientcmd's order: a kubeconfig found any of the usual ways is used, even inside a pod."""
    other = "https://127.0.0.1:1"
    path = tmp_path / "home" / ".kube" / "config" if where == "home" else tmp_path / "kc"
    path.parent.mkdir(parents=True, exist_ok=True)
    _kubeconfig_for(apiserver, path, other)
    if where == "KUBECONFIG":
        monkeypatch.setenv("KUBECONFIG", str(path))
    cluster = connect(KubeFlags(kubeconfig=str(path) if where == "flag" else None))
    assert cluster.server == other and cluster.config.source == str(path)


def test_kubeconfig_files_that_do_not_exist_or_hold_nothing_fall_to_in_cluster(apiserver, pod, tmp_path,
                                                                               monkeypatch) -> None:
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(tmp_path / "gone-1"), str(tmp_path / "gone-2")]))
    assert connect(KubeFlags()).config.source == "in-cluster config"
    empty = tmp_path / "empty"
    empty.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    monkeypatch.setenv("KUBECONFIG", str(empty))
    assert connect(KubeFlags()).server == apiserver.url


def test_an_explicit_kubeconfig_that_does_not_exist_is_an_error_even_in_a_pod(pod, tmp_path) -> None:
    with pytest.raises(KubeconfigError, match="does not exist"):
        connect(KubeFlags(kubeconfig=str(tmp_path / "missing")))


@pytest.mark.parametrize("missing", ["KUBERNETES_SERVICE_PORT", "KUBERNETES_SERVICE_HOST", "service account"])
def test_not_in_a_cluster_without_host_port_and_service_account(pod, monkeypatch, missing) -> None:
    if missing == "service account":  # automountServiceAccountToken: false
        import shutil

        shutil.rmtree(pod)
    else:
        monkeypatch.setenv(missing, "")
    with pytest.raises(NoKubeconfig, match="no kubeconfig found"):
        connect(KubeFlags())
    result = run_cli("doctor", "nodes")
    assert result.exit_code == 3 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_a_deleted_token_file_in_a_pod_is_named_not_taken_for_no_cluster(pod) -> None:
    (pod / "token").unlink()
    result = run_cli("doctor", "nodes")
    assert result.exit_code == 3 and result.stderr.count("\n") == 1, result.stderr
    assert "cannot read the service account token" in result.stderr and "not running inside" not in result.stderr


def test_a_token_with_a_line_break_is_a_one_line_error(pod) -> None:
    _rotate(pod, "broken", "first-half\nsecond-half\n")
    result = run_cli("doctor", "nodes")
    assert result.exit_code == 3 and result.stderr.count("\n") == 1, result.stderr
    assert "line break" in result.stderr and "internal error" not in result.stderr


def test_an_empty_token_file_is_a_one_line_error(pod) -> None:
    _rotate(pod, "empty", "\n")
    result = run_cli("doctor", "nodes")
    assert result.exit_code == 3 and "service account token" in result.stderr and "is empty" in result.stderr


def test_without_ca_crt_the_system_roots_are_used(apiserver, pod) -> None:
    """As client-go: the server's certificate (signed by the test CA) is then not trusted: exit 3, one line."""
    (pod / "ca.crt").unlink()
    assert connect(KubeFlags()).config.ca_file is None
    result = run_cli("doctor", "nodes")
    assert result.exit_code == 3 and result.stderr.count("\n") == 1, result.stderr


def test_a_rotated_token_is_read_again_by_a_running_process(apiserver, pod, monkeypatch) -> None:
    """With a re-read on every request (period 0): each request after the kubelet swaps the file carries the
    new token, and a file caught half-way (gone) keeps the last token instead of failing."""
    monkeypatch.setenv("KUBECTL_WIN_TEST_INCLUSTER_TOKEN_PERIOD", "0")
    apiserver.auth.add_token("old-token", user="sa-old")
    apiserver.auth.add_token("new-token", user="sa-new")
    apiserver.auth.deny("list", "pods", user="sa-old")  # tells which token a request carried
    _rotate(pod, "old", "old-token")
    cluster = connect(KubeFlags())
    with pytest.raises(Forbidden, match='User "sa-old"'):
        list(cluster.list("pods"))
    _rotate(pod, "new", "new-token\n")
    assert list(cluster.list("pods")) == []
    (pod / "..data").unlink()
    assert list(cluster.list("pods")) == []  # the token file is gone: the last token is kept


def test_an_expired_token_is_read_again_at_once_after_a_401(apiserver, pod) -> None:
    """Within the minute between two re-reads, a 401 re-reads the file and retries once."""
    apiserver.auth.add_token("first-token", user="sa")
    apiserver.auth.add_token("second-token", user="sa")
    _rotate(pod, "one", "first-token")
    cluster = connect(KubeFlags())
    assert cluster.get("/api/v1/nodes")["items"] == []
    _rotate(pod, "two", "second-token")
    apiserver.auth.expire_token("first-token")
    assert cluster.get("/api/v1/nodes")["items"] == []
    assert cluster.config.authorization() == "Bearer second-token"


def test_ipv6_service_hosts_are_bracketed() -> None:
    assert join_host_port("fd00::1", "443") == "[fd00::1]:443"
    assert join_host_port("10.96.0.1", "443") == "10.96.0.1:443"


@pytest.mark.parametrize("gap", ["missing", "empty"])
def test_a_token_file_briefly_missing_or_empty_keeps_the_last_token_for_the_next_scan(pod, monkeypatch, caplog,
                                                                                      gap) -> None:
    monkeypatch.setenv("KUBECTL_WIN_TEST_INCLUSTER_TOKEN_PERIOD", "0")  # re-read on every request
    first = connect(KubeFlags())
    assert first.server_version()["major"] == "1"
    if gap == "missing":
        (pod / "..data").unlink()  # the kubelet's swap caught half-way: `token` dangles
    else:
        _rotate(pod, "gap", "")
    again = connect(KubeFlags())  # the next scan, as serve starts it
    assert again.config.source == "in-cluster config"
    assert again.server_version()["major"] == "1"
    assert again.config.authorization() == first.config.authorization()
    assert any("the last good token is kept" in r.getMessage() for r in caplog.records), caplog.records


def test_metrics_read_in_cluster_leave_the_cluster_label_to_prometheus(apiserver, pod) -> None:
    """In a pod the scraping Prometheus names the cluster (a `cluster` external or target label); ours would
    clash with it, so it is left out unless --cluster-label asks for one."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    def labels(*argv: str) -> set[tuple[str, ...]]:
        result = run_cli("doctor", "-o", "openmetrics", *argv)
        assert result.exit_code in (0, 1), result.stderr
        return {tuple(sorted(s.labels.items())) for f in text_string_to_metric_families(result.stdout)
                for s in f.samples if s.name == "kubectl_win_scan_success"}

    assert labels() == {()}
    assert labels("--cluster-label", "k8s_cluster") == {(("k8s_cluster", "in-cluster"),)}
