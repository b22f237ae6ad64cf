"""`kubectl win <TAB>` end to end: the real kubectl runs kubectl_complete-win from PATH, and live
names come from the test API server over HTTPS."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.support.completion import directive, make_bin, shell_env, values
from tests.support.waiting import HANG_GUARD


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bin(tmp_path_factory.mktemp("bin"))


def kubectl_complete(kubectl: str, bin_dir: Path, *words: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([kubectl, "__complete", "win", *words], capture_output=True, text=True,
                          env=shell_env(bin_dir, **env), timeout=60)


def completer(bin_dir: Path, *words: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bin_dir / "kubectl_complete-win"), *words], capture_output=True, text=True,
                          env=shell_env(bin_dir, **env), timeout=60)


def seed(apiserver) -> None:
    for name in ("default", "kube-system", "win-apps"):
        apiserver.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    apiserver.put({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "win-node-1", "labels": {
        "kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}}})
    apiserver.put({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "iis-0", "namespace": "win-apps"},
                   "spec": {"nodeName": "win-node-1", "containers": [{"name": "iis", "image": "iis"}]},
                   "status": {"phase": "Running"}})
    apiserver.put({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "other", "namespace": "default"},
                   "spec": {"containers": [{"name": "c", "image": "busybox"}]}})


def test_kubectl_completes_our_subcommands(kubectl, bin_dir):
    result = kubectl_complete(kubectl, bin_dir, "")
    assert result.returncode == 0
    assert {"explain", "completion", "version"} <= set(values(result.stdout))
    assert directive(result.stdout) == 4


def test_kubectl_completes_enum_values(kubectl, bin_dir):
    assert values(kubectl_complete(kubectl, bin_dir, "explain", "--fail-on", "").stdout) == [
        "error", "warning", "info", "never"]
    assert values(kubectl_complete(kubectl, bin_dir, "version", "-o", "j").stdout) == ["json"]


def test_kubectl_passes_file_completion_through(kubectl, bin_dir):
    result = kubectl_complete(kubectl, bin_dir, "explain", "-f", "")
    assert values(result.stdout) == ["yaml", "yml", "json"] and directive(result.stdout) == 8


def test_namespaces_from_the_cluster(kubectl, bin_dir, apiserver):
    seed(apiserver)
    result = kubectl_complete(kubectl, bin_dir, "explain", "-n", "", KUBECONFIG=str(apiserver.kubeconfig))
    assert values(result.stdout) == ["default", "kube-system", "win-apps"]
    result = kubectl_complete(kubectl, bin_dir, "explain", "--kubeconfig", str(apiserver.kubeconfig), "-n", "win")
    assert values(result.stdout) == ["win-apps"]


def test_pods_of_the_namespace_typed_with_their_phase(bin_dir, apiserver):
    seed(apiserver)
    result = completer(bin_dir, "port-forward", "-n", "win-apps", "pod/", KUBECONFIG=str(apiserver.kubeconfig))
    assert result.stdout.splitlines() == ["pod/iis-0\tRunning on win-node-1", ":4"]
    assert result.stderr == ""


def test_nodes_with_their_os_and_build(bin_dir, apiserver):
    seed(apiserver)
    from kubectl_win.completion.cluster_names import live_names
    from kubectl_win.completion.hints import LiveNames

    names = live_names(LiveNames("nodes", namespaced=False), {"kubeconfig": str(apiserver.kubeconfig)})
    assert names == [("win-node-1", "windows 10.0.20348")]


def test_contexts_from_the_kubeconfig(kubectl, bin_dir, apiserver):
    result = kubectl_complete(kubectl, bin_dir, "explain", "--context", "", KUBECONFIG=str(apiserver.kubeconfig))
    assert values(result.stdout) == ["test"]


def test_a_failing_cluster_gives_no_names_and_says_nothing(bin_dir, apiserver):
    apiserver.faults.status("^/api/v1/namespaces", 500)
    result = completer(bin_dir, "explain", "-n", "", KUBECONFIG=str(apiserver.kubeconfig))
    assert (result.returncode, result.stdout, result.stderr) == (0, ":4\n", "")


def test_no_kubeconfig_gives_no_names_and_says_nothing(bin_dir, tmp_path):
    result = completer(bin_dir, "explain", "-n", "", KUBECONFIG=str(tmp_path / "missing"), HOME=str(tmp_path))
    assert (result.returncode, result.stdout, result.stderr) == (0, ":4\n", "")


class Silent:
    """A cluster address that accepts a connection and never answers; it notes how long the client stayed
    before closing it: the time completion spent waiting on the cluster, not the time its process took to
    start on a busy machine."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stayed: list[float] = []
        self.closed = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:  # closed before anyone connected
            self.closed.set()
            return
        with conn:
            accepted = time.monotonic()
            try:
                while conn.recv(65536):
                    pass
            except OSError:
                pass
            self.stayed.append(time.monotonic() - accepted)
        self.closed.set()


def test_a_cluster_that_never_answers_is_given_up_on_quickly(bin_dir, tmp_path):
    silent = Silent()
    try:
        config = tmp_path / "config"
        config.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{silent.port}'}}}}]\n"
            "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\n")
        result = completer(bin_dir, "explain", "-n", "", KUBECONFIG=str(config), KUBECTL_WIN_COMPLETION_TIMEOUT="1")
    finally:
        silent.listener.close()
    assert (result.returncode, result.stdout, result.stderr) == (0, ":4\n", "")
    assert silent.closed.wait(HANG_GUARD)  # the process has ended: its connection is closed
    assert len(silent.stayed) == 1 and silent.stayed[0] < 5, f"completion waited {silent.stayed}s for a silent cluster"
