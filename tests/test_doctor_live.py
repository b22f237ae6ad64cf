"""doctor against the test API server over real HTTPS: read-only, RBAC gaps, faults, dump round trip,
and an end-to-end run through the real kubectl (`kubectl win doctor`)."""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubectl_win.cli import main, parse_args
from kubectl_win.env import Env
from tests.conftest import ApiServerHandle
from tests.support.paths import ROOT, SAMPLE_DUMP


def seed_sample(apiserver: ApiServerHandle) -> None:
    for item in json.loads(SAMPLE_DUMP.read_text())["items"]:
        apiserver.put(item)


def doctor(capsys: pytest.CaptureFixture[str], apiserver: ApiServerHandle, *args: str) -> tuple[int, str, str]:
    code = main(["doctor", "--kubeconfig", str(apiserver.kubeconfig), *args])
    out, err = capsys.readouterr()
    return code, out, err


def report_of(out: str) -> dict[str, Any]:
    return json.loads(out)


def test_live_cluster_is_read_only_and_round_trips(apiserver: ApiServerHandle, capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    seed_sample(apiserver)
    saved = tmp_path / "dump.json"
    code, out, err = doctor(capsys, apiserver, "-o", "json", "--save-dump", str(saved))
    assert (code, err) == (1, "")
    live = report_of(out)
    assert live["cluster"] == {"serverVersion": "v1.32.0", "platform": "unknown"}
    assert live["skipped"] == []
    ids = {f["id"] for f in live["findings"]}
    assert {"kubelet-too-old", "windows-node-untainted", "image-build-mismatch", "hostprocess-blocked-by-pod-security",
            "symptom-hns-failure", "windows-csi-proxy-missing", "windows-run-as-user"} <= ids
    assert live["summary"]["podsScanned"] == 26
    methods = {method for method, _ in apiserver.server.requests}
    assert methods == {"GET"}
    assert any("limit=500" in path for _, path in apiserver.server.requests)

    assert main(["doctor", "--from-dump", str(saved), "-o", "json"]) == 1
    assert report_of(capsys.readouterr().out) == live


def test_forbidden_resources_are_skipped_and_the_rest_reported(apiserver: ApiServerHandle,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    seed_sample(apiserver)
    apiserver.auth.deny("list", "events")
    apiserver.auth.deny("list", "gmsacredentialspecs")
    code, out, err = doctor(capsys, apiserver, "-o", "json")
    assert (code, err) == (1, "")
    report = report_of(out)
    skipped = {s["resource"]: s["reason"] for s in report["skipped"]}
    assert set(skipped) == {"events", "gmsacredentialspecs"}
    assert 'cannot list resource "events"' in skipped["events"]
    ids = {f["id"] for f in report["findings"]}
    assert "symptom-hns-failure" not in ids and "kubelet-too-old" in ids
    assert not ids & {"gmsa-crd-missing", "gmsa-credential-spec-missing"}
    _, table, _ = doctor(capsys, apiserver)
    summary = " ".join(table.rstrip().split("\n\n")[-1].split())  # the last paragraph, wrapped as on a terminal
    assert "skipped: gmsacredentialspecs (forbidden: " in summary and "events (forbidden: " in summary


def test_429_and_500_are_retried(apiserver: ApiServerHandle, capsys: pytest.CaptureFixture[str]) -> None:
    seed_sample(apiserver)
    apiserver.faults.status("^/api/v1/nodes", 429, count=1, retry_after=0)
    apiserver.faults.status("^/api/v1/pods", 500, count=2)
    code, out, _ = doctor(capsys, apiserver, "-o", "json")
    assert code == 1
    assert report_of(out)["skipped"] == []
    pod_lists = [p for m, p in apiserver.server.requests if p.startswith("/api/v1/pods")]
    assert len(pod_lists) == 3


def test_persistent_server_errors_skip_that_resource(apiserver: ApiServerHandle,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    seed_sample(apiserver)
    apiserver.faults.status("^/api/v1/services", 503)
    code, out, _ = doctor(capsys, apiserver, "-o", "json")
    report = report_of(out)
    assert code == 1
    assert [s["resource"] for s in report["skipped"]] == ["services"]
    assert "503" in report["skipped"][0]["reason"]
    assert "windows-service-load-balancers" not in {f["id"] for f in report["findings"]}


def test_nodes_unreadable_is_fatal(apiserver: ApiServerHandle, capsys: pytest.CaptureFixture[str]) -> None:
    apiserver.faults.status("^/api/v1/nodes", 500)
    code, out, err = doctor(capsys, apiserver)
    assert (code, out) == (3, "")
    assert err.startswith("error: ") and err.count("\n") == 1 and "500" in err


def test_unreachable_and_expired_token_exit_3(apiserver: ApiServerHandle, capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = tmp_path / "kubeconfig"
    config.write_text(apiserver.kubeconfig.read_text().replace(apiserver.url, f"https://127.0.0.1:{port}"))
    code = main(["doctor", "--kubeconfig", str(config), "--request-timeout", "5"])
    out, err = capsys.readouterr()
    assert (code, out) == (3, "")
    assert err.startswith("error: cannot connect to") and err.count("\n") == 1

    apiserver.auth.expire_token(apiserver.token)
    code, out, err = doctor(capsys, apiserver)
    assert (code, out) == (3, "")
    assert "expired token" in err and apiserver.token not in err


def test_workloads_in_one_namespace_only_list_that_namespace(apiserver: ApiServerHandle,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    seed_sample(apiserver)
    code, out, _ = doctor(capsys, apiserver, "workloads", "-n", "shop", "-o", "json")
    report = report_of(out)
    assert code == 1
    assert {f["object"]["namespace"] for f in report["findings"]} == {"shop"}
    namespaced = [p for _, p in apiserver.server.requests if "/pods" in p or "/deployments" in p]
    assert namespaced and all("/namespaces/shop/" in p for p in namespaced)


def test_progress_goes_to_stderr_only_on_a_terminal(apiserver: ApiServerHandle,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    seed_sample(apiserver)
    run, args = parse_args(["doctor", "--kubeconfig", str(apiserver.kubeconfig), "-o", "json"])
    stdout, stderr = io.StringIO(), io.StringIO()
    code = run(args, Env(stdout=stdout, stderr=stderr, stderr_isatty=True))
    assert code == 1
    assert "reading pods: " in stderr.getvalue() and " objects read, " in stderr.getvalue()
    assert json.loads(stdout.getvalue())["schemaVersion"] == "kubectl-win/v1"


def _plugin_path(tmp_path: Path) -> str:
    """A PATH on which kubectl finds the kubectl-win plugin (the installed console script, or a shim)."""
    installed = shutil.which("kubectl-win")
    if installed:
        return f"{Path(installed).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "kubectl-win"
    shim.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m kubectl_win \"$@\"\n")
    shim.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


def test_end_to_end_through_real_kubectl(apiserver: ApiServerHandle, kubectl: str, tmp_path: Path) -> None:
    seed_sample(apiserver)
    env = apiserver.kubectl_env()
    env["PATH"] = _plugin_path(tmp_path)
    listed = subprocess.run([kubectl, "get", "nodes", "-l", "kubernetes.io/os=windows", "-o", "name"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert sorted(listed.stdout.split()) == ["node/win19-0", "node/win22-0", "node/win22-1"]
    result = subprocess.run([kubectl, "win", "doctor", "-o", "json"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    report = json.loads(result.stdout)
    assert {n["name"] for n in report["nodes"] if n["os"] == "windows"} == {"win19-0", "win22-0", "win22-1"}
    assert "windows-node-untainted" in {f["id"] for f in report["findings"]}
    table = subprocess.run([kubectl, "win", "doctor", "nodes"], env=env, capture_output=True, text=True, timeout=120)
    assert table.returncode == 1 and "win22-0" in table.stdout and "kubelet-too-old" in table.stdout


def test_workloads_default_to_the_context_namespace(apiserver: ApiServerHandle, capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    seed_sample(apiserver)
    config = apiserver.server.write_kubeconfig(tmp_path / "kc", namespace="monitoring")
    code = main(["doctor", "workloads", "--kubeconfig", str(config), "-o", "json"])
    report = report_of(capsys.readouterr().out)
    assert code == 1
    assert {f["object"]["namespace"] for f in report["findings"]} == {"monitoring"}


def test_failed_run_leaves_no_partial_dump(apiserver: ApiServerHandle, capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    apiserver.faults.status("^/api/v1/nodes", 500)
    target = tmp_path / "dump.json"
    code, _, _ = doctor(capsys, apiserver, "--save-dump", str(target))
    assert code == 3
    assert list(tmp_path.iterdir()) == []
    code, _, err = doctor(capsys, apiserver, "--save-dump", str(tmp_path / "missing" / "dump.json"))
    assert code == 2
    assert err == f"error: --save-dump {tmp_path}/missing/dump.json: folder {tmp_path}/missing does not exist\n"
