"""No silent pass: a doctor run that could not read the nodes (an empty or pods-only dump, a user who may not list
nodes) says what it could not check and exits 5, never "No problems found" with 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubectl_win.cli import main
from kubectl_win.fleet.summary import ClusterSummary, fleet_exit_code
from tests.conftest import ApiServerHandle
from tests.support.paths import SAMPLE_DUMP

WINDOWS_POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "shop"},
    "spec": {"nodeName": "win-0", "os": {"name": "windows"}, "nodeSelector": {"kubernetes.io/os": "windows"},
             "containers": [{"name": "web", "image": "mcr.microsoft.com/windows/servercore:ltsc2022",
                             "resources": {"limits": {"memory": "1Gi"}}}]},
    "status": {"phase": "Running"},
}


def dump(tmp_path: Path, *items: dict[str, Any]) -> str:
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)}))
    return str(path)


def doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["doctor", *args])
    out, _ = capsys.readouterr()
    return code, out


@pytest.mark.parametrize("items", [(), (WINDOWS_POD,)], ids=["empty", "pods-only"])
def test_a_dump_without_nodes_is_incomplete_not_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      items: tuple[dict[str, Any], ...]) -> None:
    path = dump(tmp_path, *items)
    code, out = doctor(capsys, "--from-dump", path)
    assert code == 5
    assert "No problems found" not in out
    assert out.startswith("Incomplete: could not read nodes (not in the dump); without them doctor could not check "
                          "the Windows nodes")
    code, out = doctor(capsys, "--from-dump", path, "-o", "json")
    assert code == 5 and json.loads(out)["summary"]["incomplete"] == ["nodes"]
    code, out = doctor(capsys, "--from-dump", path, "-o", "openmetrics")
    assert code == 5 and 'kubectl_win_scan_success{cluster="dump.json"} 0.0' in out
    code, out = doctor(capsys, "--from-dump", path, "--report", str(tmp_path / "r.html"), "-o", "html")
    page = (tmp_path / "r.html").read_text()
    assert code == 5 and "No problems found" not in page and "Incomplete: could not read nodes" in page


def test_findings_at_fail_on_still_exit_1_and_say_the_run_is_incomplete(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pod = json.loads(json.dumps(WINDOWS_POD))
    pod["spec"]["hostPID"] = True  # the API server rejects it for a Windows pod: an error
    code, out = doctor(capsys, "--from-dump", dump(tmp_path, pod))
    assert code == 1 and "windows-host-pid" in out
    summary = out[out.rindex("\n\n"):]  # the summary paragraph, however the terminal wraps it
    assert "Incomplete: could not read nodes" in " ".join(summary.split())


def test_a_dump_with_nodes_is_complete(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = doctor(capsys, "--from-dump", str(SAMPLE_DUMP), "-o", "json")
    assert code == 1 and json.loads(out)["summary"]["incomplete"] == []


def test_fleet_exit_is_5_only_when_every_cluster_lacked_its_nodes() -> None:
    def failed(code: int) -> ClusterSummary:
        return ClusterSummary("c", None, 0, False, "cannot read nodes: forbidden", code)

    assert fleet_exit_code([failed(5), failed(5)]) == 5
    assert fleet_exit_code([failed(5), failed(3)]) == 3
    assert fleet_exit_code([failed(5), ClusterSummary("ok", None, 1, True)]) == 1


def test_a_user_who_may_not_list_nodes_gets_exit_5_naming_the_403(apiserver: ApiServerHandle,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    for item in json.loads(SAMPLE_DUMP.read_text())["items"]:
        if item.get("kind") != "Node":
            apiserver.put(item)
    apiserver.auth.deny("list", "nodes")
    kubeconfig = str(apiserver.kubeconfig)
    code, out = doctor(capsys, "--kubeconfig", kubeconfig, "workloads", "-n", "default")
    assert "Incomplete: could not read nodes (forbidden" in out and code == (1 if "ERROR" in out else 5)
    code, out = doctor(capsys, "--kubeconfig", kubeconfig, "nodes")
    assert code == 5 and "No problems found" not in out and "Incomplete: could not read nodes (forbidden" in out
    code, out = doctor(capsys, "--kubeconfig", kubeconfig, "nodes", "-o", "openmetrics")
    assert code == 5 and "kubectl_win_scan_success{" in out and "} 0.0" in out.split("kubectl_win_scan_success{")[1]
