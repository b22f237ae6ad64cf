"""--save-dump writes what the checks read and nothing else: the same findings come back from it, and
env values, commands, arguments, unread annotations, inline gMSA specs, node ids and DNS names and
credentials in event texts do not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_win.doctor.read.share import read_annotation_prefixes
from tests.support.cli import run_cli
from tests.support.kube_objects import deployment_pod, event, node, waiting, windows_spec, workload
from tests.support.paths import SAMPLE_DUMP

SECRETS = ("hunter2-db-password", "--admin-key=K3Y-VALUE", "S-1-5-21-3623811015", "/opt/start-secret.sh",
           "internal-only-annotation", "machine-id-0f1e2d", "win-0.corp.internal", "ghp_tok3nInEventText",
           "probe-secret-header", "prestop-secret-cmd", "from-secret-ref")


def _sensitive_objects() -> list[dict]:
    win = node("win-0")
    win["metadata"]["annotations"] = {"corp/owner-email": "internal-only-annotation",
                                      "kubectl-win.io/ignore": "windows-node-untainted"}
    win["status"]["nodeInfo"]["machineID"] = "machine-id-0f1e2d"
    win["status"]["addresses"] = [{"type": "InternalIP", "address": "10.240.0.4"},
                                  {"type": "InternalDNS", "address": "win-0.corp.internal"}]
    spec = windows_spec(memory=None)
    container = spec["containers"][0]
    container.update({
        "command": ["powershell", "/opt/start-secret.sh"], "args": ["--admin-key=K3Y-VALUE"],
        "env": [{"name": "DB_PASSWORD", "value": "hunter2-db-password"},
                {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "from-secret-ref", "key": "k"}}}],
        "envFrom": [{"secretRef": {"name": "from-secret-ref"}}],
        "livenessProbe": {"httpGet": {"path": "/", "port": 80,
                                      "httpHeaders": [{"name": "X-Key", "value": "probe-secret-header"}]}},
        "lifecycle": {"preStop": {"exec": {"command": ["prestop-secret-cmd"]}}},
    })
    spec["securityContext"] = {"windowsOptions": {
        "gmsaCredentialSpec": json.dumps({"DomainJoinConfig": {"Sid": "S-1-5-21-3623811015-3361044348"}})}}
    deploy = workload("Deployment", "web", spec,
                      annotations={"deployment.kubernetes.io/revision": "internal-only-annotation"},
                      template_annotations={"container.apparmor.security.beta.kubernetes.io/app": "runtime/default"})
    pod = deployment_pod("web", "abcde", spec, node="win-0", statuses=[waiting(
        "app", "registry.example.com/app:1", "ErrImagePull",
        'failed to pull: unexpected status 401, Authorization: Bearer ghp_tok3nInEventText')])
    pod["metadata"]["annotations"] = {"sidecar.example.com/config": "internal-only-annotation"}
    pull = event(("Pod", "shop", pod["metadata"]["name"]), "Failed",
                 "hcs::CreateComputeSystem: The container operating system does not match the host operating "
                 "system. (0xc0370101) token: ghp_tok3nInEventText", host="win-0")
    return [win, deploy, pod, pull]


def _write(path: Path, objs: list[dict]) -> str:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    return str(path)


@pytest.mark.parametrize("source", ["sensitive", "sample"])
def test_a_shared_dump_gives_the_same_findings_and_keeps_no_secret(tmp_path, source):
    raw = _write(tmp_path / "raw.json", _sensitive_objects()) if source == "sensitive" else str(SAMPLE_DUMP)
    shared = tmp_path / "shared.json"
    first = run_cli("doctor", "--from-dump", raw, "-o", "json", "--save-dump", str(shared))
    again = run_cli("doctor", "--from-dump", str(shared), "-o", "json")
    assert first.exit_code == again.exit_code == 1, first.stderr
    assert again.json["findings"] == first.json["findings"]
    text = shared.read_text()
    assert [s for s in SECRETS if s in text] == []
    assert [s for s in SECRETS if s in first.stdout] == [] or source == "sample"
    document = json.loads(text)
    assert document["kubectlWinNote"].startswith("Written by kubectl-win doctor --save-dump for sharing")
    assert list(document)[:3] == ["apiVersion", "kind", "kubectlWinNote"]  # read first
    assert document["kubectlWin"]["redacted"] is True


def test_a_shared_dump_keeps_what_the_checks_read(tmp_path):
    raw = _write(tmp_path / "raw.json", _sensitive_objects())
    shared = tmp_path / "shared.json"
    run_cli("doctor", "--from-dump", raw, "--save-dump", str(shared))
    items = {(o["kind"], o["metadata"]["name"]): o for o in json.loads(shared.read_text())["items"]}
    win = items[("Node", "win-0")]
    assert win["metadata"]["annotations"] == {"kubectl-win.io/ignore": "windows-node-untainted"}
    assert win["status"]["addresses"] == [{"type": "InternalIP", "address": "10.240.0.4"}]
    assert "kernelVersion" in win["status"]["nodeInfo"]
    container = items[("Deployment", "web")]["spec"]["template"]["spec"]["containers"][0]
    assert container["env"] == [{"name": "DB_PASSWORD"}, {"name": "FROM_SECRET"}]
    assert not {"command", "args", "envFrom", "livenessProbe", "lifecycle"} & set(container)
    template = items[("Deployment", "web")]["spec"]["template"]
    assert template["metadata"]["annotations"] == {
        "container.apparmor.security.beta.kubernetes.io/app": "runtime/default"}
    assert "container.apparmor.security.beta.kubernetes.io/" in read_annotation_prefixes()


def test_no_redact_keeps_the_objects_and_says_so(tmp_path):
    raw = _write(tmp_path / "raw.json", _sensitive_objects())
    full = tmp_path / "full.json"
    assert run_cli("doctor", "--from-dump", raw, "--save-dump", str(full), "--no-redact").exit_code == 1
    document = json.loads(full.read_text())
    assert "hunter2-db-password" in full.read_text() and document["kubectlWin"]["redacted"] is False
    assert "--no-redact" in document["kubectlWinNote"]
    result = run_cli("doctor", "--from-dump", raw, "--no-redact")
    assert result.exit_code == 2 and result.stderr == "error: --no-redact only applies to --save-dump PATH\n"


def test_the_html_report_quotes_no_credential(tmp_path):
    raw = _write(tmp_path / "raw.json", _sensitive_objects())
    report = tmp_path / "r.html"
    result = run_cli("doctor", "--from-dump", raw, "--report", str(report))
    assert result.exit_code == 1, result.stderr
    page = report.read_text()
    assert "0xc0370101" in page and "ghp_tok3nInEventText" not in page and "hunter2" not in page
    assert "ghp_tok3nInEventText" not in result.stdout
