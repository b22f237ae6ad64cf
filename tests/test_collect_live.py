"""kubectl win collect against the test API server: a HostProcess pod per node, the exec returning what the
collection script would stream (a tar.gz), partial failures, a node past its time budget, Ctrl-C and SIGTERM
mid-run, a second run sweeping what a killed one left, and the bundle the user gets."""

from __future__ import annotations

import copy
import json
import os
import signal
import stat
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubectl_win.collect import script
from kubectl_win.collect.gather import APP
from kubectl_win.kube.hostprocess import APP_LABEL
from tests.apiserver.exec import settings_for
from tests.support.cli import CliResult, run_cli
from tests.support.hns_scenarios import cluster_items
from tests.support.node_archives import node_archive, node_files
from tests.support.paths import ROOT
from tests.support.powershell_grammar import parse_errors
from tests.test_hns_live import FakeKubelet

NODES = ("win-a", "win-b", "win-c")


class CollectKubelet(FakeKubelet):
    def ours(self) -> list[dict]:
        return [p for p in self.store.objects(self.pods) if p["metadata"].get("labels", {}).get(APP_LABEL) == APP]


def third_node() -> dict:
    node = copy.deepcopy(next(o for o in cluster_items() if o["kind"] == "Node" and o["metadata"]["name"] == "win-b"))
    node["metadata"]["name"] = "win-c"
    node["metadata"].get("labels", {})["kubernetes.io/hostname"] = "win-c"
    node["metadata"].pop("resourceVersion", None)
    node["metadata"].pop("uid", None)
    return node


@pytest.fixture
def cluster(apiserver, tmp_path: Path) -> Iterator[tuple]:  # noqa: ANN001
    apiserver.put(*cluster_items(), third_node())
    settings = settings_for(apiserver.server)
    settings.collect_archives.clear()
    settings.collect_stdin.clear()
    for node in NODES:
        settings.collect_archives[node] = (archive(tmp_path, node), 0.0, 0)
    with settings.lock:
        settings.commands.clear()
    with CollectKubelet(apiserver.store) as kubelet:
        yield apiserver, settings, kubelet
    settings.end_all()
    settings.collect_archives.clear()


def archive(folder: Path, node: str, **kw) -> str:  # noqa: ANN003
    path = folder / f"{node}.tar.gz"
    errors = {"events hns-operational": "No events were found that match the specified selection criteria."} \
        if node == "win-c" else None
    left = [{"path": "C:\\k\\config", "reason": "kubeconfig"}]
    path.write_bytes(node_archive(node_files(node, **kw), errors=errors, left_out=left))
    return str(path)


def collect(apiserver, *args: str) -> CliResult:  # noqa: ANN001
    """The real entry point, in-process; the tests of signals run the command as a process."""
    return run_cli("collect", *args, "--kubeconfig", str(apiserver.kubeconfig))


def members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isreg()}


def test_three_nodes_make_one_bundle_and_every_pod_goes(cluster, tmp_path: Path) -> None:  # noqa: ANN001
    apiserver, settings, kubelet = cluster
    out = tmp_path / "bundle.tar.gz"
    result = collect(apiserver, *NODES, "-o", str(out), "--log-size", "5", "--size-cap", "64", "--budget", "120")
    assert result.exit_code == 0, result.stderr
    assert f"wrote {out}: 3 of 3 nodes collected" in result.stdout
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    listing = subprocess.run(["tar", "-tzf", str(out)], capture_output=True, text=True, check=True).stdout.split()
    assert {"bundle.json", "cluster.json", "nodes/win-a/hns.json", "nodes/win-a/logs/kubelet.log",
            "nodes/win-c/manifest.json"} <= set(listing)
    files = members(out)
    header = json.loads(files["bundle.json"])
    assert header["format"] == "kubectl-win-bundle/1" and header["cluster"] == "cluster.json"
    assert sorted(header["nodes"]) == list(NODES)
    win_c = header["nodes"]["win-c"]
    assert win_c["dir"] == "nodes/win-c" and "hns.json" in win_c["collected"]
    assert win_c["errors"] == ["events hns-operational: error: No events were found that match the specified "
                               "selection criteria."]
    assert {"path": "C:\\k\\config", "reason": "kubeconfig"} in win_c["leftOut"]
    # cluster.json is what doctor --save-dump writes; hns.json is the node's dump as it came.
    assert json.loads(files["cluster.json"])["kubectlWin"]["format"] == "doctor-dump/v1"
    assert json.loads(files["nodes/win-a/hns.json"]) == node_files("win-a")["hns.json"]
    # A credential the node let through is replaced here, and recorded.
    config = files["nodes/win-a/config/containerd/config.toml"].decode()
    assert "hunter2" not in config and 'password = "<redacted>"' in config
    assert header["nodes"]["win-a"]["redacted"]["config/containerd/config.toml"] == {"credential value": 1}
    # Pods: one per node, pinned, HostProcess, the image of the node's build, the same fixed command; all gone.
    assert sorted(p["spec"]["nodeName"] for p in kubelet.seen) == list(NODES)
    for pod in kubelet.seen:
        assert pod["spec"]["securityContext"]["windowsOptions"]["hostProcess"] is True
        assert pod["spec"]["containers"][0]["image"] == "mcr.microsoft.com/windows/servercore:ltsc2022"
    assert settings.commands == [script.command()] * 3
    assert kubelet.ours() == []
    # The parameters reached the script as one JSON line on stdin, not in the command.
    params = json.loads(Path(settings.collect_stdin["win-b"]).read_text())
    assert params["logBytes"] == 5 << 20 and params["capBytes"] == 64 << 20 and params["budgetSeconds"] == 120
    assert params["logs"]["kubelet"][0] == "C:\\var\\log\\kubelet\\kubelet.log"


def test_partial_failures_and_a_node_past_its_budget(cluster, tmp_path: Path) -> None:  # noqa: ANN001
    apiserver, settings, kubelet = cluster
    settings.collect_archives["win-b"] = (settings.collect_archives["win-b"][0], 60.0, 0)  # never in time
    settings.collect_archives["win-c"] = ("/dev/null", 0.0, 1)  # the script fails
    out = tmp_path / "bundle.tar.gz"
    result = collect(apiserver, "--all-windows", "-o", str(out), "--budget", "1")
    assert result.exit_code == 1, result.stderr
    assert "2 of 3" not in result.stdout and "1 of 3 nodes collected (failed: win-b, win-c" in result.stdout
    header = json.loads(members(out)["bundle.json"])
    assert header["nodes"]["win-a"]["collected"]
    [late] = header["nodes"]["win-b"]["errors"]
    assert late.startswith("the collection on win-b did not finish within its time budget (1s + 2s)")
    [failed] = header["nodes"]["win-c"]["errors"]
    assert failed.startswith("the collection script on win-c failed")
    assert header["nodes"]["win-b"]["collected"] == [] and "nodes/win-a/hns.json" in members(out)
    assert kubelet.ours() == []


def test_stray_console_output_before_the_archive_is_dropped(cluster, tmp_path: Path) -> None:  # noqa: ANN001
    apiserver, settings, kubelet = cluster
    stray = tmp_path / "stray.tar.gz"
    stray.write_bytes(b"WARNING: The names of some imported commands include unapproved verbs.\r\n" +
                      Path(settings.collect_archives["win-a"][0]).read_bytes())
    settings.collect_archives["win-a"] = (str(stray), 0.0, 0)
    out = tmp_path / "bundle.tar.gz"
    result = collect(apiserver, "win-a", "-o", str(out))
    assert result.exit_code == 0, result.stderr
    entry = json.loads(members(out)["bundle.json"])["nodes"]["win-a"]
    assert "hns.json" in entry["collected"] and "72 bytes before the archive on stdout were dropped" in entry["stderr"]


def test_a_node_sending_more_than_its_cap_is_cut_off(cluster, tmp_path: Path) -> None:  # noqa: ANN001
    apiserver, settings, kubelet = cluster
    flood = tmp_path / "flood.tar.gz"
    flood.write_bytes(b"\x1f\x8b\x08" + os.urandom(3 << 20))
    settings.collect_archives["win-b"] = (str(flood), 0.0, 0)
    out = tmp_path / "bundle.tar.gz"
    result = collect(apiserver, "win-a", "win-b", "-o", str(out), "--size-cap", "1")
    assert result.exit_code == 1, result.stderr
    nodes = json.loads(members(out)["bundle.json"])["nodes"]
    assert nodes["win-b"]["errors"] == ["the collection on win-b sent more than its size cap (1 MiB); stopped"]
    assert nodes["win-a"]["collected"] and kubelet.ours() == []


@pytest.mark.parametrize(("args", "message"), [
    ((), "error: name the bundle to write: -o bundle.tar.gz\n"),
    (("-o", "."), "error: -o .: is a directory (name a file in it)\n"),
    (("-o", "/nonexistent/b.tar.gz"), "error: -o /nonexistent/b.tar.gz: folder /nonexistent does not exist\n"),
    (("-o", "b.tar.gz", "--parallel", "0"), None),
])
def test_bad_arguments_are_one_line(cluster, args: tuple[str, ...], message: str | None) -> None:  # noqa: ANN001
    apiserver, _, kubelet = cluster
    result = collect(apiserver, "win-a", *args)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
    assert message is None or result.stderr == message
    assert kubelet.seen == []


def test_an_existing_bundle_stays_unless_forced(cluster, tmp_path: Path) -> None:  # noqa: ANN001
    apiserver, _, kubelet = cluster
    out = tmp_path / "bundle.tar.gz"
    out.write_text("keep me")
    result = collect(apiserver, "win-a", "-o", str(out))
    assert result.exit_code == 2 and result.stderr == f"error: {out} already exists (use --force to overwrite)\n"
    assert out.read_text() == "keep me" and kubelet.seen == []
    forced = collect(apiserver, "win-a", "-o", str(out), "--force")
    assert forced.exit_code == 0, forced.stderr
    assert "bundle.json" in members(out) and stat.S_IMODE(out.stat().st_mode) == 0o600


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])  # SIGHUP: the console closed
def test_interrupted_mid_run_deletes_every_pod_and_writes_nothing(cluster, tmp_path: Path, signum: int) -> None:  # noqa: ANN001
    apiserver, settings, kubelet = cluster
    for node in NODES:
        settings.collect_archives[node] = (settings.collect_archives[node][0], 60.0, 0)
    out = tmp_path / "bundle.tar.gz"
    process = subprocess.Popen([sys.executable, "-m", "kubectl_win", "collect", "--all-windows", "--parallel", "2",
                                "-o", str(out), "--kubeconfig", str(apiserver.kubeconfig)], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: len(settings.live_sessions()) == 2, "two collections running")
        assert len(kubelet.ours()) == 2  # --parallel 2: the third node waits
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert kubelet.ours() == [] and len(kubelet.seen) == 2
    assert list(tmp_path.glob("*bundle*")) == []


def test_a_second_run_sweeps_what_a_killed_run_left(cluster, tmp_path: Path) -> None:  # noqa: ANN001
    apiserver, settings, kubelet = cluster
    settings.collect_archives["win-a"] = (settings.collect_archives["win-a"][0], 60.0, 0)
    process = subprocess.Popen([sys.executable, "-m", "kubectl_win", "collect", "win-a", "-o",
                                str(tmp_path / "first.tar.gz"), "--kubeconfig", str(apiserver.kubeconfig)], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: settings.live_sessions(), "the collection running")
    process.kill()  # SIGKILL: no clean-up
    process.wait(30)
    [left] = kubelet.ours()
    settings.end_all()
    # On the node, activeDeadlineSeconds ends the pod; the next run removes it.
    assert left["spec"]["activeDeadlineSeconds"] > 0
    apiserver.store.put({**left, "status": {"phase": "Failed", "reason": "DeadlineExceeded"}}, kubelet.pods)
    settings.collect_archives["win-a"] = (settings.collect_archives["win-a"][0], 0.0, 0)
    again = collect(apiserver, "win-a", "-o", str(tmp_path / "second.tar.gz"))
    assert again.exit_code == 0, again.stderr
    assert kubelet.ours() == [] and list(tmp_path.glob("first*")) == [] and list(tmp_path.glob(".first*")) == []


def test_pod_security_rejection_says_how_to_proceed(cluster, tmp_path: Path) -> None:  # noqa: ANN001
    apiserver, _, kubelet = cluster
    apiserver.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "kube-system", "labels": {"pod-security.kubernetes.io/enforce": "baseline"}}})
    result = collect(apiserver, "win-a", "win-b", "-o", str(tmp_path / "b.tar.gz"))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "Pod Security in namespace kube-system does not allow HostProcess pods" in result.stderr
    assert "kubectl label namespace kubectl-win-debug pod-security.kubernetes.io/enforce=privileged" in result.stderr
    assert kubelet.seen == [] and list(tmp_path.glob("*b.tar.gz*")) == [tmp_path / "win-b.tar.gz"]


def test_selectors_pick_windows_nodes_only(cluster, tmp_path: Path) -> None:  # noqa: ANN001
    apiserver, _, kubelet = cluster
    out = tmp_path / "b.tar.gz"
    result = collect(apiserver, "-l", "kubernetes.io/hostname in (win-a,ctrl)", "-o", str(out))
    assert result.exit_code == 0, result.stderr
    header = json.loads(members(out)["bundle.json"])
    assert list(header["nodes"]) == ["win-a"] and header["notWindows"] == ["ctrl"]
    linux = collect(apiserver, "ctrl", "-o", str(tmp_path / "c.tar.gz"))
    assert linux.exit_code == 2 and linux.stderr == "error: node ctrl runs linux; collect gathers from Windows nodes\n"
    both = collect(apiserver, "win-a", "--all-windows", "-o", str(tmp_path / "d.tar.gz"))
    assert both.exit_code == 2 and "one of the three" in both.stderr


def test_show_script_contacts_no_cluster_and_is_valid_powershell(tmp_path: Path) -> None:
    probe = ("import sys; from kubectl_win.cli import main; code = main(sys.argv[1:]); "
             "assert 'kubernetes' not in sys.modules, 'the Kubernetes client was imported'; sys.exit(code)")
    result = subprocess.run([sys.executable, "-c", probe, "collect", "--show-script", "--log-size", "7",
                             "--kubeconfig", str(tmp_path / "missing")], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert script.SCRIPT in result.stdout and '"logBytes":7340032' in result.stdout
    assert parse_errors(result.stdout) == []


def wait_for(condition, what: str, timeout: float = 30.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
    os.sched_yield()
