"""explain on live objects, through the access layer, the test API server and the real kubectl."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.support.paths import EXAMPLE_MANIFESTS, ROOT
from tests.support.plugin_shim import install_shim, path_with


def deployment(name: str, namespace: str, os_name: str, privileged: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "nodeSelector": {"kubernetes.io/os": os_name},
        "containers": [
            {
                "name": "app",
                "image": "example.com/app:1",
                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                "securityContext": {"privileged": privileged},
            }
        ],
    }
    if os_name == "windows":
        spec["os"] = {"name": "windows"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {"tier": "web"}},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


@pytest.fixture
def seeded(apiserver: Any) -> Any:
    apiserver.put(
        deployment("iis", "web", "windows"), deployment("nginx", "web", "linux"), deployment("api", "shop", "windows")
    )
    return apiserver


def kube(apiserver: Any) -> list[str]:
    return ["--kubeconfig", str(apiserver.kubeconfig)]


def test_type_in_namespace(seeded: Any) -> None:
    result = run_cli("explain", "deploy", "-n", "web", *kube(seeded))
    assert result.exit_code == 1, result.stderr
    lines = [line for line in result.stdout.splitlines() if "ERROR" in line]
    assert len(lines) == 1 and "web/Deployment/iis" in lines[0]
    assert result.stdout.splitlines()[0].split()[:2] == ["OBJECT", "PATH"]


def test_type_slash_name_json(seeded: Any) -> None:
    data = run_cli("explain", "deployments/api", "-n", "shop", "-o", "json", *kube(seeded)).json
    [finding] = data["findings"]
    assert finding["object"] == {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "api"}
    assert finding["file"] is None and finding["line"] is None
    assert finding["path"] == "spec.template.spec.containers[0].securityContext.privileged"


def test_a_runtime_class_of_the_cluster_carries_the_os_selector_as_doctor_reads_it(apiserver: Any) -> None:
    carried = deployment("iis", "web", "windows", privileged=False)
    spec = carried["spec"]["template"]["spec"]
    del spec["nodeSelector"], spec["containers"][0]["securityContext"]
    spec["runtimeClassName"] = "windows-2022"
    apiserver.put(carried)
    result = run_cli("explain", "deploy/iis", "-n", "web", "-o", "json", *kube(apiserver))
    assert [(f["id"], f["severity"]) for f in result.json["findings"]] == [
        ("windows-workload-no-os-selector", "warning")]  # the cluster has no such RuntimeClass
    apiserver.put({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "windows-2022"},
                   "handler": "runhcs-wcow-process", "scheduling": {"nodeSelector": {"kubernetes.io/os": "windows"}}})
    assert run_cli("explain", "deploy/iis", "-n", "web", "-o", "json", *kube(apiserver)).json["findings"] == []
    apiserver.auth.deny("list", "runtimeclasses")
    [unread] = run_cli("explain", "deploy/iis", "-n", "web", "-o", "json", *kube(apiserver)).json["findings"]
    assert unread["severity"] == "info" and "RuntimeClass windows-2022 (not read)" in unread["message"]


def test_all_namespaces_and_selector(seeded: Any) -> None:
    data = run_cli("explain", "deployments", "-A", "-l", "tier=web", "-o", "json", *kube(seeded)).json
    assert sorted(f["object"]["name"] for f in data["findings"]) == ["api", "iis"]
    assert data["summary"]["objects"] == 3
    none = run_cli("explain", "deployments", "-A", "-l", "tier=db", "-o", "json", *kube(seeded)).json
    assert none["summary"]["objects"] == 0


def test_missing_object_and_wrong_type_are_one_line_errors(seeded: Any) -> None:
    missing = run_cli("explain", "deploy/nope", "-n", "web", *kube(seeded))
    assert missing.exit_code == 2 and len(missing.stderr.strip().splitlines()) == 1 and "nope" in missing.stderr
    wrong = run_cli("explain", "svc/web", "-n", "web", *kube(seeded))
    assert wrong.exit_code == 2 and "no pod spec" in wrong.stderr


def test_unreachable_cluster_exits_3(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:9'}\n"
        "users:\n- name: u\n  user: {token: secret-token-value}\ncontexts:\n- name: x\n"
        "  context: {cluster: c, user: u}\ncurrent-context: x\n"
    )
    result = run_cli("explain", "pods", "--kubeconfig", str(config), "--request-timeout", "2")
    assert result.exit_code == 3
    assert len(result.stderr.strip().splitlines()) == 1
    assert "secret-token-value" not in result.stderr


def test_through_the_real_kubectl(seeded: Any, tmp_path: Path, kubectl: str) -> None:
    install_shim(tmp_path / "bin")
    env = seeded.kubectl_env()
    env["PATH"] = path_with(tmp_path / "bin")
    listed = subprocess.run(
        [kubectl, "get", "deploy", "-n", "web", "-o", "name"], env=env, capture_output=True, text=True, timeout=60
    )
    assert listed.returncode == 0, listed.stderr
    assert "deployment.apps/iis" in listed.stdout
    live = subprocess.run(
        [kubectl, "win", "explain", "deploy", "-n", "web", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert live.returncode == 1, live.stderr
    assert '"windows-privileged"' in live.stdout
    example = EXAMPLE_MANIFESTS
    offline = subprocess.run(
        [kubectl, "win", "explain", "-f", str(example)], env=env, capture_output=True, text=True, timeout=60
    )
    assert offline.returncode == 1 and "windows-privileged" not in offline.stderr
    assert "ERROR" in offline.stdout


def test_offline_explain_does_not_import_kubernetes(tmp_path: Path) -> None:
    example = EXAMPLE_MANIFESTS
    code = (
        "import sys\nfrom kubectl_win.cli import main\n"
        f"rc = main(['explain', '-f', {str(example)!r}, '-o', 'json'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('kubernetes', 'urllib3', 'aiohttp'))\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run(
        [os.sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert "HEAVY []" in out.stdout, out.stdout[-500:] + out.stderr
