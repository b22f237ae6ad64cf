"""One answer across commands: explain's findings on an object are doctor's on the same object read from a dump,
for the rules both apply (the missing OS selector, HostProcess users, and on pods every field rule), and what
scaffold writes passes explain without an error. Objects: the cases of the issue and every workload of the
published manifest corpus (and a bare pod of each of their templates)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_win.catalog import doctor_checks
from kubectl_win.explain.rules import check_ids
from kubectl_win.kinds import POD_SPEC_PATHS
from kubectl_win.manifests.objects import pod_templates
from tests.support.cli import run_cli
from tests.support.kube_objects import node, runtime_class
from tests.support.tools import require_corpus

NODES = [node("win-0"), node("linux-0", os="linux")]  # a mixed cluster: a Windows pod can land on either
# The ids doctor reports on workloads itself, which explain's field rules also have: compared on every object.
SHARED = set(check_ids()) & set(doctor_checks())
LIMITS = {"limits": {"cpu": "500m", "memory": "512Mi"}}


def windows_deploy(name: str, spec: dict[str, Any] | None = None, *, selector: bool = True) -> dict[str, Any]:
    template: dict[str, Any] = {
        "os": {"name": "windows"},
        "containers": [{"name": "web", "image": "mcr.microsoft.com/windows/servercore/iis:ltsc2022",
                        "resources": LIMITS}],
    }
    if selector:
        template["nodeSelector"] = {"kubernetes.io/os": "windows"}
    template.update(spec or {})
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "shop"},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": template}}}


def hostprocess_pod(name: str, user: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {"nodeSelector": {"kubernetes.io/os": "windows"}, "hostNetwork": True,
                     "securityContext": {"windowsOptions": {"hostProcess": True, "runAsUserName": user}},
                     "containers": [{"name": "agent", "image": "mcr.microsoft.com/oss/kubernetes/"
                                     "windows-host-process-containers-base-image:v1.0.0", "resources": LIMITS}]}}


def running(pod: dict[str, Any]) -> dict[str, Any]:
    """The pod as the cluster has it once scheduled: on the Windows node, Running."""
    pod["spec"]["nodeName"] = "win-0"
    pod["status"] = {"phase": "Running"}
    return pod


def windows_pod_of(deploy: dict[str, Any]) -> dict[str, Any]:
    template = deploy["spec"]["template"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {**template["metadata"], "name": "web-0",
                                                            "namespace": "shop"}, "spec": template["spec"]}


WINDOWS_RC = runtime_class("windows-2022", nodeSelector={"kubernetes.io/os": "windows"})
CASES: dict[str, tuple[list[dict[str, Any]], set[str]]] = {
    # objects (the last is compared; the others are read beside it), the ids both must report on it
    "spec.os without a selector": ([windows_deploy("web", selector=False)], {"windows-workload-no-os-selector"}),
    "a selector": ([windows_deploy("web")], set()),
    "a RuntimeClass that carries the selector": (
        [WINDOWS_RC, windows_deploy("web", {"runtimeClassName": "windows-2022"}, selector=False)], set()),
    "a RuntimeClass neither can read": (
        [windows_deploy("web", {"runtimeClassName": "windows-2022"}, selector=False)],
        {"windows-workload-no-os-selector"}),
    "HostProcess as ContainerUser": ([hostprocess_pod("agent", "ContainerUser")], {"windows-hostprocess-user"}),
    "HostProcess as a domain user": ([hostprocess_pod("agent", "CORP\\svc")], {"windows-hostprocess-user"}),
    "HostProcess as SYSTEM": ([hostprocess_pod("agent", "NT AUTHORITY\\SYSTEM")], set()),
    "a live HostProcess pod on its node as ContainerAdministrator": (
        [running(hostprocess_pod("agent", "ContainerAdministrator"))], {"windows-hostprocess-user"}),
    "a live pod without a selector, placed by its node name": (
        [running(windows_pod_of(windows_deploy("web", selector=False)))], set()),
}


def key(ref: dict[str, Any]) -> tuple[str, str, str]:
    return (str(ref.get("kind")), str(ref.get("namespace") or ""), str(ref.get("name")))


def explain_on(tmp_path: Path, objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    result = run_cli("explain", "-f", str(path), "-o", "json")
    assert result.exit_code in (0, 1) and result.stderr == "", result.stderr
    return [f for f in result.json["findings"] if key(f["object"]) == key(_ref(objs[-1]))]


def doctor_on(tmp_path: Path, objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [*NODES, *objs]}))
    result = run_cli("doctor", "--from-dump", str(path), "-o", "json")
    assert result.exit_code in (0, 1), result.stderr
    return [f for f in result.json["findings"] if key(f["object"]) == key(_ref(objs[-1]))]


def _ref(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    return {"kind": obj.get("kind"), "namespace": meta.get("namespace"), "name": meta.get("name")}


def compared(findings: list[dict[str, Any]], kind: str) -> set[tuple[str, str, str]]:
    """(id, severity, path) of the findings both commands report on such an object: on a pod, every field rule
    (doctor lints live pods with explain's rules); on a controller, the rules doctor checks itself. A memory limit
    is one finding per container in explain and one per workload in doctor: compared by id and severity."""
    ids = set(check_ids()) if kind == "Pod" else SHARED
    return {(f["id"], f["severity"], "" if f["id"] == "windows-memory-limit-missing" else f["path"])
            for f in findings if f["id"] in ids}


def assert_one_answer(tmp_path: Path, objs: list[dict[str, Any]]) -> set[str]:
    kind = str(objs[-1]["kind"])
    explained = compared(explain_on(tmp_path, objs), kind)
    doctored = compared(doctor_on(tmp_path, objs), kind)
    assert explained == doctored
    return {finding[0] for finding in explained}


@pytest.mark.parametrize("case", sorted(CASES))
def test_explain_and_doctor_agree_on_the_cases(tmp_path: Path, case: str) -> None:
    objs, expected = CASES[case]
    found = assert_one_answer(tmp_path, copy.deepcopy(objs))
    assert found & {"windows-workload-no-os-selector", "windows-hostprocess-user"} == expected


def test_an_unread_runtime_class_is_advice_in_both(tmp_path: Path) -> None:
    objs = [windows_deploy("web", {"runtimeClassName": "windows-2022"}, selector=False)]
    [explained] = [f for f in explain_on(tmp_path, objs) if f["id"] == "windows-workload-no-os-selector"]
    [doctored] = [f for f in doctor_on(tmp_path, objs) if f["id"] == "windows-workload-no-os-selector"]
    assert explained["severity"] == doctored["severity"] == "info"
    assert "RuntimeClass windows-2022 (not read)" in explained["message"]
    assert "RuntimeClass windows-2022 (not read)" in doctored["message"]


def corpus_objects() -> list[tuple[str, dict[str, Any]]]:
    """Every pod-bearing object of the corpus, and a bare pod of each of their pod templates."""
    out = []
    for path in sorted(require_corpus().iterdir()):
        for doc in yaml.safe_load_all(path.read_text()):
            if not isinstance(doc, dict) or doc.get("kind") not in POD_SPEC_PATHS:
                continue
            out.append((f"{path.name}:{doc['kind']}", doc))
            if doc["kind"] != "Pod":
                template = pod_templates(doc)[0]
                meta = doc.get("metadata") or {}
                pod_meta = {**copy.deepcopy(template.metadata), "name": f"{meta.get('name')}-pod"}
                if meta.get("namespace"):
                    pod_meta["namespace"] = meta["namespace"]
                out.append((f"{path.name}:Pod", {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta,
                                                 "spec": copy.deepcopy(template.spec)}))
    return out


def test_explain_and_doctor_agree_on_the_published_manifests(tmp_path: Path) -> None:
    objects = corpus_objects()
    assert len(objects) >= 50
    disagree = []
    for name, obj in objects:
        explained = compared(explain_on(tmp_path, [obj]), obj["kind"])
        doctored = compared(doctor_on(tmp_path, [obj]), obj["kind"])
        if explained != doctored:
            disagree.append((name, sorted(explained - doctored), sorted(doctored - explained)))
    assert disagree == []


SCAFFOLDS = [
    ["deployment", "web", "--image", "mcr.microsoft.com/windows/servercore/iis:ltsc2022", "--port", "80"],
    ["deployment", "web", "--image", "mcr.microsoft.com/windows/servercore/iis:ltsc2022", "--windows-build",
     "ltsc2022", "--run-as-user-name", "ContainerUser"],
    ["statefulset", "db", "--image", "example.com/db:1", "--windows-build", "ltsc2025", "--port", "1433"],
    ["daemonset", "agent", "--image", "example.com/agent:1", "--hostprocess"],
    ["daemonset", "agent", "--image", "example.com/agent:1", "--hostprocess", "--run-as-user-name",
     "NT AUTHORITY\\Local service"],
    ["daemonset", "agent", "--image", "example.com/agent:1", "--hostprocess", "--run-as-user-name", "hpc-agents"],
    ["job", "batch", "--image", "example.com/batch:1", "--gmsa", "webapp1"],
    ["cronjob", "nightly", "--image", "example.com/batch:1", "--schedule", "0 2 * * *", "--windows-build", "ltsc2019"],
    ["deployment", "web", "--image", "example.com/web:1", "--runtime-class", "windows-2022"],
]


@pytest.mark.parametrize("argv", SCAFFOLDS, ids=lambda argv: " ".join(argv[:1] + argv[2:]))
def test_what_scaffold_writes_passes_explain(argv: list[str]) -> None:
    written = run_cli("scaffold", *argv)
    assert written.exit_code == 0, written.stderr
    checked = run_cli("explain", "-f", "-", "-o", "json", stdin=written.stdout)
    assert checked.exit_code == 0, checked.stdout
    findings = [(f["id"], f["severity"]) for f in checked.json["findings"]]
    assert not [f for f in findings if f[1] == "error"]
    # A RuntimeClass in another file may carry the OS selector: advice, never a warning.
    assert ("windows-workload-no-os-selector", "warning") not in findings
