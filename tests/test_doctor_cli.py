"""`kubectl win doctor` from dumps: output formats, the JSON contract, scopes, suppression, bad dumps, round trip."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_win.cli import main
from tests.support.kube_objects import deployment_pod, linux_spec, namespace, node, windows_spec, workload
from tests.support.paths import SAMPLE_DUMP


def doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["doctor", *args])
    out, err = capsys.readouterr()
    return code, out, err


def write_list(path: Path, *objs: dict[str, Any]) -> str:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)}))
    return str(path)


def test_sample_dump_table_groups_by_severity_with_fixes_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = doctor(capsys, "--from-dump", str(SAMPLE_DUMP))
    assert code == 1
    assert err == ""
    # Piped as on a terminal: a block per object, the worst first.
    errors = [" ERROR " in f" {block} " for block in out.split("\n\n")[:-1]]
    assert errors[0] and errors == sorted(errors, reverse=True)
    assert "kubectl taint nodes win22-1 os=windows:NoSchedule" in out
    assert "kubectl label namespace monitoring pod-security.kubernetes.io/enforce=privileged --overwrite" in out
    assert out.rstrip().splitlines()[-1].startswith("12 errors, 14 warnings, 2 info; 6 nodes (3 Windows); 26 pods")


def test_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = doctor(capsys, "--from-dump", str(SAMPLE_DUMP), "-o", "json")
    assert code == 1
    report = json.loads(out)
    assert report["schemaVersion"] == "kubectl-win/v1"
    assert report["cluster"] == {"serverVersion": "v1.31.4", "platform": "unknown"}
    assert report["skipped"] == []
    win = next(n for n in report["nodes"] if n["name"] == "win19-0")
    assert {k: win[k] for k in ("os", "windowsBuild", "runtime", "runtimeVersion", "kubeletVersion", "ready",
                                "taints")} == {
        "os": "windows", "windowsBuild": "10.0.17763", "runtime": "containerd", "runtimeVersion": "1.6.28",
        "kubeletVersion": "v1.31.4", "ready": True, "taints": ["os=windows:NoSchedule"]}
    assert win["osImage"] == "Windows Server 2019 Datacenter" and win["kernelVersion"] == "10.0.17763.6414"
    linux = next(n for n in report["nodes"] if n["name"] == "aks-linux-0")
    assert linux["windowsBuild"] is None and linux["os"] == "linux"
    finding = report["findings"][0]
    assert list(finding) == ["id", "severity", "object", "path", "message", "fix", "enforcedBy"]
    assert set(finding["fix"]) == {"commands", "argv", "note", "judgement"}
    enforcers = {f["id"]: f["enforcedBy"] for f in report["findings"]}
    assert enforcers["kubelet-too-old"] is None  # advice: nothing stops the node
    assert enforcers["symptom-os-build-mismatch"] == "runtime"
    assert set(finding["object"]) == {"apiVersion", "kind", "namespace", "name"}
    assert report["summary"]["errors"] == sum(f["severity"] == "error" for f in report["findings"]) == 12
    assert [f["severity"] for f in report["findings"]] == sorted(
        (f["severity"] for f in report["findings"]), key=["error", "warning", "info"].index)


def test_yaml_junit_and_sarif(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = doctor(capsys, "--from-dump", str(SAMPLE_DUMP), "-o", "yaml")
    as_yaml = yaml.safe_load(out)
    assert as_yaml["schemaVersion"] == "kubectl-win/v1"
    assert {f["enforcedBy"] for f in as_yaml["findings"]} == {None, "api-server", "kubelet", "runtime"}
    _, out, _ = doctor(capsys, "--from-dump", str(SAMPLE_DUMP), "-o", "junit")
    suite = ET.fromstring(out).find("testsuite")
    assert suite is not None and int(suite.get("failures") or 0) > 0
    names = {case.get("name") for case in suite.iter("testcase")}
    assert {"windows-node-untainted", "kubelet-too-old", "windows-run-as-user"} <= names
    _, out, _ = doctor(capsys, "--from-dump", str(SAMPLE_DUMP), "-o", "sarif")
    run = json.loads(out)["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["kubelet-too-old"]["shortDescription"]["text"] == "A kubelet is too far behind the API server"
    assert {r["ruleId"] for r in run["results"]} <= set(rules)
    enforcers = {r["ruleId"]: r["properties"]["enforcedBy"] for r in run["results"]}
    assert enforcers["windows-run-as-user"] == "api-server" and enforcers["kubelet-too-old"] is None


def test_wide_table_shows_paths_and_fixes_inline(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = doctor(capsys, "--from-dump", str(SAMPLE_DUMP), "-o", "wide")
    assert "PATH" in out and "FIX" in out and "  fix:" not in out
    assert "status.nodeInfo.kubeletVersion" in out


def test_fail_on_decides_the_exit_code(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert doctor(capsys, "--from-dump", str(SAMPLE_DUMP), "--fail-on", "never")[0] == 0
    healthy = write_list(tmp_path / "ok.json", node("linux-0", os="linux"),
                         node("win-0", runtime="containerd://1.6.28"))
    code, out, _ = doctor(capsys, "--from-dump", healthy, "--fail-on", "warning")
    assert code == 0, out
    assert doctor(capsys, "--from-dump", healthy, "--fail-on", "info")[0] == 1


def test_nodes_scope_is_the_windows_inventory(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = doctor(capsys, "nodes", "--from-dump", str(SAMPLE_DUMP))
    lines = out.splitlines()
    assert lines[0].split()[:8] == ["NAME", "READY", "OS-IMAGE", "BUILD", "REVISION", "UPDATE", "BEHIND",
                                    "BUILD-LABEL"]
    row = next(line for line in lines if line.startswith("win19-0 "))
    assert "10.0.17763   6414       KB5044277 2024-10   ≥25 " in row  # November 2026 estimated
    assert "containerd/1.6.28" in row and "16.0Gi/16.0Gi" in row
    assert "os=windows:NoSchedule" in row
    assert not any(line.startswith("aks-linux") for line in lines)
    assert "kubelet-too-old" in out and "image-build-mismatch" not in out
    _, out, _ = doctor(capsys, "nodes", "--from-dump", str(SAMPLE_DUMP), "-o", "json")
    report = json.loads(out)
    assert {n["name"] for n in report["nodes"]} == {"win19-0", "win22-0", "win22-1"}
    assert {f["object"]["kind"] for f in report["findings"]} <= {"Node", "Cluster"}
    _, out, _ = doctor(capsys, "nodes", "--from-dump", str(SAMPLE_DUMP), "-o", "wide")
    assert "PORT-FORWARD" in out and "wincat" in out


def test_workloads_scope_in_one_namespace(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = doctor(capsys, "workloads", "-n", "shop", "--from-dump", str(SAMPLE_DUMP), "-o", "json")
    findings = json.loads(out)["findings"]
    assert findings
    assert {f["object"]["namespace"] for f in findings} == {"shop"}


def test_config_file_and_annotation_suppress(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "kw.yaml"
    config.write_text("checks:\n  disable: [kubelet-too-old]\n  severity: {windows-node-untainted: error}\n"
                      "exclude:\n  - namespace: monitoring\n")
    _, out, _ = doctor(capsys, "--from-dump", str(SAMPLE_DUMP), "-o", "json", "--config", str(config))
    findings = json.loads(out)["findings"]
    assert not [f for f in findings if f["id"] == "kubelet-too-old"]
    assert not [f for f in findings if f["object"]["namespace"] == "monitoring"]
    assert next(f for f in findings if f["id"] == "windows-node-untainted")["severity"] == "error"

    spec = windows_spec(memory=None)
    ignored = workload("Deployment", "web", spec, annotations={"kubectl-win.io/ignore": "windows-memory-limit-missing"})
    dump = write_list(tmp_path / "d.json", node("win-0"), namespace("shop"), ignored,
                      deployment_pod("web", "aaaaa", spec, node="win-0"))
    _, out, _ = doctor(capsys, "--from-dump", dump, "-o", "json")
    assert "windows-memory-limit-missing" not in {f["id"] for f in json.loads(out)["findings"]}
    assert doctor(capsys, "--from-dump", dump, "--config", str(tmp_path / "missing.yaml"))[0] == 2


@pytest.mark.parametrize("content, message", [
    ('{"apiVersion": "v1", "kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a"}}',
     "truncated JSON"),
    ('{"apiVersion": "v1", "kind": "List", "items": [}', "malformed JSON at line 1 column 48"),
    ("", "empty dump"),
    ('{"kind": "Secret", "metadata": {"name": "x"}}', "a Secret is not a List"),
    ('{"kind": "List", "items": {"a": 1}}', "'items' must be a list"),
    ('{"kind": "List", "items": ["node"]}', "items[0] is a str"),
    ("[1, 2]", "document 1 is a list"),
    ('{"kind": "List", "items": [], "kubectlWin": {"format": "doctor-dump/v9"}}', "unsupported kubectl-win dump"),
])
def test_bad_dumps_give_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str,
                                            message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = doctor(capsys, "--from-dump", str(path))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err, err


def test_missing_dump_and_conflicting_flags(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = doctor(capsys, "--from-dump", str(tmp_path / "nope.json"))
    assert code == 2 and err == f"error: dump not found: {tmp_path / 'nope.json'}\n"
    code, _, err = doctor(capsys, "--from-dump", str(SAMPLE_DUMP), "--context", "prod")
    assert code == 2 and "cannot be combined" in err
    code, _, err = doctor(capsys, "--from-dump", str(SAMPLE_DUMP), "-o", "csv")
    assert code == 2 and "invalid choice" in err


def test_truncated_real_dump_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = SAMPLE_DUMP.read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2])
    code, out, err = doctor(capsys, "--from-dump", str(path))
    assert (code, out) == (2, "")
    assert "truncated JSON" in err and "Traceback" not in err


def test_save_dump_round_trip_gives_the_same_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    saved = tmp_path / "saved.json"
    _, first, _ = doctor(capsys, "--from-dump", str(SAMPLE_DUMP), "-o", "json", "--save-dump", str(saved))
    _, second, _ = doctor(capsys, "--from-dump", str(saved), "-o", "json")
    assert json.loads(first) == json.loads(second)
    assert json.loads(saved.read_text())["kubectlWin"]["format"] == "doctor-dump/v1"
    code, _, err = doctor(capsys, "--from-dump", str(saved), "--save-dump", str(saved))
    assert code == 2 and "is the same file as --from-dump" in err


def test_kubectl_list_dump_reports_what_it_lacks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # `kubectl get nodes,pods -A -o json`: items carry kind; no version, events, services, ...
    web = windows_spec(memory=None)
    dump = write_list(tmp_path / "k.json", node("win-0", taints=[]), node("linux-0", os="linux"),
                      deployment_pod("web", "aaaaa", web, node="win-0"))
    code, out, _ = doctor(capsys, "--from-dump", dump, "-o", "json")
    report = json.loads(out)
    skipped = {s["resource"]: s["reason"] for s in report["skipped"]}
    assert skipped["events"] == "not in the dump" and "version" in skipped
    assert "nodes" not in skipped and "pods" not in skipped
    assert report["cluster"]["serverVersion"] is None
    assert "windows-node-untainted" in {f["id"] for f in report["findings"]}
    _, table, _ = doctor(capsys, "--from-dump", dump)
    assert "skipped: " in table.rstrip().split("\n\n")[-1]  # the summary, wrapped as on a terminal


def test_typed_lists_and_concatenated_documents(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    nodes = {"apiVersion": "v1", "kind": "NodeList", "items": [
        {k: v for k, v in node("win-0", ready=False).items() if k not in ("kind", "apiVersion")}]}
    pods = {"apiVersion": "v1", "kind": "PodList", "items": [
        {k: v for k, v in deployment_pod("api", "aaaaa", linux_spec(), node="win-0").items() if k != "kind"}]}
    path = tmp_path / "two.json"
    path.write_text(json.dumps(nodes, indent=1) + "\n" + json.dumps(pods))
    _, out, _ = doctor(capsys, "--from-dump", str(path), "-o", "json")
    ids = {f["id"] for f in json.loads(out)["findings"]}
    assert {"windows-node-not-ready", "pod-os-mismatch"} <= ids


def test_no_progress_or_noise_on_stderr_when_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = doctor(capsys, "--from-dump", str(SAMPLE_DUMP), "-o", "json")
    assert err == ""


def test_dump_mode_does_not_import_the_kubernetes_client() -> None:
    code = ("import sys\nfrom kubectl_win.cli import main\nimport contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['doctor', '--from-dump', {str(SAMPLE_DUMP)!r}])\n"
            "print(sorted(m for m in ('kubernetes', 'urllib3', 'aiohttp') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]", result.stderr


def test_a_dump_saved_by_windows_powershell_is_read(tmp_path) -> None:
    """Windows PowerShell 5.1 writes `kubectl get ... -o json > dump.json` as UTF-16 with CRLF."""

    from tests.support.cli import run_cli

    sample = SAMPLE_DUMP
    utf16 = tmp_path / "dump.json"
    utf16.write_bytes(sample.read_text().replace("\n", "\r\n").encode("utf-16"))
    plain = run_cli("doctor", "--from-dump", str(sample), "-o", "json")
    converted = run_cli("doctor", "--from-dump", str(utf16), "-o", "json")
    assert converted.exit_code == plain.exit_code == 1
    assert converted.json["findings"] == plain.json["findings"]
