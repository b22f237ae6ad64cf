"""Doctor's records made from raw objects: pure functions, one object (or pod spec) in, one record out. The
builder (build.py) calls them as objects arrive; hns and the tests call them on single objects."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from kubectl_win import platforms
from kubectl_win.doctor.interning import Interner
from kubectl_win.doctor.quantity import parse_bytes
from kubectl_win.doctor.read.fields import as_count, as_dict, as_list, as_text, meta_of, opt_str, str_map
from kubectl_win.doctor.records import (
    Container,
    ContainerState,
    NodeRecord,
    Placement,
    RuntimeClassRecord,
    Taint,
    WorkloadRecord,
)
from kubectl_win.doctor.scheduling import effective, pins_os
from kubectl_win.explain import Target
from kubectl_win.findings import ObjectRef
from kubectl_win.manifests.objects import is_host_process, iter_containers
from kubectl_win.policy import IGNORE_ANNOTATION, ignores_from_annotations
from kubectl_win.wellknown import ARCH_LABEL, BUILD_LABEL, build_from_labels, node_os


def node_record(obj: dict[str, Any], interner: Interner | None = None) -> NodeRecord:
    """`interner`: share the label keys and values the snapshot's nodes repeat (a cloud sets some twenty on
    every node, and the records keep them all)."""
    meta = meta_of(obj)
    labels = str_map(meta.get("labels"))
    if interner is not None:
        intern = interner.text
        labels = {intern(k): intern(v) for k, v in labels.items()}
    spec = as_dict(obj.get("spec"))
    status = as_dict(obj.get("status"))
    info = as_dict(status.get("nodeInfo"))
    info = {k: v for k, v in info.items() if isinstance(v, str) and v}  # a wrong-typed field counts as absent
    os_name = node_os(obj)
    labelled = build_from_labels(labels)
    kernel = info.get("kernelVersion") or ""
    conditions_list = status.get("conditions") if isinstance(status.get("conditions"), list) else ()
    conditions = {c.get("type"): c for c in conditions_list if isinstance(c, dict)}
    ready = conditions.get("Ready")
    network = conditions.get("NetworkUnavailable")
    taint_list = spec.get("taints") if isinstance(spec.get("taints"), list) else ()
    taints = tuple(Taint(as_text(t.get("key")), as_text(t.get("value")), as_text(t.get("effect")))
                   for t in taint_list if isinstance(t, dict))
    capacity = as_dict(status.get("capacity"))
    allocatable = as_dict(status.get("allocatable"))
    return NodeRecord(
        name=str(meta.get("name") or ""),
        os=str(os_name).lower() if os_name else None,
        arch=labels.get(ARCH_LABEL) or info.get("architecture") or None,
        labels=labels,
        os_image=info.get("osImage") or "",
        kernel_version=kernel,
        build_label=labels.get(BUILD_LABEL),
        runtime_version=info.get("containerRuntimeVersion") or "",
        kubelet_version=info.get("kubeletVersion") or "",
        ready=None if ready is None else ready.get("status") == "True",
        ready_reason=as_text((ready or {}).get("reason")),
        ready_message=" ".join(as_text((ready or {}).get("message")).split()),
        unschedulable=spec.get("unschedulable") is True,
        network_unavailable=(as_text(network.get("reason")), " ".join(as_text(network.get("message")).split()))
        if network and network.get("status") == "True" else None,
        taints=taints,
        memory_capacity=parse_bytes(capacity.get("memory")),
        memory_allocatable=parse_bytes(allocatable.get("memory")),
        ignores=ignores_of(meta),
        labelled_build=labelled[0] if labelled else None,
        build_source="status.nodeInfo.kernelVersion" if re.match(r"^\d+\.\d+\.\d+", kernel)
        else (f"label {labelled[1]}" if labelled else ""),
        node_info_missing=not any(info.get(k) for k in ("kernelVersion", "containerRuntimeVersion", "kubeletVersion")),
        ready_status=as_text((ready or {}).get("status")),
        platform=platforms.detect(labels, str_map(meta.get("annotations")), as_text(spec.get("providerID")),
                                  info.get("kubeletVersion") or ""),
    )


def placement_of(spec: dict[str, Any]) -> Placement:
    affinity = as_dict(spec.get("affinity"))
    node_affinity = as_dict(affinity.get("nodeAffinity"))
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    return Placement(
        node_selector=str_map(spec.get("nodeSelector")),
        required_terms=tuple(terms) if isinstance(terms, list) else None,
        tolerations=tuple(t for t in as_list(spec.get("tolerations")) if isinstance(t, dict)),
        node_name=as_text(spec.get("nodeName")) or None,
        runtime_class=as_text(spec.get("runtimeClassName")) or None,
    )


def pinned_to_linux(placement: Placement, runtime_classes: dict[str, RuntimeClassRecord]) -> bool:
    """The template's pods can only go to Linux nodes: its selector or affinity (with its RuntimeClass's
    scheduling, read before any workload) pins Linux and nothing in it pins Windows."""
    merged = effective(placement, runtime_classes)
    return pins_os(merged, "linux") and not pins_os(merged, "windows") and not pins_os(placement, "windows")


def workload_record(obj: dict[str, Any], spec: dict[str, Any], spec_path: str, target: Target,
                    template_meta: dict[str, Any] | None = None, *, interner: Interner | None = None,
                    placement: Placement | None = None) -> WorkloadRecord:
    """`interner`: share repeated values with the other records of a snapshot; `placement`: the spec's, when
    the caller has it already."""
    interner = interner or Interner()
    meta = meta_of(obj)
    placement = placement or placement_of(spec)
    gmsa, host_process = windows_options(spec, spec_path)
    return WorkloadRecord(
        ref=interner.ref(ObjectRef.of(obj)),
        spec_path=interner.text(spec_path),
        target=interner.target(target),
        placement=interner.placement(placement),
        containers=containers_of(spec, spec_path, interner),
        host_process=host_process,
        gmsa=gmsa,
        ignores=ignores_of(meta, template_meta),
    )


def containers_of(spec: dict[str, Any], spec_path: str, interner: Interner | None = None) -> tuple[Container, ...]:
    interner = interner or Interner()
    out = []
    for list_name, index, container in iter_containers(spec):
        if list_name == "ephemeralContainers":
            continue
        resources = as_dict(container.get("resources"))
        limits = as_dict(resources.get("limits"))
        requests = as_dict(resources.get("requests"))
        out.append(Container(interner.text(f"{spec_path}.{list_name}[{index}]"), str(container.get("name") or ""),
                             str(container.get("image") or ""), interner.optional(opt_str(limits.get("memory"))),
                             interner.optional(opt_str(requests.get("memory"))), list_name == "initContainers"))
    return tuple(out)


def _all_windows_options(spec: dict[str, Any], spec_path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, securityContext.windowsOptions) of the pod and of each of its containers."""
    yield f"{spec_path}.securityContext.windowsOptions", as_dict(as_dict(spec.get("securityContext"))
                                                                 .get("windowsOptions"))
    for list_name, index, container in iter_containers(spec):
        yield (f"{spec_path}.{list_name}[{index}].securityContext.windowsOptions",
               as_dict(as_dict(container.get("securityContext")).get("windowsOptions")))


def windows_options(spec: dict[str, Any], spec_path: str) -> tuple[tuple[tuple[str, str], ...], bool]:
    """(the gMSA credential specs the template names, as (path, name), and whether it runs HostProcess): the
    pod's and each container's securityContext.windowsOptions."""
    found = tuple((f"{path}.gmsaCredentialSpecName", str(options["gmsaCredentialSpecName"]))
                  for path, options in _all_windows_options(spec, spec_path) if options.get("gmsaCredentialSpecName"))
    return found, is_host_process(spec)


# Accounts whose logon names no domain a DC must answer for: the machine's own and NT AUTHORITY's built-ins.
_LOCAL_DOMAINS = frozenset({"", ".", "nt authority", "builtin", "user manager", "nt service"})


def logs_on_to_a_domain(spec: dict[str, Any]) -> bool:
    """Whether a container of the template logs on with a domain identity: a gMSA credential spec, or a
    runAsUserName that names a domain (DOMAIN\\user), on the pod or any container."""
    for _path, options in _all_windows_options(spec, "spec"):
        if options.get("gmsaCredentialSpecName") or options.get("gmsaCredentialSpec"):
            return True
        user = str(options.get("runAsUserName") or "")
        if "\\" in user and user.split("\\", 1)[0].strip().lower() not in _LOCAL_DOMAINS:
            return True
    return False


_EMPTY: frozenset[str] = frozenset()


def ignores_of(*metadatas: Any) -> frozenset[str]:
    """ignores_from_annotations, sharing one empty set for the (usual) objects without the annotation."""
    for meta in metadatas:
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        if isinstance(annotations, dict) and IGNORE_ANNOTATION in annotations:
            return ignores_from_annotations(*metadatas)
    return _EMPTY


def container_states(status: dict[str, Any]) -> tuple[ContainerState, ...]:
    out = []
    for key in ("initContainerStatuses", "containerStatuses"):
        for item in as_list(status.get(key)):
            if not isinstance(item, dict):
                continue
            state = as_dict(item.get("state"))
            waiting = as_dict(state.get("waiting"))
            last = as_dict(item.get("lastState"))
            terminated = last.get("terminated") if isinstance(last.get("terminated"), dict) else None
            if terminated is None and isinstance(state.get("terminated"), dict):
                terminated = state["terminated"]
            exit_code = terminated.get("exitCode") if terminated else None
            exit_code = exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None
            terminated_message = as_text(terminated.get("message")) if terminated else ""
            if not as_text(waiting.get("message")) and exit_code is None and not terminated_message:
                continue  # nothing a check reads
            out.append(ContainerState(
                as_text(item.get("name")), as_text(item.get("image")),
                as_text(waiting.get("reason")), " ".join(as_text(waiting.get("message")).split()),
                exit_code, as_count(item.get("restartCount")) or 0,
                as_text(terminated.get("reason")) if terminated else "", " ".join(terminated_message.split())))
    return tuple(out)
