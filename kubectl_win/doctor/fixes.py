"""Exact kubectl commands for hints: patches with the object's real names, keys and values."""

from __future__ import annotations

import json
import shlex
from typing import Any

from kubectl_win.findings import ObjectRef

_RESOURCE = {"Deployment": "deployment", "StatefulSet": "statefulset", "DaemonSet": "daemonset", "Job": "job",
             "CronJob": "cronjob", "ReplicaSet": "replicaset", "ReplicationController": "replicationcontroller",
             "Pod": "pod"}
_SET_RESOURCES = {"Deployment", "StatefulSet", "DaemonSet", "Job", "ReplicaSet", "ReplicationController"}


def resource(ref: ObjectRef) -> str:
    return _RESOURCE.get(ref.kind, ref.kind.lower())


def _target(ref: ObjectRef) -> str:
    ns = f" -n {shlex.quote(ref.namespace)}" if ref.namespace else ""
    return f"{resource(ref)} {shlex.quote(ref.name)}{ns}"


def _nest(spec_path: str, leaf: dict[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = leaf
    for step in reversed(spec_path.split(".")):
        doc = {step: doc}
    return doc


def _json(doc: Any) -> str:
    return shlex.quote(json.dumps(doc, separators=(",", ":")))


def merge_patch(ref: ObjectRef, spec_path: str, spec_patch: dict[str, Any]) -> str:
    """`kubectl patch` with a merge patch of the pod spec (a bare pod's placement cannot change: recreate)."""
    if ref.kind == "Pod" and ("nodeSelector" in spec_patch or "affinity" in spec_patch):
        return (f"delete pod {ref.name} and recreate it with {_describe(spec_patch)} "
                f"(a running pod's placement cannot be patched)")
    return f"kubectl patch {_target(ref)} --type merge -p {_json(_nest(spec_path, spec_patch))}"


def node_selector(ref: ObjectRef, spec_path: str, labels: dict[str, str]) -> str:
    return merge_patch(ref, spec_path, {"nodeSelector": labels})


def add_toleration(ref: ObjectRef, spec_path: str, has_tolerations: bool, toleration: dict[str, str]) -> str:
    if not has_tolerations:
        return merge_patch(ref, spec_path, {"tolerations": [toleration]})
    pointer = "/" + spec_path.replace(".", "/") + "/tolerations/-"
    return f"kubectl patch {_target(ref)} --type json -p {_json([{'op': 'add', 'path': pointer, 'value': toleration}])}"


def toleration_for(key: str, value: str, effect: str) -> dict[str, str]:
    if value:
        return {"key": key, "operator": "Equal", "value": value, "effect": effect}
    return {"key": key, "operator": "Exists", "effect": effect}


def memory_limits(ref: ObjectRef, containers: list[tuple[str, str, str]]) -> str:
    """containers: (name, path, suggested limit). `kubectl set resources` where it works, a patch otherwise."""
    if ref.kind in _SET_RESOURCES:
        return " && ".join(f"kubectl set resources {resource(ref)}/{shlex.quote(ref.name)}"
                           + (f" -n {shlex.quote(ref.namespace)}" if ref.namespace else "")
                           + f" -c {shlex.quote(name)} --limits=memory={limit}" for name, _, limit in containers)
    parts = ", ".join(f"{path}.resources.limits.memory: {limit}" for _, path, limit in containers)
    verb = "recreate the pod with" if ref.kind == "Pod" else f"set in {ref.kind} {ref.name} and re-apply:"
    return f"{verb} {parts}"


def _describe(spec_patch: dict[str, Any]) -> str:
    return "spec " + json.dumps(spec_patch, separators=(",", ":"))
