"""scaffold against the test API server over real HTTPS: --from-cluster reads the real taints and builds,
node-taint's commands run through the real kubectl, and generated objects survive a create/get round trip."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import run_cli

WS2022, WS2019 = "10.0.20348", "10.0.17763"


def _node(name: str, os_name: str = "windows", build: str | None = None, taints: list[dict] | None = None) -> dict:
    labels = {"kubernetes.io/os": os_name}
    if build:
        labels["node.kubernetes.io/windows-build"] = build
    node: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
    if taints:
        node["spec"] = {"taints": taints}
    return node


def _taint(key: str, value: str | None, effect: str = "NoSchedule") -> dict:
    return {"key": key, "effect": effect, **({"value": value} if value is not None else {})}


def _pod_spec(text: str) -> dict:
    obj = next(d for d in yaml.safe_load_all(text) if d)
    return obj["spec"]["template"]["spec"]


def _scaffold(apiserver, *argv: str):
    return run_cli("scaffold", *argv, "--kubeconfig", str(apiserver.kubeconfig))


def test_from_cluster_uses_the_real_taints_and_the_only_build(apiserver) -> None:
    vendor = _taint("node.kubernetes.io/os", "windows")
    not_ready = _taint("node.kubernetes.io/not-ready", None, "NoExecute")
    apiserver.put(_node("win-1", build=WS2022, taints=[vendor, not_ready]),
                  _node("win-2", build=WS2022, taints=[vendor]),
                  _node("linux-1", "linux", taints=[_taint("dedicated", "gpu")]))
    result = _scaffold(apiserver, "deployment", "web", "--image", "example.com/web:ltsc2022", "--from-cluster")
    assert result.exit_code == 0, result.stderr
    spec = _pod_spec(result.stdout)
    assert spec["nodeSelector"] == {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": WS2022}
    assert spec["tolerations"] == [{"key": "node.kubernetes.io/os", "operator": "Equal", "value": "windows",
                                    "effect": "NoSchedule"}]
    assert result.stderr == ""


def test_from_cluster_build_is_checked_against_the_image(apiserver) -> None:
    apiserver.put(_node("win-1", build=WS2022))
    result = _scaffold(apiserver, "deployment", "web", "--image", "example.com/web:ltsc2019", "--from-cluster")
    assert result.exit_code == 0
    assert "built for Windows Server 2019 (10.0.17763) but the pods are pinned to Windows Server 2022" in result.stderr
    # The node has no taint yet: the pods tolerate the one doctor and `scaffold node-taint` will ask for.
    assert _pod_spec(result.stdout)["tolerations"] == [
        {"key": "os", "operator": "Equal", "value": "Win2022", "effect": "NoSchedule"}]


def test_from_cluster_with_several_builds_tolerates_every_scheme_and_warns(apiserver) -> None:
    apiserver.put(_node("win-19", build=WS2019, taints=[_taint("os", "Win1809")]),
                  _node("win-22", build=WS2022, taints=[_taint("os", "windows")]))
    result = _scaffold(apiserver, "job", "batch", "--image", "example.com/batch:1", "--from-cluster")
    assert result.exit_code == 0
    spec = _pod_spec(result.stdout)
    assert spec["nodeSelector"] == {"kubernetes.io/os": "windows"}
    assert [t["value"] for t in spec["tolerations"]] == ["Win1809", "windows"]
    assert "several builds (10.0.17763, 10.0.20348)" in result.stderr
    pinned = _scaffold(apiserver, "job", "batch", "--image", "example.com/batch:1", "--from-cluster",
                       "--windows-build", "ltsc2019")
    spec = _pod_spec(pinned.stdout)
    assert spec["tolerations"] == [{"key": "os", "operator": "Equal", "value": "Win1809", "effect": "NoSchedule"}]
    assert pinned.stderr == ""


def test_from_cluster_without_matching_nodes_warns(apiserver) -> None:
    apiserver.put(_node("linux-1", "linux"))
    result = _scaffold(apiserver, "deployment", "web", "--image", "example.com/web:1", "--from-cluster")
    assert result.exit_code == 0
    assert "no Windows nodes" in result.stderr
    apiserver.put(_node("win-22", build=WS2022))
    missing = _scaffold(apiserver, "runtimeclass", "--windows-build", "ltsc2025", "--from-cluster")
    assert missing.exit_code == 0
    assert "no Windows node in the cluster runs Windows Server 2025" in missing.stderr


def test_from_cluster_unreachable_exits_3(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:9"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "secret-token-value"}}]}))
    result = run_cli("scaffold", "deployment", "web", "--image", "example.com/web:1", "--from-cluster",
                     "--kubeconfig", str(kubeconfig), "--request-timeout", "2")
    assert result.exit_code == 3, result
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("error: ")
    assert "secret-token-value" not in result.stderr
    assert result.stdout == ""


def test_node_taint_commands_taint_exactly_the_untainted_nodes(apiserver, kubectl: str) -> None:
    apiserver.put(_node("win-a", build=WS2022, taints=[_taint("os", "Win2022")]),
                  _node("win-b", build=WS2019), _node("win-c", build=WS2022), _node("linux-1", "linux"))
    result = _scaffold(apiserver, "node-taint", "--from-cluster")
    assert result.exit_code == 0, result.stderr
    commands = [line for line in result.stdout.splitlines() if line.startswith("kubectl ")]
    assert commands == ["kubectl taint nodes win-b os=Win1809:NoSchedule",
                        "kubectl taint nodes win-c os=Win2022:NoSchedule"]
    assert "# already tainted: win-a" in result.stdout
    assert "--register-with-taints=os=Win2022:NoSchedule" in result.stdout
    for command in commands:
        done = subprocess.run(command.split(), env=apiserver.kubectl_env(), capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
    after = _scaffold(apiserver, "node-taint", "--from-cluster", "-o", "json")
    plan = json.loads(after.stdout)
    assert plan["commands"] == []
    assert sorted(plan["alreadyTainted"]) == ["win-a", "win-b", "win-c"]


def test_node_taint_follows_the_scheme_the_cluster_uses(apiserver) -> None:
    apiserver.put(_node("win-a", build=WS2022, taints=[_taint("os", "windows")]), _node("win-b", build=WS2019))
    result = _scaffold(apiserver, "node-taint", "--from-cluster")
    assert "kubectl taint nodes win-b os=windows:NoSchedule" in result.stdout.splitlines()


def test_node_taint_offline_lists_the_supported_builds() -> None:
    result = run_cli("scaffold", "node-taint")
    assert result.exit_code == 0
    assert ("kubectl taint nodes -l kubernetes.io/os=windows,node.kubernetes.io/windows-build=10.0.17763 "
            "os=Win1809:NoSchedule") in result.stdout.splitlines()
    assert "--register-with-taints=os=Win2025:NoSchedule" in result.stdout


ROUND_TRIP = {
    "deployment": ["deployment", "web", "--image", "example.com/web:ltsc2022", "--port", "80",
                   "--windows-build", "ltsc2022", "--service", "NodePort"],
    "statefulset": ["statefulset", "db", "--image", "example.com/db:1", "--port", "1433", "--service", "ClusterIP"],
    "daemonset": ["daemonset", "agent", "--image", "example.com/agent:1", "--hostprocess"],
    "job": ["job", "once", "--image", "example.com/job:1", "--gmsa", "webapp1"],
    "cronjob": ["cronjob", "nightly", "--image", "example.com/job:1", "--taint", "os=windows:NoSchedule"],
    "runtimeclass": ["runtimeclass", "--windows-build", "ltsc2022"],
}


def _strip_server_fields(obj: dict) -> dict:
    obj = json.loads(json.dumps(obj))
    for key in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "annotations"):
        obj["metadata"].pop(key, None)
    obj.pop("status", None)
    return obj


@pytest.mark.parametrize("case", sorted(ROUND_TRIP))
def test_generated_objects_round_trip_through_kubectl(case: str, apiserver, kubectl: str, tmp_path: Path) -> None:
    namespace = [] if case == "runtimeclass" else ["-n", "apps"]
    result = run_cli("scaffold", *ROUND_TRIP[case], *namespace, "--out", str(tmp_path), "-o", "json")
    assert result.exit_code == 0, result.stderr
    files = sorted(tmp_path.glob("*.json"))
    assert files
    for path in files:
        sent = json.loads(path.read_text(encoding="utf-8"))
        env = apiserver.kubectl_env()
        # The test server serves no OpenAPI document; the schema is checked in test_scaffold_templates.
        created = subprocess.run([kubectl, "create", "--validate=false", "-f", str(path)], env=env,
                                 capture_output=True, text=True, timeout=60)
        assert created.returncode == 0, created.stderr
        meta = sent["metadata"]
        get = [kubectl, "get", sent["kind"].lower(), meta["name"], "-o", "json"]
        if meta.get("namespace"):
            get += ["-n", meta["namespace"]]
        got = subprocess.run(get, env=env, capture_output=True, text=True, timeout=60)
        assert got.returncode == 0, got.stderr
        assert _strip_server_fields(json.loads(got.stdout)) == sent


def test_patch_from_cluster_adds_the_cluster_taints(apiserver, tmp_path: Path) -> None:
    apiserver.put(_node("win-1", build=WS2022, taints=[_taint("node.kubernetes.io/os", "windows")]))
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("""\
apiVersion: v1
kind: Pod
metadata:
  name: iis
spec:
  nodeSelector:
    kubernetes.io/os: windows
  tolerations:
  - key: os
    value: Win2022
    effect: NoSchedule
  containers:
  - name: iis
    image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022
""")
    link = tmp_path / "link.yaml"
    link.symlink_to(manifest)
    result = _scaffold(apiserver, "patch", "-f", str(link), "--from-cluster", "--in-place")
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink()
    pod = yaml.safe_load(manifest.read_text())
    assert pod["spec"]["nodeSelector"] == {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": WS2022}
    assert pod["spec"]["tolerations"][-1] == {"key": "node.kubernetes.io/os", "operator": "Equal", "value": "windows",
                                              "effect": "NoSchedule"}
    assert pod["spec"]["os"] == {"name": "windows"}
