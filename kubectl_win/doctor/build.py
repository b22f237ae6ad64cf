"""The builder: raw objects in, doctor's records out, one object at a time (a live list page or a dump item).

It keeps only small records: every node, the pods that run on or target Windows, pod-bearing workloads,
events that match a known symptom, Service counts. Linux pods on Linux nodes are counted and dropped, so a
150,000-pod cluster never sits in memory as dicts. Nodes must be added before pods (the builder needs to know
which nodes run Windows); `read.plan.KIND_ORDER` gives the order the readers keep. Pods are grouped by
template (grouping.py) and each new template is linted as it arrives (lint.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubectl_win.doctor.constructors import (
    container_states,
    containers_of,
    ignores_of,
    logs_on_to_a_domain,
    node_record,
    pinned_to_linux,
    placement_of,
    windows_options,
    workload_record,
)
from kubectl_win.doctor.folding import SymptomFolder
from kubectl_win.doctor.grouping import Templates, controller_of, pod_group_key
from kubectl_win.doctor.interning import Interner
from kubectl_win.doctor.read import reduce
from kubectl_win.doctor.read.fields import as_dict, as_list, as_text, meta_of, str_map
from kubectl_win.doctor.read.plan import RESOURCE_OF_KIND
from kubectl_win.doctor.records import (
    LinuxWorkload,
    NodeRecord,
    PodGroup,
    PodRecord,
    RuntimeClassRecord,
    Skipped,
    Snapshot,
    WorkloadRecord,
    WorkloadSecurity,
)
from kubectl_win.explain import infer_target
from kubectl_win.findings import ObjectRef
from kubectl_win.kinds import WORKLOAD_KINDS
from kubectl_win.manifests.objects import format_path, is_host_process, pod_templates


@dataclass
class SnapshotBuilder:
    """Turns raw objects into records; `sink`, when set, receives each kept object reduced (--save-dump)."""

    sink: Callable[[dict[str, Any]], None] | None = None
    namespace: str | None = None
    server_version: str | None = None
    images: dict[str, Any] = field(default_factory=dict)  # resolved image platforms (see Snapshot.images)
    _nodes: dict[str, NodeRecord] = field(default_factory=dict)
    _windows_nodes: set[str] = field(default_factory=set)  # names of the Windows nodes among _nodes
    _pods: list[PodRecord] = field(default_factory=list)
    _groups: list[PodGroup] = field(default_factory=list)
    _group_index: dict[Any, int] = field(default_factory=dict)
    _workloads: list[WorkloadRecord] = field(default_factory=list)
    _linux_workloads: list[LinuxWorkload] = field(default_factory=list)
    _security: list[WorkloadSecurity] = field(default_factory=list)
    _symptoms: SymptomFolder = field(default_factory=SymptomFolder)
    _namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    _runtime_classes: dict[str, RuntimeClassRecord] = field(default_factory=dict)
    _gmsa: set[str] = field(default_factory=set)
    _gmsa_served: bool = True
    _services: int = 0
    _service_ports: int = 0
    _agents_seen: set[str] = field(default_factory=set)
    _counts: dict[str, int] = field(default_factory=dict)
    _read: set[str] = field(default_factory=set)
    _skipped: list[Skipped] = field(default_factory=list)
    _windows_pods: set[tuple[str, str]] = field(default_factory=set)
    _interner: Interner = field(default_factory=Interner)
    _templates: Templates = field(init=False)

    def __post_init__(self) -> None:
        self._templates = Templates(self._interner, self._new_daemonset)

    def _new_daemonset(self, name: str) -> None:
        self._agents_seen.update(_agent_names(name))

    # -- bookkeeping -------------------------------------------------------------------------------
    def mark_read(self, resource: str) -> None:
        self._read.add(resource)

    def skip(self, resource: str, reason: str) -> None:
        self._skipped.append(Skipped(resource, reason))

    def gmsa_not_served(self) -> None:
        self._gmsa_served = False
        self._read.add("gmsacredentialspecs")

    def add(self, obj: dict[str, Any], kind: str | None = None) -> None:
        kind = kind or as_text(obj.get("kind"))
        handler = _HANDLERS.get(kind)
        if handler is None:
            return
        resource = RESOURCE_OF_KIND[kind]
        self._counts[resource] = self._counts.get(resource, 0) + 1
        try:
            handler(self, obj)
        except (TypeError, AttributeError, ValueError, KeyError, IndexError, OverflowError, RecursionError) as exc:
            # Any field can have the wrong shape (a dump can come from anyone): the object is passed over
            # and named, never an internal error. The record builders treat most bad fields as absent first.
            name = as_text(meta_of(obj).get("name")) or "(unnamed)"
            namespace = as_text(meta_of(obj).get("namespace"))
            self.skip(f"{resource}/{namespace + '/' if namespace else ''}{name}",
                      f"a field has the wrong shape ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})")

    def add_page(self, kind: str, api_version: str, items: Any) -> None:
        """A list page's items, which carry no kind on the wire: the kind and apiVersion of the list are filled in
        (ObjectRef and explain read them) on every item the builder reads, pods aside: most pods of a
        large cluster are dropped after a few lookups (_add_pod_page), and only the others get them."""
        resource = RESOURCE_OF_KIND.get(kind, kind or "list")
        if not isinstance(items, list | tuple):
            self.skip(resource, f"a list page's items are a {type(items).__name__}, not a list")
            return
        if any(type(item) is not dict for item in items):  # a server's answer can have any shape too
            for index, item in enumerate(items):
                if type(item) is not dict:
                    self.skip(resource, f"items[{index}] is a {type(item).__name__}, not an object")
            items = [item for item in items if type(item) is dict]
        if kind == "Pod":
            self._add_pod_page(api_version, items)
            return
        for item in items:
            if "kind" not in item:
                item["kind"] = kind
                item["apiVersion"] = api_version
            self.add(item)

    def _add_pod_page(self, api_version: str, items: Any) -> None:
        """Pods of a page. Those that are certainly Linux pods on Linux nodes are only counted: a controller's
        pod, placed on a node that does not run Windows, whose template (same owner and template hash) is
        already known not to target Windows. That is what _add_pod would find, at a fraction of the cost;
        any other pod (and any shape it does not expect, such as a field of a wrong type) goes to add()."""
        windows_nodes = self._windows_nodes
        templates = self._templates.known
        add = self.add
        dropped = 0
        for obj in items:
            # Plain code, no helper calls: this runs for every pod of the cluster.
            meta = obj.get("metadata") if "kind" not in obj else None
            spec = obj.get("spec") if type(meta) is dict else None
            if type(spec) is dict:
                node_name = spec.get("nodeName")
                refs = meta.get("ownerReferences")
                labels = meta.get("labels")
                if type(node_name) is str and node_name and node_name not in windows_nodes and type(refs) is list \
                        and len(refs) == 1 and type(labels) is dict:
                    ref = refs[0]
                    template_hash = labels.get("pod-template-hash") or labels.get("controller-revision-hash")
                    if type(ref) is dict and ref.get("controller") is True and type(template_hash) is str:
                        key = (meta.get("namespace"), ref.get("kind"), ref.get("name"), template_hash)
                        template = templates.get(key) if type(key[0]) is str and type(key[1]) is str \
                            and type(key[2]) is str else None
                        if template is not None and not template.target.windows:
                            dropped += 1
                            continue
            if dropped:  # counted before the next pod is added, so the counts keep their order
                self._counts["pods"] = self._counts.get("pods", 0) + dropped
                dropped = 0
            if "kind" not in obj:
                obj["kind"] = "Pod"
                obj["apiVersion"] = api_version
            add(obj)
        if dropped:
            self._counts["pods"] = self._counts.get("pods", 0) + dropped

    def add_typed_page(self, kind: str, api_version: str, items: Any) -> None:
        """A page decoded into typed records (read/typed.py; the live reader without a sink): pods through the
        fast path below, every other record as the dict of its read fields, into the same handlers as add_page."""
        from kubectl_win.doctor.read.typed import as_object

        if kind == "Pod":
            self._add_typed_pods(api_version, items or ())
            return
        for record in items or ():
            item = as_object(record)
            if "kind" not in item:
                item["kind"] = kind
                item["apiVersion"] = api_version
            self.add(item)

    def _add_typed_pods(self, api_version: str, pods: Any) -> None:
        """_add_pod_page over typed pods, deciding from the same fields. A pod it keeps goes to add() as the dict
        of the fields read; its spec is decoded whole only when the builder may read more than its head: a
        template or a group met for the first time, or a pod the template fast path does not cover."""
        from msgspec import UNSET

        from kubectl_win.doctor.read.typed import Meta, as_object, spec_head

        windows_nodes = self._windows_nodes
        templates = self._templates.known
        groups = self._group_index
        add = self.add
        dropped = 0
        for pod in pods:
            # Plain code, no helper calls but the spec's: this runs for every pod of the cluster.
            meta = pod.metadata if pod.kind is UNSET else None
            head = spec_head(pod) if type(meta) is Meta else None
            key = None
            if head is not None:
                node_name = head.nodeName
                refs = meta.ownerReferences  # type: ignore[union-attr]
                labels = meta.labels  # type: ignore[union-attr]
                if type(node_name) is str and node_name and type(refs) is list and len(refs) == 1 \
                        and type(labels) is dict:
                    ref = refs[0]
                    template_hash = labels.get("pod-template-hash") or labels.get("controller-revision-hash")
                    if type(ref) is dict and ref.get("controller") is True and type(template_hash) is str:
                        namespace = meta.namespace  # type: ignore[union-attr]
                        key = (None if namespace is UNSET else namespace, ref.get("kind"), ref.get("name"),
                               template_hash)
                        template = templates.get(key) if type(key[0]) is str and type(key[1]) is str \
                            and type(key[2]) is str else None
                        if template is None:
                            key = None
                        elif node_name not in windows_nodes and not template.target.windows:
                            dropped += 1
                            continue
            if dropped:  # counted before the next pod is added, so the counts keep their order
                self._counts["pods"] = self._counts.get("pods", 0) + dropped
                dropped = 0
            if key is not None and not head.ephemeralContainers:  # type: ignore[union-attr]
                group_index = groups.get(key + (head.nodeName in windows_nodes,))  # type: ignore[union-attr]
                if group_index is not None:
                    # Template and group known (most Windows pods): what _add_pod does then, from the records.
                    self._counts["pods"] = self._counts.get("pods", 0) + 1
                    try:
                        self._add_known_pod(pod, head, template, group_index)  # type: ignore[arg-type]
                    except (TypeError, AttributeError, ValueError, KeyError, IndexError, OverflowError,
                            RecursionError) as exc:  # as add() names an object of a wrong shape
                        name = as_text(meta.name) or "(unnamed)"  # type: ignore[union-attr]
                        namespace = as_text(meta.namespace)  # type: ignore[union-attr]
                        self.skip(f"pods/{namespace + '/' if namespace else ''}{name}",
                                  f"a field has the wrong shape ({type(exc).__name__}: "
                                  f"{' '.join(str(exc).split())[:120]})")
                    continue
            obj = as_object(pod)
            if "kind" not in obj:
                obj["kind"] = "Pod"
                obj["apiVersion"] = api_version
            add(obj)
        if dropped:
            self._counts["pods"] = self._counts.get("pods", 0) + dropped

    def _add_known_pod(self, pod: Any, head: Any, template: Any, group_index: int) -> None:
        """_add_pod for a typed pod whose template (from the fast path) and group are known, and which runs on
        Windows or targets it: the same record, read from the typed fields (no spec beyond its head)."""
        from kubectl_win.doctor.read.typed import PodStatus, as_object

        meta = pod.metadata
        node_name = head.nodeName
        node = self._nodes.get(node_name)
        on_windows = node is not None and node.windows
        intern = self._interner.text
        namespace = intern(meta.namespace)
        group = self._groups[group_index]
        group.count += 1
        status = as_object(pod.status) if type(pod.status) is PodStatus else {}
        annotations = meta.annotations
        record = PodRecord(
            namespace=namespace,
            name=as_text(meta.name),
            node=node.name if node is not None else node_name,
            phase=intern(as_text(status.get("phase"))),
            controller=template.controller,
            target=group.target,
            containers=group.containers,
            host_process=group.host_process,
            host_network=group.host_network,
            domain_logon=group.domain_logon,
            runtime_class=intern(as_text(head.runtimeClassName)) or None,
            states=container_states(status),
            group=group_index,
            ignores=ignores_of({"annotations": annotations}) if type(annotations) is dict else ignores_of(),
        )
        self._pods.append(record)
        self._windows_pods.add((namespace, record.name))
        self._symptoms.add_container_states(record, on_windows)

    def _keep(self, reducer: Callable[[dict[str, Any]], dict[str, Any]], obj: dict[str, Any]) -> None:
        """Hand the object, reduced, to the sink; without a sink (no --save-dump) nothing is reduced."""
        if self.sink is not None:
            self.sink(reducer(obj))

    # -- per kind --------------------------------------------------------------------------------
    def _add_node(self, obj: dict[str, Any]) -> None:
        record = node_record(obj, self._interner)
        self._nodes[record.name] = record
        if record.windows:
            self._windows_nodes.add(record.name)
        else:
            self._windows_nodes.discard(record.name)
        if record.windows and record.node_info_missing:
            build = f"build {record.windows_build} from the {record.build_source}" if record.windows_build \
                else "build unknown"
            self.skip(f"nodes/{record.name}", f"status.nodeInfo is missing: container runtime and kubelet version "
                      f"unknown, {build}")
        self._keep(reduce.node, obj)

    def _add_namespace(self, obj: dict[str, Any]) -> None:
        meta = meta_of(obj)
        self._namespaces[str(meta.get("name") or "")] = str_map(meta.get("labels"))
        self._keep(reduce.namespace, obj)

    def _add_runtime_class(self, obj: dict[str, Any]) -> None:
        scheduling = as_dict(obj.get("scheduling"))
        name = str(meta_of(obj).get("name") or "")
        self._runtime_classes[name] = RuntimeClassRecord(
            name, str(obj.get("handler") or ""), str_map(scheduling.get("nodeSelector")),
            tuple(t for t in scheduling.get("tolerations") or () if isinstance(t, dict)))
        self._keep(reduce.runtime_class, obj)

    def _add_gmsa(self, obj: dict[str, Any]) -> None:
        self._gmsa.add(str(meta_of(obj).get("name") or ""))
        self._keep(reduce.gmsa, obj)

    def _add_service(self, obj: dict[str, Any]) -> None:
        spec = as_dict(obj.get("spec"))
        cluster_ip = spec.get("clusterIP")
        if cluster_ip and cluster_ip != "None" and spec.get("type") != "ExternalName":
            self._services += 1
            ports = spec.get("ports")
            self._service_ports += len(ports) if isinstance(ports, list) else 0
        self._keep(reduce.service, obj)

    def _add_endpoint_slice(self, obj: dict[str, Any]) -> None:
        self._keep(reduce.endpoint_slice, obj)  # for `hns --cluster-from-dump`; no doctor check reads them

    def _add_event(self, obj: dict[str, Any]) -> None:
        if self._symptoms.add_event(obj, self._windows_related):
            self._keep(reduce.event, obj)

    def _windows_related(self, ref: ObjectRef, host: str | None) -> bool:
        if ref.kind == "Node":
            node = self._nodes.get(ref.name)
            return node is not None and node.windows
        if ref.kind == "Pod" and (ref.namespace or "", ref.name) in self._windows_pods:
            return True
        node = self._nodes.get(host or "")
        return node is not None and node.windows

    def _add_pod(self, obj: dict[str, Any]) -> None:
        meta = meta_of(obj)
        spec = as_dict(obj.get("spec"))
        node_name = as_text(spec.get("nodeName")) or None
        node = self._nodes.get(node_name) if node_name else None
        on_windows = node is not None and node.windows
        template = self._templates.of(meta, spec)
        if not (on_windows or template.target.windows):
            # Most pods of a large cluster end here: Linux pods on Linux nodes are counted, not kept.
            if template.owner is None and not node_name:
                self._append_workload(workload_record(obj, spec, "spec", template.target, interner=self._interner))
                self._keep(reduce.pod, obj)
            return
        intern = self._interner.text
        namespace = intern(as_text(meta.get("namespace")))
        group_key = pod_group_key(template, namespace, spec, on_windows)
        group_index = self._group_index.get(group_key) if group_key is not None else None
        if group_index is None:
            representative = reduce.pod_template(obj)
            group_index = len(self._groups)
            group = PodGroup(_pack(representative), on_windows, target=template.target,
                             containers=containers_of(spec, "spec", self._interner),
                             host_process=is_host_process(spec), host_network=spec.get("hostNetwork") is True,
                             domain_logon=logs_on_to_a_domain(spec))
            if self.server_version is not None:
                from kubectl_win.doctor.lint import lint_group, version_of

                version = version_of(self.server_version)
                group.lint = (version, tuple(lint_group(representative, on_windows, version)))
            self._groups.append(group)
            if group_key is not None:
                self._group_index[group_key] = group_index
        else:
            # Same template: share the group's records instead of keeping one copy per pod.
            group = self._groups[group_index]
            group.count += 1
        status = as_dict(obj.get("status"))
        controller = template.controller
        record = PodRecord(
            namespace=namespace,
            name=as_text(meta.get("name")),
            node=node.name if node is not None else node_name,
            phase=intern(as_text(status.get("phase"))),
            controller=controller,
            target=group.target,
            containers=group.containers,
            host_process=group.host_process,
            host_network=group.host_network,
            domain_logon=group.domain_logon,
            runtime_class=intern(as_text(spec.get("runtimeClassName"))) or None,
            states=container_states(status),
            group=group_index,
            ignores=ignores_of(meta),
        )
        self._pods.append(record)
        self._windows_pods.add((namespace, record.name))
        if template.owner is None and not node_name:
            self._append_workload(workload_record(obj, spec, "spec", template.target, interner=self._interner))
        self._symptoms.add_container_states(record, on_windows)
        self._keep(reduce.pod, obj)

    def _add_workload(self, obj: dict[str, Any]) -> None:
        meta = meta_of(obj)
        if controller_of(meta) is not None and obj.get("kind") in ("Job", "ReplicaSet"):
            return  # the CronJob or Deployment above it is checked instead
        templates = pod_templates(obj)
        if not templates:
            return
        template = templates[0]
        spec, spec_path = template.spec, format_path(template.spec_path)
        target = infer_target(spec, template.metadata)
        placement = placement_of(spec)
        if not target.windows and pinned_to_linux(placement, self._runtime_classes):
            # No placement, image or memory check reads a controller whose pods only go to Linux nodes: it
            # keeps what the gMSA and HostProcess checks and an event's fix read, not a full record.
            intern = self._interner
            ref = intern.ref(ObjectRef.of(obj))
            self._linux_workloads.append(LinuxWorkload(ref, intern.text(spec_path), bool(placement.tolerations),
                                                       len(self._workloads)))
            self._add_security(ref, spec, spec_path, ignores_of(meta, template.metadata))
        else:
            self._append_workload(workload_record(obj, spec, spec_path, target, template.metadata,
                                                  interner=self._interner, placement=placement))
        self._keep(reduce.workload, obj)

    def _append_workload(self, record: WorkloadRecord) -> None:
        self._workloads.append(record)
        if record.gmsa or record.host_process:
            self._security.append(WorkloadSecurity(record.ref, record.spec_path, record.gmsa, record.host_process,
                                                   record.ignores))

    def _add_security(self, ref: ObjectRef, spec: dict[str, Any], spec_path: str, ignores: frozenset[str]) -> None:
        gmsa, host_process = windows_options(spec, spec_path)
        if gmsa or host_process:
            self._security.append(WorkloadSecurity(ref, self._interner.text(spec_path), gmsa, host_process, ignores))

    # -- result ----------------------------------------------------------------------------------
    def build(self) -> Snapshot:
        return Snapshot(
            server_version=self.server_version,
            nodes=tuple(self._nodes.values()),
            pods=tuple(self._pods),
            pod_groups=tuple(self._groups),
            workloads=tuple(self._workloads),
            linux_workloads=tuple(self._linux_workloads),
            workload_security=tuple(self._security),
            events=self._symptoms.records(),
            namespaces=dict(self._namespaces),
            runtime_classes=dict(self._runtime_classes),
            gmsa_specs=frozenset(self._gmsa) if self._gmsa_served else None,
            services=self._services,
            service_ports=self._service_ports,
            agents_seen=frozenset(self._agents_seen),
            counts=dict(self._counts),
            read=frozenset(self._read),
            skipped=tuple(self._skipped),
            namespace=self.namespace,
            images=dict(self.images),
        )

    def header(self) -> dict[str, Any]:
        """What a saved dump records besides its objects (so a reload sees the same cluster)."""
        return {
            "serverVersion": self.server_version,
            "namespace": self.namespace,
            "counts": dict(self._counts),
            "read": sorted(self._read),
            "gmsaServed": self._gmsa_served,
            "agentsSeen": sorted(self._agents_seen),
            "skipped": [{"resource": s.resource, "reason": s.reason} for s in self._skipped],
            **({"images": dict(self.images)} if self.images else {}),
        }

    def apply_header(self, header: dict[str, Any]) -> None:
        """The dump's header; a field of the wrong shape is ignored, as if the header did not have it."""
        self.server_version = as_text(header.get("serverVersion")) or self.server_version
        self.namespace = as_text(header.get("namespace")) or None
        counts = header.get("counts")
        if isinstance(counts, dict) and counts:
            self._counts = {str(k): v for k, v in counts.items() if isinstance(v, int) and not isinstance(v, bool)}
        self._read = {r for r in as_list(header.get("read")) if isinstance(r, str)}
        served = header.get("gmsaServed", True)
        self._gmsa_served = served if isinstance(served, bool) else True
        self._agents_seen.update(a for a in as_list(header.get("agentsSeen")) if isinstance(a, str))
        for item in as_list(header.get("skipped")):
            if isinstance(item, dict):
                self.skip(as_text(item.get("resource")), as_text(item.get("reason")))
        images = header.get("images")
        if isinstance(images, dict):
            self.images.update({str(k): v for k, v in images.items() if isinstance(v, dict)})


_HANDLERS: dict[str, Callable[[SnapshotBuilder, dict[str, Any]], None]] = {
    "Node": SnapshotBuilder._add_node,
    "Namespace": SnapshotBuilder._add_namespace,
    "RuntimeClass": SnapshotBuilder._add_runtime_class,
    "GMSACredentialSpec": SnapshotBuilder._add_gmsa,
    "Pod": SnapshotBuilder._add_pod,
    "Service": SnapshotBuilder._add_service,
    "EndpointSlice": SnapshotBuilder._add_endpoint_slice,
    "Event": SnapshotBuilder._add_event,
    **{kind: SnapshotBuilder._add_workload for kind in WORKLOAD_KINDS},
}


def _agent_names(name: str) -> set[str]:
    from kubectl_win.doctor.signatures.agents import cni_names

    return cni_names(name)


def _pack(pod: dict[str, Any]) -> str:
    # As str, not orjson's bytes: orjson leaves its output buffer's spare capacity allocated (4 KiB for a
    # 1 KiB pod), a str is allocated to size.
    import orjson

    try:
        return orjson.dumps(pod).decode()
    except TypeError:  # a value JSON cannot hold (a dump read from YAML may have dates): as text
        return json.dumps(pod, default=str, separators=(",", ":"))
