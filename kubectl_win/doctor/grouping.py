"""Grouping: which pods share a template, which controller a pod belongs to, and which nodes form a pool.

Pods of a controller that labels its template hash (Deployments, DaemonSets, StatefulSets) share one
template entry, worked out once; pods of a controller without one (Jobs, bare ReplicaSets) share a group
when their specs are the same but for the per-pod fields. A ReplicaSet resolves to its Deployment. Nodes
alike but for their names are one pool in the report's tables (node_pools).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kubectl_win.doctor.interning import Interner
from kubectl_win.doctor.read.fields import as_text
from kubectl_win.doctor.records import NodeRecord
from kubectl_win.explain import Target, infer_target
from kubectl_win.findings import Finding, ObjectRef

TEMPLATE_HASH_LABELS = ("pod-template-hash", "controller-revision-hash")


@dataclass(frozen=True, slots=True)
class Template:
    """What is worked out once per pod template (see Templates.of)."""

    owner: ObjectRef | None  # the controller named in ownerReferences
    controller: ObjectRef | None  # the same, a ReplicaSet resolved to its Deployment
    target: Target
    key: tuple[str, ...] | None  # (namespace, owner kind, owner name, template hash), None without a hash


class Templates:
    """The pod's owner, controller and target, computed once per pod template: pods of a controller that
    label their template hash share one entry, so the per-pod work of a 150,000-pod cluster stays a few
    dictionary lookups (a DaemonSet's per-node affinity names nodes, never an OS). `new_daemonset` hears of
    each DaemonSet the first time one of its pods is seen (the builder recognises node agents by name)."""

    def __init__(self, interner: Interner, new_daemonset: Callable[[str], None] | None = None) -> None:
        self._interner = interner
        self._cache: dict[tuple[str, ...], Template] = {}
        self._daemonsets: set[str] = set()
        self.new_daemonset = new_daemonset

    @property
    def known(self) -> dict[tuple[str, ...], Template]:
        """The templates worked out so far, by key (read only: the builder's pod fast path looks them up)."""
        return self._cache

    def of(self, meta: dict[str, Any], spec: dict[str, Any]) -> Template:
        # Plain loops rather than generators: this runs for every pod of the cluster.
        labels = meta.get("labels")
        template_hash = None
        if isinstance(labels, dict):
            for label in TEMPLATE_HASH_LABELS:
                value = labels.get(label)
                if value and isinstance(value, str):
                    template_hash = value
                    break
        ref = controller_ref(meta)
        key = None
        if ref is not None and template_hash is not None:
            key = (as_text(meta.get("namespace")), as_text(ref.get("kind")), as_text(ref.get("name")), template_hash)
            cached = self._cache.get(key)
            if cached is not None:
                return cached
        owner = owner_of(ref, meta) if ref is not None else None
        if owner is not None and owner.kind == "DaemonSet" and owner.name not in self._daemonsets:
            self._daemonsets.add(owner.name)
            if self.new_daemonset is not None:
                self.new_daemonset(owner.name)
        if spec.get("ephemeralContainers"):
            # Containers added to one running pod (kubectl debug) are not its template's and never decide
            # where a pod runs: the target is the template's, whichever pod is seen first.
            spec = {k: v for k, v in spec.items() if k != "ephemeralContainers"}
        template = Template(owner, resolve_controller(owner, template_hash),
                            self._interner.target(infer_target(spec, meta)), key)
        if key is not None:
            self._cache[key] = template
        return template


def pod_group_key(template: Template, namespace: str, spec: dict[str, Any], on_windows: bool) -> Any:
    """The pod's group: its template's key (on Windows or not), the same spec's (spec_group_key), or None (a
    group of its own). A pod with ephemeral containers (kubectl debug adds them to one pod) is a group of its
    own: explain's rules and the image checks then read its ephemeral containers, which its template's
    representative pod does not have."""
    if spec.get("ephemeralContainers"):
        return None
    if template.key is not None:
        return template.key + (on_windows,)
    return spec_group_key(namespace, template.owner, spec, on_windows)


def spec_group_key(namespace: str, owner: ObjectRef | None, spec: dict[str, Any], on_windows: bool) -> Any:
    """Pods of a controller that labels no template hash (Jobs, bare ReplicaSets) share a template when their
    specs are the same but for the per-pod fields."""
    if owner is None:
        return None
    fingerprint = canonical({k: v for k, v in spec.items() if k not in PER_POD_SPEC_FIELDS})
    return (namespace, owner.kind, owner.name, hash(fingerprint), on_windows)


PER_POD_SPEC_FIELDS = frozenset({"nodeName", "hostname", "subdomain"})


def controller_ref(meta: dict[str, Any]) -> dict[str, Any] | None:
    """The ownerReferences entry marked controller (a plain loop: this runs for every pod)."""
    refs = meta.get("ownerReferences")
    for ref in refs if isinstance(refs, list) else ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def owner_of(ref: dict[str, Any], meta: dict[str, Any]) -> ObjectRef:
    return ObjectRef(as_text(ref.get("apiVersion")), as_text(ref.get("kind")), as_text(meta.get("namespace")) or None,
                     as_text(ref.get("name")))


def controller_of(meta: dict[str, Any]) -> ObjectRef | None:
    ref = controller_ref(meta)
    return owner_of(ref, meta) if ref is not None else None


def resolve_controller(owner: ObjectRef | None, template_hash: str | None) -> ObjectRef | None:
    """A ReplicaSet named <deployment>-<pod-template-hash> belongs to that Deployment."""
    if owner is None:
        return None
    if owner.kind == "ReplicaSet" and template_hash and owner.name.endswith("-" + template_hash):
        return ObjectRef("apps/v1", "Deployment", owner.namespace, owner.name[: -len(template_hash) - 1])
    return owner


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class NodePool:
    """Nodes that are the same apart from their names: one row of the report's node tables. `findings` are the
    first node's (every node of the pool has findings of the same checks)."""

    nodes: tuple[NodeRecord, ...]
    findings: tuple[Finding, ...]

    @property
    def first(self) -> NodeRecord:
        return self.nodes[0]


def node_pools(nodes: Iterable[NodeRecord], findings: Iterable[Finding]) -> list[NodePool]:
    """Pools of nodes alike in OS build, versions, runtime, readiness, taints, labels (but per-node ones such as
    the host name) and the checks that found something on them, in the order of their first node by name. A
    node with a finding of its own leaves its pool: its key differs. Presentation only: reports keep one
    entry per node."""
    from kubectl_win.wellknown import per_node_labels

    by_node: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.object.kind == "Node":
            by_node.setdefault(finding.object.name, []).append(finding)
    skip = per_node_labels()
    pools: dict[tuple[Any, ...], list[NodeRecord]] = {}
    for node in sorted(nodes, key=lambda n: n.name):
        key = (node.os, node.os_image, node.kernel_version, node.build_label, node.runtime_version,
               node.kubelet_version, node.ready, node.ready_reason, node.unschedulable, node.network_unavailable,
               node.taints, node.memory_capacity, node.memory_allocatable,
               frozenset((k, v) for k, v in node.labels.items() if k not in skip),
               tuple(sorted((f.id, f.severity) for f in by_node.get(node.name, ()))))
        pools.setdefault(key, []).append(node)
    return [NodePool(tuple(members), tuple(by_node.get(members[0].name, ()))) for members in pools.values()]
