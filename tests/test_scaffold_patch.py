"""scaffold patch: OS placement added to existing manifests; comments, key order and every other line survive."""

from __future__ import annotations

import difflib
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_win.manifests.objects import pod_templates
from tests.support.cli import run_cli
from tests.support.tools import require_corpus

# shared/ sits beside the checkout (here and in CI); tests skip when it is absent.

MIXED = """\
# Rendered by the chart
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web   # the web tier
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      # the app container
      containers:
        - name: web
          image: "nginx:1.27"   # pinned
          ports:
            - containerPort: 80
      # trailing comment
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
data:
  key: 'value'   # quoted on purpose
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: win
spec:
  selector:
    matchLabels: {app: win}
  template:
    metadata:
      labels: {app: win}
    spec:
      nodeSelector:
        kubernetes.io/os: windows   # Windows only
      containers:
      - name: c
        image: mcr.microsoft.com/windows/nanoserver:ltsc2022
        resources:
          limits: {cpu: "1", memory: 1Gi}
"""


def _docs(text: str) -> list[Any]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def _spec(obj: dict) -> dict:
    return pod_templates(obj)[0].spec


def _contains(new: Any, old: Any) -> bool:
    """Everything in `old` is still in `new` (lists may have grown at the end or the front)."""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and _contains(new[k], v) for k, v in old.items())
    if isinstance(old, list):
        if not isinstance(new, list) or len(new) < len(old):
            return False
        return all(_contains(a, b) for a, b in zip(new[-len(old):] if old else [], old, strict=True)) or all(
            _contains(a, b) for a, b in zip(new[: len(old)], old, strict=True))
    return new == old


def _only_insertions(before: str, after: str) -> bool:
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    return {op[0] for op in matcher.get_opcodes()} <= {"equal", "insert"}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_linux_and_windows_workloads_get_their_placement(tmp_path: Path) -> None:
    path = _write(tmp_path, "app.yaml", MIXED)
    result = run_cli("scaffold", "patch", "-f", str(path))
    assert result.exit_code == 0, result.stderr
    docs = _docs(result.stdout)
    web, cfg, win = docs
    assert _spec(web)["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert "os" not in _spec(web) and "tolerations" not in _spec(web)
    assert cfg == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"key": "value"}}
    spec = _spec(win)
    assert spec["os"] == {"name": "windows"}
    assert spec["nodeSelector"] == {"kubernetes.io/os": "windows"}
    assert spec["tolerations"] == [{"key": "os", "operator": "Exists", "effect": "NoSchedule"}]
    for before, after in zip(_docs(MIXED), docs, strict=True):
        assert _contains(after, before)
    assert path.read_text(encoding="utf-8") == MIXED  # without --in-place the file is untouched


def test_comments_quotes_and_key_order_survive() -> None:
    result = run_cli("scaffold", "patch", "-f", "-", stdin=MIXED)
    out = result.stdout
    for line in MIXED.splitlines():
        assert line in out.splitlines(), f"lost line: {line!r}"
    # Only insertions: every original line is kept, in order, byte for byte.
    assert _only_insertions(MIXED, out)
    # The comment that introduces containers still sits right above it.
    lines = out.splitlines()
    assert lines[lines.index("      containers:") - 1] == "      # the app container"


def test_only_added_lines_in_the_diff(tmp_path: Path) -> None:
    path = _write(tmp_path, "app.yaml", MIXED)
    result = run_cli("scaffold", "patch", "-f", str(path), "--dry-run")
    assert result.exit_code == 0
    body = [line for line in result.stdout.splitlines()[2:] if not line.startswith("@@")]
    assert result.stdout.startswith(f"--- {path}\n+++ {path}\n")
    assert not [line for line in body if line.startswith("-")]
    added = [line[1:].strip() for line in body if line.startswith("+")]
    assert added == ["nodeSelector:", "kubernetes.io/os: linux", "os:", "name: windows", "tolerations:",
                     "- key: os", "operator: Exists", "effect: NoSchedule"]
    assert path.read_text(encoding="utf-8") == MIXED


def test_in_place_rewrites_atomically_and_is_idempotent(tmp_path: Path) -> None:
    path = _write(tmp_path, "app.yaml", MIXED)
    untouched = _write(tmp_path, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    os.chmod(path, 0o640)
    before_mtime = untouched.stat().st_mtime_ns
    result = run_cli("scaffold", "patch", "-f", str(tmp_path), "--in-place")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert f"patched {path}" in result.stderr
    text = path.read_text(encoding="utf-8")
    assert "kubernetes.io/os: linux" in text and "name: windows" in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert untouched.stat().st_mtime_ns == before_mtime
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.yaml", "cm.yaml"]  # no temporary files left
    again = run_cli("scaffold", "patch", "-f", str(path), "--dry-run")
    assert again.exit_code == 0 and again.stdout == ""


def test_unreadable_input_changes_nothing(tmp_path: Path) -> None:
    good = _write(tmp_path, "a.yaml", MIXED)
    _write(tmp_path, "b.yaml", "spec: {{ .Values.spec }}\n  bad: [\n")
    result = run_cli("scaffold", "patch", "-f", str(tmp_path), "--in-place")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "b.yaml" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert good.read_text(encoding="utf-8") == MIXED
    missing = run_cli("scaffold", "patch", "-f", str(tmp_path / "nope.yaml"))
    assert missing.exit_code == 2 and "no such file" in missing.stderr


def test_os_field_is_withheld_when_the_api_would_then_reject_the_pod() -> None:
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: hardened}
spec:
  selector: {matchLabels: {app: h}}
  template:
    metadata: {labels: {app: h}}
    spec:
      nodeSelector:
        kubernetes.io/os: windows
      containers:
      - name: app
        image: example.com/app:1
        securityContext:
          allowPrivilegeEscalation: false
"""
    result = run_cli("scaffold", "patch", "-f", "-", stdin=text)
    assert result.exit_code == 0
    spec = _spec(_docs(result.stdout)[0])
    assert "os" not in spec
    assert spec["tolerations"]
    assert spec["containers"][0]["securityContext"] == {"allowPrivilegeEscalation": False}
    assert "spec.os.name not set" in result.stderr
    assert "spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation" in result.stderr


def test_placed_workloads_are_left_alone() -> None:
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: placed}
spec:
  selector: {matchLabels: {app: p}}
  template:
    metadata: {labels: {app: p}}
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: kubernetes.io/os, operator: In, values: [linux]}
      containers:
      - {name: app, image: nginx}
---
apiVersion: v1
kind: Pod
metadata: {name: win}
spec:
  os: {name: windows}
  nodeSelector: {kubernetes.io/os: windows}
  tolerations:
  - {key: os, operator: Equal, value: windows, effect: NoSchedule}
  containers:
  - {name: app, image: example.com/app:1}
"""
    result = run_cli("scaffold", "patch", "-f", "-", "--dry-run", stdin=text)
    assert result.exit_code == 0
    assert result.stdout == ""


def test_ignore_annotation_leaves_an_object_alone() -> None:
    text = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  annotations:
    kubectl-win.io/ignore: scaffold-patch
spec:
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec:
      containers:
      - {name: agent, image: example.com/multi-os-agent:1}
"""
    result = run_cli("scaffold", "patch", "-f", "-", stdin=text)
    assert result.exit_code == 0
    assert result.stdout == text
    plain = run_cli("scaffold", "patch", "-f", "-", stdin=text.replace("scaffold-patch", "windows-privileged"))
    assert "kubernetes.io/os: linux" in plain.stdout


def test_build_and_taints_are_added_to_existing_blocks() -> None:
    text = """\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: "0 1 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          nodeSelector:
            kubernetes.io/os: windows
          tolerations:
            - key: os
              operator: Equal
              value: windows
              effect: NoSchedule
          containers:
            - name: job
              image: example.com/job:ltsc2022
"""
    result = run_cli("scaffold", "patch", "-f", "-", "--windows-build", "ltsc2022",
                     "--taint", "node.kubernetes.io/os=windows:NoSchedule", stdin=text)
    assert result.exit_code == 0, result.stderr
    spec = _spec(_docs(result.stdout)[0])
    assert spec["nodeSelector"] == {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}
    assert {"key": "node.kubernetes.io/os", "operator": "Equal", "value": "windows",
            "effect": "NoSchedule"} in spec["tolerations"]
    assert {"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"} in spec["tolerations"]
    assert spec["os"] == {"name": "windows"}
    assert _only_insertions(text, result.stdout)


def test_json_list_and_crlf_inputs(tmp_path: Path) -> None:
    items = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a"},
         "spec": {"selector": {}, "template": {"spec": {"containers": [{"name": "a", "image": "nginx"}]}}}}]}
    path = _write(tmp_path, "list.json", json.dumps(items, indent=4) + "\n")
    result = run_cli("scaffold", "patch", "-f", str(path))
    assert result.exit_code == 0, result.stderr
    patched = json.loads(result.stdout)
    assert patched["items"][0]["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert result.stdout.splitlines()[1].startswith("    ")  # keeps the 4-space indent
    crlf = MIXED.replace("\n", "\r\n")
    out = run_cli("scaffold", "patch", "-f", "-", stdin=crlf).stdout
    assert "\r\n" in out and "\n" not in out.replace("\r\n", "")


@pytest.mark.parametrize("options", [[], ["--windows-build", "ltsc2022", "--taint", "os=Win2022:NoSchedule"]])
def test_corpus_patches_keep_every_original_value(options: list[str]) -> None:
    from kubectl_win.explain import infer_target

    files = sorted(p for p in require_corpus().iterdir() if p.suffix in (".yaml", ".yml"))
    assert files
    for path in files:
        result = run_cli("scaffold", "patch", "-f", str(path), *options)
        assert result.exit_code == 0, (path, result.stderr)
        original = path.read_text(encoding="utf-8")
        if not any(line.strip() == "{" for line in original.splitlines()):  # flow style is dumped again
            assert _only_insertions(original, result.stdout), path
        before, after = _docs(original), _docs(result.stdout)
        assert len(before) == len(after), path
        for old, new in zip(before, after, strict=True):
            assert _contains(new, old), path
            for template in pod_templates(new) if isinstance(new, dict) else []:
                target = infer_target(template.spec, template.metadata)
                selector = template.spec.get("nodeSelector") or {}
                if target.windows:
                    assert selector.get("kubernetes.io/os") == "windows", path
                    if options:
                        assert selector.get("node.kubernetes.io/windows-build"), path
                        tolerations = template.spec["tolerations"]
                        wanted = {"key": "os", "operator": "Equal", "value": "Win2022", "effect": "NoSchedule"}
                        tolerate_all = [t for t in tolerations if t.get("operator") == "Exists" and not t.get("key")
                                        and t.get("effect") in (None, "NoSchedule")]
                        assert wanted in tolerations or tolerate_all, path
                else:
                    assert target.os == "linux", path
        again = run_cli("scaffold", "patch", "-f", "-", "--dry-run", *options, stdin=result.stdout)
        assert again.stdout == "", f"{path}: a second patch changes more"


ODD = {
    "null blocks": "kind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector:\n  tolerations:\n  containers:\n"
                   "  - {name: c, image: mcr.microsoft.com/windows/nanoserver:ltsc2022}\n",
    "selector not a map": "kind: Pod\nmetadata: {name: q}\nspec:\n  nodeSelector: weird\n  containers:\n"
                          "  - {name: c, image: mcr.microsoft.com/windows/nanoserver:ltsc2022}\n",
    "tolerations not a list": "kind: Pod\nmetadata: {name: r}\nspec:\n  tolerations: {key: os}\n"
                              "  nodeSelector: {kubernetes.io/os: windows}\n  containers: []\n",
    "spec is a list": "kind: Deployment\nmetadata: {name: d}\nspec: [1, 2]\n",
    "template missing": "kind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1}\n",
    "scalar document": "just a string\n",
    "empty documents": "---\n---\n# only a comment\n",
    "list of lists": "kind: List\nitems: [[1], {kind: Pod, spec: {containers: [{name: c, image: nginx}]}}]\n",
}


@pytest.mark.parametrize("case", sorted(ODD))
def test_odd_shapes_never_crash(case: str) -> None:
    result = run_cli("scaffold", "patch", "-f", "-", "--windows-build", "ltsc2022", stdin=ODD[case])
    assert result.exit_code == 0, result.stderr
    assert "internal error" not in result.stderr
    for doc in _docs(result.stdout):  # still YAML
        if isinstance(doc, dict) and isinstance(doc.get("spec"), dict) and "containers" in doc["spec"]:
            assert doc["spec"].get("nodeSelector") is not None
