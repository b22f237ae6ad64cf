"""`kubectl win explain` as a user runs it: outputs, exit codes, bad input, suppression."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.support.cli import run_cli
from tests.support.paths import EXAMPLE_MANIFESTS

WINDOWS_DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      os:
        name: windows
      containers:
        - name: web
          image: mcr.microsoft.com/windows/nanoserver:ltsc2022
          securityContext:
            privileged: false
          resources:
            limits: {cpu: "1", memory: 1Gi}
      nodeSelector: {kubernetes.io/os: windows}
"""

INFERRED_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: agent
spec:
  nodeSelector:
    kubernetes.io/os: windows
  containers:
    - name: agent
      image: example.com/agent:1
      volumeMounts:
        - name: data
          mountPath: C:\\data
          mountPropagation: Bidirectional
      resources:
        limits: {memory: 256Mi}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_error_finding_exits_1_and_names_file_line_object_path(tmp_path: Path) -> None:
    path = write(tmp_path, "deploy.yaml", WINDOWS_DEPLOY)
    result = run_cli("explain", "-f", str(path))
    assert result.exit_code == 1
    line = next(row for row in result.stdout.splitlines() if "privileged" in row)
    assert f"{path}:15" in line
    assert "shop/Deployment/web" in line
    assert "spec.template.spec.containers[0].securityContext.privileged" in line
    assert "ERROR" in line
    assert "1 error, 0 warnings, 0 info in 1 object" in result.stdout


def test_warnings_exit_0_unless_fail_on_warning(tmp_path: Path) -> None:
    path = write(tmp_path, "pod.yaml", INFERRED_POD)
    assert run_cli("explain", "-f", str(path)).exit_code == 0
    assert run_cli("explain", "-f", str(path), "--fail-on", "warning").exit_code == 1
    assert run_cli("explain", "-f", str(path), "--fail-on", "never").exit_code == 0


def test_json_contract(tmp_path: Path) -> None:
    path = write(tmp_path, "deploy.yaml", WINDOWS_DEPLOY)
    data = run_cli("explain", "-f", str(path), "-o", "json").json
    assert data["schemaVersion"] == "kubectl-win/v1"
    assert data["summary"] == {"objects": 1, "errors": 1, "warnings": 0, "infos": 0}
    [finding] = data["findings"]
    assert set(finding) == {"id", "severity", "file", "line", "object", "path", "message", "fix", "enforcedBy",
                            "since", "source"}
    assert finding["id"] == "windows-privileged"
    assert finding["enforcedBy"] == "api-server"
    assert finding["line"] == 15 and finding["file"] == str(path)
    assert finding["object"] == {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web"}
    assert finding["since"] == "1.24"


def test_yaml_output_parses_to_the_same_payload(tmp_path: Path) -> None:
    path = write(tmp_path, "deploy.yaml", WINDOWS_DEPLOY)
    as_yaml = yaml.safe_load(run_cli("explain", "-f", str(path), "-o", "yaml").stdout)
    assert as_yaml == run_cli("explain", "-f", str(path), "-o", "json").json


def test_sarif_has_rules_results_and_regions(tmp_path: Path) -> None:
    path = write(tmp_path, "deploy.yaml", WINDOWS_DEPLOY)
    sarif = run_cli("explain", "-f", str(path), "-o", "sarif").json
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == ["windows-privileged"]
    [result] = run["results"]
    assert result["level"] == "error"
    assert result["properties"]["enforcedBy"] == "api-server"
    region = result["locations"][0]["physicalLocation"]
    assert region["region"]["startLine"] == 15
    assert region["artifactLocation"]["uri"].endswith("deploy.yaml")


def test_wide_shows_check_id_and_fix(tmp_path: Path) -> None:
    path = write(tmp_path, "deploy.yaml", WINDOWS_DEPLOY)
    out = run_cli("explain", "-f", str(path), "-o", "wide").stdout
    assert "windows-privileged" in out and "HostProcess" in out


def test_stdin_multi_document_and_list(tmp_path: Path) -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(INFERRED_POD)]}
    text = WINDOWS_DEPLOY + "---\n" + json.dumps(listed) + "\n---\n"
    result = run_cli("explain", "-f", "-", "-o", "json", stdin=text)
    data = result.json
    assert {f["id"] for f in data["findings"]} == {"windows-privileged", "windows-mount-propagation"}
    assert {f["file"] for f in data["findings"]} == {"<stdin>"}
    assert data["summary"]["objects"] == 2


def test_json_files_get_line_numbers(tmp_path: Path) -> None:
    obj = yaml.safe_load(WINDOWS_DEPLOY)
    path = write(tmp_path, "deploy.json", json.dumps(obj, indent=2))
    [finding] = run_cli("explain", "-f", str(path), "-o", "json").json["findings"]
    assert path.read_text().splitlines()[finding["line"] - 1].strip().startswith('"privileged"')


def test_directories_recurse_and_several_f_flags(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    write(tmp_path / "a" / "b", "deploy.yml", WINDOWS_DEPLOY)
    write(tmp_path / "a", "notes.txt", "not yaml: [")
    other = write(tmp_path, "pod.yaml", INFERRED_POD)
    data = run_cli("explain", "-f", str(tmp_path / "a"), "-f", str(other), "-o", "json").json
    assert sorted(Path(f["file"]).name for f in data["findings"]) == ["deploy.yml", "pod.yaml"]


def test_other_kinds_are_skipped_silently(tmp_path: Path) -> None:
    path = write(
        tmp_path, "svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n"
    )
    result = run_cli("explain", "-f", str(path))
    assert result.exit_code == 0 and "0 objects" in result.stdout
    assert result.stderr == ""


def test_invalid_yaml_is_reported_with_line_and_other_files_still_checked(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.yaml", "apiVersion: v1\nkind: Pod\nspec:\n  containers: [\n  - name: x\n")
    good = write(tmp_path, "deploy.yaml", WINDOWS_DEPLOY)
    result = run_cli("explain", "-f", str(bad), "-f", str(good))
    assert result.exit_code == 2
    assert "windows-privileged" in run_cli("explain", "-f", str(bad), "-f", str(good), "-o", "wide").stdout
    [line] = [x for x in result.stderr.splitlines() if "bad.yaml" in x]
    assert line.startswith(f"error: {bad}:") and "invalid YAML" in line
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "content,message",
    [
        (b"\x00\x01\x02binary", "binary file"),
        (b"\xfa\xfb not utf8", "not UTF-8"),
    ],
)
def test_unreadable_files_exit_2_with_one_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes(content)
    result = run_cli("explain", "-f", str(path))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [f"error: {path}: {result.stderr.split(': ', 2)[2].strip()}"]
    assert message in result.stderr


def test_missing_file_exits_2(tmp_path: Path) -> None:
    result = run_cli("explain", "-f", str(tmp_path / "nope.yaml"))
    assert result.exit_code == 2 and "no such file" in result.stderr


def test_empty_and_non_mapping_documents_are_noted_not_fatal(tmp_path: Path) -> None:
    empty = write(tmp_path, "empty.yaml", "\n\n")
    scalar = write(tmp_path, "scalar.yaml", "- just\n- a list\n---\nhello\n")
    result = run_cli("explain", "-f", str(empty), "-f", str(scalar))
    assert result.exit_code == 0
    assert "empty file" in result.stderr and "is a list" in result.stderr and "is a string" in result.stderr


def test_wrong_types_skip_the_object_with_a_note(tmp_path: Path) -> None:
    text = "kind: Deployment\nmetadata: {name: d}\nspec:\n  template: [1, 2]\n---\n" + WINDOWS_DEPLOY
    path = write(tmp_path, "mixed.yaml", text)
    result = run_cli("explain", "-f", str(path), "-o", "json")
    assert result.exit_code == 1
    assert "Deployment/d: spec.template is a list, expected a mapping; skipped" in result.stderr
    assert [f["object"]["name"] for f in result.json["findings"]] == ["web"]


def test_huge_file_is_refused_without_reading_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kubectl_win.manifests.inputs as manifests

    monkeypatch.setattr(manifests, "MAX_FILE_BYTES", 1024)
    path = write(tmp_path, "big.yaml", "# pad\n" * 400)
    result = run_cli("explain", "-f", str(path))
    assert result.exit_code == 2 and "too large" in result.stderr


def test_annotation_suppresses_by_id_on_object_or_template(tmp_path: Path) -> None:
    obj = yaml.safe_load(WINDOWS_DEPLOY)
    obj["spec"]["template"]["metadata"] = {"annotations": {"kubectl-win.io/ignore": "windows-privileged"}}
    path = write(tmp_path, "d.yaml", yaml.safe_dump(obj))
    result = run_cli("explain", "-f", str(path))
    assert result.exit_code == 0 and "0 errors" in result.stdout


def test_config_file_disables_overrides_and_excludes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deploy = write(tmp_path, "d.yaml", WINDOWS_DEPLOY)
    pod = write(tmp_path, "p.yaml", INFERRED_POD)
    config = write(
        tmp_path, "cfg.yaml", "checks:\n  severity: {windows-privileged: warning}\nexclude:\n  - name: agent\n"
    )
    data = run_cli("explain", "-f", str(deploy), "-f", str(pod), "--config", str(config), "-o", "json").json
    assert [(f["id"], f["severity"]) for f in data["findings"]] == [("windows-privileged", "warning")]
    monkeypatch.chdir(tmp_path)
    write(tmp_path, ".kubectl-win.yaml", "checks:\n  disable: [windows-privileged]\n")
    assert run_cli("explain", "-f", str(deploy)).exit_code == 0


def test_bad_config_is_a_usage_error(tmp_path: Path) -> None:
    deploy = write(tmp_path, "d.yaml", WINDOWS_DEPLOY)
    config = write(tmp_path, "cfg.yaml", "checks:\n  severity: {windows-privileged: fatal}\n")
    result = run_cli("explain", "-f", str(deploy), "--config", str(config))
    assert result.exit_code == 2 and "must be error, warning or info" in result.stderr
    assert run_cli("explain", "-f", str(deploy), "--config", str(tmp_path / "none.yaml")).exit_code == 2


def test_assume_windows_checks_untargeted_pods(tmp_path: Path) -> None:
    text = INFERRED_POD.replace("  nodeSelector:\n    kubernetes.io/os: windows\n", "")
    path = write(tmp_path, "p.yaml", text)
    plain = run_cli("explain", "-f", str(path))
    assert "0 warnings" in plain.stdout and "--assume-windows" in plain.stderr
    assert "0 errors, 1 warning, 0 info" in run_cli("explain", "-f", str(path), "--assume-windows").stdout


def test_k8s_version_flag(tmp_path: Path) -> None:
    path = write(tmp_path, "deploy.yaml", WINDOWS_DEPLOY)
    assert run_cli("explain", "-f", str(path), "--k8s-version", "1.23").exit_code == 0
    bad = run_cli("explain", "-f", str(path), "--k8s-version", "one")
    assert bad.exit_code == 2 and bad.stderr.startswith("error: --k8s-version")


def test_explain_field_text_and_json() -> None:
    result = run_cli("explain", "containers.securityContext.privileged")
    assert result.exit_code == 0
    assert "STATUS   rejected by the API server when spec.os.name=windows (since 1.24)" in result.stdout
    assert "HostProcess" in result.stdout and "validation.go" in result.stdout
    data = run_cli("explain", "deployment.spec.template.spec.hostNetwork", "-o", "json").json
    assert {f["id"] for f in data["fields"]} == {"windows-host-network-ignored", "windows-hostprocess-host-network"}


def test_explain_field_knows_what_works_and_replacements() -> None:
    result = run_cli("explain", "pod.spec.securityContext.runAsUser")
    assert "windowsOptions.runAsUserName" in result.stdout
    works = run_cli("explain", "spec.securityContext.runAsNonRoot").stdout
    assert "works" in works and "ContainerAdministrator" in works


def test_explain_field_respects_version() -> None:
    result = run_cli("explain", "spec.securityContext.appArmorProfile", "--k8s-version", "1.29")
    assert "does not exist before Kubernetes 1.30" in result.stdout


def test_unknown_field_is_one_line_with_close_matches() -> None:
    result = run_cli("explain", "containers.securityContext.privilegd")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "did you mean spec.containers[*].securityContext.privileged" in result.stderr


def test_list_prints_the_whole_table() -> None:
    result = run_cli("explain", "--list")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].split()[:4] == ["ID", "STATUS", "FIELD", "SINCE"]
    assert "windows-privileged" in result.stdout and "windows-runtime-class" in result.stdout
    data = run_cli("explain", "--list", "-o", "json").json
    assert len(data["fields"]) >= 50


@pytest.mark.parametrize(
    "argv,message",
    [
        (["explain"], "nothing to explain"),
        (["explain", "-f", "x.yaml", "pods"], "not both"),
        (["explain", "-o", "xml", "-f", "x"], "invalid choice"),
        (["explain", "--list", "-o", "sarif"], "-o sarif is for findings"),
        (["explain", "a", "b", "c"], "too many arguments"),
    ],
)
def test_usage_errors_are_one_line_exit_2(argv: list[str], message: str) -> None:
    result = run_cli(*argv)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bundled_example_reports_both_severities() -> None:
    data = run_cli("explain", "-f", str(EXAMPLE_MANIFESTS), "-o", "json").json
    severities = {f["severity"] for f in data["findings"]}
    assert severities == {"error", "warning"}
    assert not [f for f in data["findings"] if f["object"]["name"] == "node-agent"]


def test_example_flag_checks_the_bundled_manifests() -> None:
    result = run_cli("explain", "--example")
    assert result.exit_code == 1
    assert "iis-hardened-for-linux.yaml" in result.stdout
    assert run_cli("explain", "--example", "-f", "x").exit_code == 2


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
def test_files_written_by_windows_powershell_are_read(tmp_path: Path, encoding: str) -> None:
    raw = WINDOWS_DEPLOY.replace("\n", "\r\n").encode(encoding)
    if encoding == "utf-16-be":
        raw = b"\xfe\xff" + raw
    path = tmp_path / "deploy.yaml"
    path.write_bytes(raw)
    data = run_cli("explain", "-f", str(path), "-o", "json").json
    assert [(f["id"], f["line"]) for f in data["findings"]] == [("windows-privileged", 15)]
