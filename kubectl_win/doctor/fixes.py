"""Exact kubectl commands for fixes: patches with the object's real names, keys and values, as argument
vectors (findings.Fix) that the renderers quote for the user's shell."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from kubectl_win.findings import Fix, ObjectRef
from kubectl_win.kinds import WORKLOAD_KINDS

if TYPE_CHECKING:
    from kubectl_win.doctor.records import NodeRecord, Snapshot

# The workloads whose memory fix is `kubectl set resources` (a CronJob's fix stays a note to edit and re-apply,
# a bare pod's to recreate it).
_SET_RESOURCES = WORKLOAD_KINDS - {"CronJob"}


def resource(ref: ObjectRef) -> str:
    """kubectl's name for the object's kind: its singular, as `kubectl patch deployment web` takes it."""
    return ref.kind.lower()


def _target(ref: ObjectRef) -> tuple[str, ...]:
    return (resource(ref), ref.name) + (("-n", ref.namespace) if ref.namespace else ())


def _nest(spec_path: str, leaf: dict[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = leaf
    for step in reversed(spec_path.split(".")):
        doc = {step: doc}
    return doc


def _json(doc: Any) -> str:
    return json.dumps(doc, separators=(",", ":"))


def merge_patch(ref: ObjectRef, spec_path: str, spec_patch: dict[str, Any], note: str = "") -> Fix:
    """`kubectl patch` with a merge patch of the pod spec (a bare pod's placement cannot change: recreate)."""
    if ref.kind == "Pod" and ("nodeSelector" in spec_patch or "affinity" in spec_patch):
        return Fix(note=f"Delete pod {ref.name} and recreate it with {_describe(spec_patch)} (a running pod's "
                        f"placement cannot be patched)." + (f" {note}" if note else ""))
    return Fix(commands=(("kubectl", "patch", *_target(ref), "--type", "merge", "-p",
                          _json(_nest(spec_path, spec_patch))),), note=note)


def node_selector(ref: ObjectRef, spec_path: str, labels: dict[str, str], note: str = "") -> Fix:
    return merge_patch(ref, spec_path, {"nodeSelector": labels}, note)


def add_toleration(ref: ObjectRef, spec_path: str, has_tolerations: bool, toleration: dict[str, str]) -> Fix:
    if not has_tolerations:
        return merge_patch(ref, spec_path, {"tolerations": [toleration]})
    pointer = "/" + spec_path.replace(".", "/") + "/tolerations/-"
    return Fix(commands=(("kubectl", "patch", *_target(ref), "--type", "json", "-p",
                          _json([{"op": "add", "path": pointer, "value": toleration}])),))


def toleration_for(key: str, value: str, effect: str) -> dict[str, str]:
    if value:
        return {"key": key, "operator": "Equal", "value": value, "effect": effect}
    return {"key": key, "operator": "Exists", "effect": effect}


def memory_limits(ref: ObjectRef, containers: list[tuple[str, str, str]], judgement: str = "") -> Fix:
    """containers: (name, path, suggested limit). `kubectl set resources` where it works, a patch otherwise."""
    if ref.kind in _SET_RESOURCES:
        return Fix(commands=tuple(
            ("kubectl", "set", "resources", f"{resource(ref)}/{ref.name}",
             *(("-n", ref.namespace) if ref.namespace else ()), "-c", name, f"--limits=memory={limit}")
            for name, _, limit in containers), judgement=judgement)
    parts = ", ".join(f"{path}.resources.limits.memory: {limit}" for _, path, limit in containers)
    verb = "Recreate the pod with" if ref.kind == "Pod" else f"Set in {ref.kind} {ref.name} and re-apply:"
    return Fix(note=f"{verb} {parts}.", judgement=judgement)


def combine(*fixes: Fix, note: str = "") -> Fix:
    """One fix doing each of `fixes` in turn (their commands in order, their notes joined)."""
    notes = [f.note for f in fixes if f.note] + ([note] if note else [])
    return Fix(commands=tuple(c for f in fixes for c in f.commands), note=" ".join(notes),
               judgement=" ".join(f.judgement for f in fixes if f.judgement))


def _describe(spec_patch: dict[str, Any]) -> str:
    return "spec " + json.dumps(spec_patch, separators=(",", ":"))


def node_route(snapshot: Snapshot, node: NodeRecord, kind: str, **values: str) -> Fix | None:
    """The node's platform's own fix of `kind` ('taint', 'upgrade': knowledge/platforms.yaml) with the node's
    pool and cluster filled in, or None where the platform has none (kubeadm, a cluster that shows no platform:
    the check's kubectl route stands)."""
    from kubectl_win import platforms

    where = snapshot.platform_of(node)
    return platforms.fix(where, kind, platforms.fix_values(where, node.name, node.labels, **values))


def cluster_route(snapshot: Snapshot, kind: str) -> Fix | None:
    """The cluster's platform's own fix of `kind` (a first Windows pool: 'add_windows_pool'), its cluster name
    read from any node that names it; None where the platform has none (kubeadm, unknown)."""
    from kubectl_win import platforms

    entry = platforms.platform(snapshot.platform)
    labels = next((n.labels for n in snapshot.nodes if entry.cluster_of(n.labels)), {})
    return platforms.fix(entry, kind, platforms.fix_values(entry, "", labels))
