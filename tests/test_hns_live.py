"""kubectl win hns NODE against the test API server: the HostProcess pod, the exec that returns a recorded
HNS dump, and the clean-up on success, error, SIGTERM and Ctrl-C."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubectl_win.hns import script
from kubectl_win.hns.from_node import APP
from kubectl_win.hns.model import KNOWN_KEYS
from kubectl_win.kube.hostprocess import APP_LABEL
from tests.apiserver.exec import settings_for
from tests.support.hns_scenarios import HNS_FIXTURES, SCENARIOS, cluster_items
from tests.support.paths import ROOT
from tests.support.waiting import HANG_GUARD, wait_until


class FakeKubelet:
    """Starts (or fails) our HostProcess pods the way a Windows node's kubelet would, and records them."""

    def __init__(self, store) -> None:  # noqa: ANN001 - tests.apiserver.Store
        self.store = store
        self.pods = store.resource("", "v1", "pods")
        self.waiting: dict | None = None  # a container waiting state to report instead of Running
        self.seen: list[dict] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> FakeKubelet:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def ours(self) -> list[dict]:
        return [p for p in self.store.objects(self.pods) if p["metadata"].get("labels", {}).get(APP_LABEL) == APP]

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            for pod in self.ours():
                if pod.get("status", {}).get("phase"):
                    continue
                self.seen.append(pod)
                if self.waiting:
                    waiting = [{"name": "hns", "state": {"waiting": self.waiting}}]
                    status = {"phase": "Pending", "containerStatuses": waiting}
                else:
                    status = {"phase": "Running"}
                try:
                    self.store.put({**pod, "status": status}, self.pods)
                except Exception:  # noqa: BLE001 - deleted meanwhile
                    pass


@pytest.fixture
def cluster(apiserver) -> Iterator[tuple]:  # noqa: ANN001
    apiserver.put(*cluster_items())
    settings = settings_for(apiserver.server)
    settings.hns_dumps.clear()
    settings.hns_dumps["win-a"] = (str(HNS_FIXTURES / "win-a-v1.json"), 0.0)
    with settings.lock:
        settings.commands.clear()
    with FakeKubelet(apiserver.store) as kubelet:
        yield apiserver, settings, kubelet
    settings.end_all()


def hns(apiserver, *args: str, **kw) -> subprocess.CompletedProcess[str]:  # noqa: ANN001
    return subprocess.run([sys.executable, "-m", "kubectl_win", "hns", *args, "--kubeconfig",
                           str(apiserver.kubeconfig)], cwd=ROOT, capture_output=True, text=True, timeout=120, **kw)


def test_a_live_run_reads_hns_through_a_host_process_pod_and_deletes_it(cluster) -> None:  # noqa: ANN001
    apiserver, settings, kubelet = cluster
    result = hns(apiserver, "win-a", "-o", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["findings"] == [] and report["hns"]["node"] == "win-a"
    assert report["hns"]["counts"]["loadBalancers"] == 7
    assert report["summary"]["comparedWith"] == ["Services", "EndpointSlices", "Pods", "Nodes"]
    [pod] = kubelet.seen
    spec = pod["spec"]
    assert pod["metadata"]["namespace"] == "kube-system" and spec["nodeName"] == "win-a"
    assert spec["hostNetwork"] is True and spec["tolerations"] == [{"operator": "Exists"}]
    assert spec["securityContext"]["windowsOptions"] == {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}
    assert spec["containers"][0]["image"] == "mcr.microsoft.com/windows/servercore:ltsc2022"  # the node's build
    assert settings.commands == [script.command()]
    assert kubelet.ours() == []


def test_findings_from_a_live_dump(cluster, tmp_path: Path) -> None:  # noqa: ANN001
    apiserver, settings, kubelet = cluster
    dump, _ = {s.name: s for s in SCENARIOS}["stale remote endpoint"].build()
    (tmp_path / "dump.json").write_text(json.dumps(dump))
    settings.hns_dumps["win-a"] = (str(tmp_path / "dump.json"), 0.0)
    result = hns(apiserver, "win-a", "-n", "win-debug", "--image", "registry.local/servercore:ltsc2022")
    assert result.returncode == 0, result.stderr  # a warning is below the default --fail-on error
    assert "hns-stale-remote-endpoint" in result.stdout and "10.244.2.50" in result.stdout
    [pod] = kubelet.seen
    assert pod["metadata"]["namespace"] == "win-debug"
    assert pod["spec"]["containers"][0]["image"] == "registry.local/servercore:ltsc2022"
    assert kubelet.ours() == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_killing_the_plugin_mid_run_deletes_the_pod(cluster, signum: int) -> None:  # noqa: ANN001
    apiserver, settings, kubelet = cluster
    # The dump never finishes by itself, so the signal always lands mid-run however slow the machine is;
    # the test waits for events (the dump started, the process ended), not for a time budget.
    settings.hns_dumps["win-a"] = (str(HNS_FIXTURES / "win-a-v1.json"), float("inf"))
    process = subprocess.Popen([sys.executable, "-m", "kubectl_win", "hns", "win-a", "--kubeconfig",
                                str(apiserver.kubeconfig)], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: settings.live_sessions() or process.poll() is not None, "the dump started")
        assert settings.live_sessions(), f"the plugin ended before the dump started: {process.stderr.read()}"
        assert len(kubelet.ours()) == 1
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=HANG_GUARD)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert kubelet.ours() == []
    # A second run starts from a clean namespace and leaves nothing behind either.
    settings.hns_dumps["win-a"] = (str(HNS_FIXTURES / "win-a-v1.json"), 0.0)
    again = hns(apiserver, "win-a")
    assert again.returncode == 0, again.stderr
    assert kubelet.ours() == [] and len(kubelet.seen) == 2


def test_a_failing_dump_deletes_the_pod_and_says_why(cluster) -> None:  # noqa: ANN001
    apiserver, settings, kubelet = cluster
    settings.hns_dumps.clear()
    result = hns(apiserver, "win-a")
    assert result.returncode == 3
    assert result.stderr.startswith("error: the HNS dump on win-a failed: HNS is not emulated")
    assert kubelet.ours() == [] and len(kubelet.seen) == 1


def test_an_image_that_cannot_be_pulled(cluster) -> None:  # noqa: ANN001
    apiserver, _, kubelet = cluster
    kubelet.waiting = {"reason": "ErrImagePull", "message": "failed to pull image: not found"}
    result = hns(apiserver, "win-a", "--image", "nowhere/servercore:ltsc2022")
    assert result.returncode == 3 and "ErrImagePull" in result.stderr and "--image" in result.stderr
    assert kubelet.ours() == []


def test_pod_security_blocking_host_process_says_how_to_proceed(cluster) -> None:  # noqa: ANN001
    apiserver, _, kubelet = cluster
    apiserver.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "kube-system", "labels": {"pod-security.kubernetes.io/enforce": "baseline"}}})
    result = hns(apiserver, "win-a")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "Pod Security in namespace kube-system does not allow HostProcess pods" in result.stderr
    assert 'violates PodSecurity "baseline:latest"' in result.stderr
    assert "pod-security.kubernetes.io/enforce=privileged" in result.stderr and "-n kubectl-win-debug" in result.stderr
    assert kubelet.seen == []


def test_missing_permission_to_create_pods(cluster) -> None:  # noqa: ANN001
    apiserver, _, kubelet = cluster
    apiserver.auth.deny("create", "pods", namespace="kube-system")
    result = hns(apiserver, "win-a")
    assert result.returncode == 3 and "create/delete/get on pods" in result.stderr
    assert kubelet.seen == []


@pytest.mark.parametrize(("node", "message"), [("ctrl", "node ctrl runs linux; hns inspects Windows nodes"),
                                               ("nope", 'node "nope" not found')])
def test_only_windows_nodes(cluster, node: str, message: str) -> None:  # noqa: ANN001
    apiserver, _, kubelet = cluster
    result = hns(apiserver, node)
    assert result.returncode == 2 and result.stderr == f"error: {message}\n"
    assert kubelet.seen == []


# -- the PowerShell script ---------------------------------------------------------------------------------
def decoded(argv: list[str]) -> str:
    return base64.b64decode(argv[argv.index("-EncodedCommand") + 1]).decode("utf-16-le")


def test_the_script_holds_no_user_text(cluster) -> None:  # noqa: ANN001
    # The exec argv is the same whatever node, namespace and image the user names, and none of them is in it.
    apiserver, settings, _ = cluster
    settings.hns_dumps["win-b"] = (str(HNS_FIXTURES / "win-b-v2.json"), 0.0)
    marker = "x$(Remove-Item C:\\)'\";calc"
    assert hns(apiserver, "win-a", "-n", "ns-one").returncode == 0
    assert hns(apiserver, "win-b", "-n", "ns-two", "--image", f"img:{marker}").returncode in (0, 1)
    first, second = settings.commands
    assert first == second == script.command()
    text = decoded(first)
    for user_text in ("win-a", "win-b", "ns-one", "ns-two", marker, "img:"):
        assert user_text not in text


def test_the_script_asks_for_every_part_of_the_dump() -> None:
    text = decoded(script.command())
    for cmdlet in ("Get-HnsNetwork", "Get-HnsEndpoint", "Get-HnsPolicyList", "Get-HnsNamespace",
                   "Get-HnsLoadBalancer -Version 2", "/globals/version", "Get-NetTCPSetting", "Get-WinEvent"):
        assert cmdlet in text
    assert text.index("Get-HnsPolicyList") < text.index("Import-Module")  # V1 before hns.v2.psm1 replaces them
    depths = [int(d) for d in re.findall(r"ConvertTo-Json -Depth (\d+)", text)]
    assert depths and min(depths) >= 10
    keys = set(re.findall(r"\$dump\.(\w+) =", text))
    assert keys == set(KNOWN_KEYS) - {"node"}  # the plugin adds the node it asked for


def test_the_readme_one_liner_writes_the_same_keys() -> None:
    readme = (ROOT / "README.md").read_text()
    [line] = [ln for ln in readme.splitlines() if "Get-HnsNetwork" in ln and "ConvertTo-Json" in ln]
    keys = set(re.findall(r"(\w+)=Get-Hns|(\w+)=\$env", line))
    assert {k for pair in keys for k in pair if k} <= set(KNOWN_KEYS)
    assert int(re.search(r"-Depth (\d+)", line).group(1)) >= 10


def test_the_script_parses_in_powershell(tmp_path: Path) -> None:
    pwsh = shutil.which("pwsh") or shutil.which("powershell")
    if pwsh is None:
        pytest.skip("PowerShell is not installed (no package registry here provides it)")
    check = ("$errors = $null; [System.Management.Automation.PSParser]::Tokenize((Get-Content -Raw $args[0]), "
             "[ref]$errors) | Out-Null; $errors.Count")
    path = tmp_path / "hns.ps1"
    path.write_text(script.SCRIPT)
    out = subprocess.run([pwsh, "-NoProfile", "-Command", check, str(path)], capture_output=True, text=True,
                         timeout=60, env=dict(os.environ))
    assert out.stdout.strip() == "0", out.stderr
