"""Event, container-state and node-condition symptoms (knowledge/symptoms.yaml) and Windows exit codes."""

from __future__ import annotations

import json

from kubectl_win import builds
from kubectl_win.doctor import fixes, structure, symptoms
from kubectl_win.doctor.catalog import finding, quoted
from kubectl_win.doctor.snapshot import EventRecord, PodRecord, Snapshot
from kubectl_win.findings import Finding, ObjectRef
from kubectl_win.manifests import spec_path_of
from kubectl_win.wellknown import BUILD_LABEL, OS_LABEL
from kubectl_win.wincodes import decode_exit, describe

EXCERPT = 240
# Checks whose fix is built here from the cluster (the others fill the catalogue's fix template).
_BUILT_FIXES = frozenset({"symptom-os-build-mismatch", "symptom-no-matching-platform",
                          "symptom-container-administrator-nonroot", "symptom-untolerated-windows-taint"})


def run(snapshot: Snapshot) -> list[Finding]:
    pods = {(p.namespace, p.name): p for p in snapshot.pods}
    out = [_event_finding(event, snapshot, pods) for event in snapshot.events]
    out.extend(_node_conditions(snapshot))
    out.extend(_exit_codes(snapshot))
    return out


def _node_conditions(snapshot: Snapshot) -> list[Finding]:
    """A NotReady Windows node whose Ready message is a known symptom (the CNI not initialised, ...)."""
    out = []
    for node in snapshot.windows_nodes:
        if node.ready is not False or not node.ready_message:
            continue
        found = symptoms.match(node.ready_message, node.ready_reason, "condition") or \
            symptoms.unrecognised(node.ready_message)
        if found.generic and found.check != symptoms.UNRECOGNISED:
            continue
        event = EventRecord(found.check, node.ref, node.ready_reason or "NotReady", node.ready_message, node.name,
                            1, codes=found.codes)
        out.append(_event_finding(event, snapshot, {}))
    return out


def _event_finding(event: EventRecord, snapshot: Snapshot, pods: dict[tuple[str, str], PodRecord]) -> Finding:
    pod_name = event.pod or (event.ref.name if event.ref.kind == "Pod" else None)
    pod = pods.get((event.ref.namespace or "", pod_name)) if pod_name else None
    node_name = event.node or (pod.node if pod else None) or "the node"
    node = snapshot.node(node_name)
    excerpt = event.message if len(event.message) <= EXCERPT else event.message[: EXCERPT - 1] + "…"
    excerpt += describe(event.codes)
    place = [f"on {node_name}"] if node_name != "the node" else []
    if event.count > 1:
        place.append(f"{event.count}x")
    where = f" ({', '.join(place)})" if place else ""
    values = {"object": event.ref.display(), "reason": event.reason or "status", "excerpt": excerpt,
              "where": where, "node": node_name, "fix": _fix(event, snapshot, pod, node)}
    return finding(event.check, event.ref, "", ignores=pod.ignores if pod else frozenset(), **values)


def _template_fix(event: EventRecord, pod: PodRecord | None, node_name: str) -> str:
    """The catalogue's fix for the check, every cluster value shell-quoted; for the generic checks, what
    the decoded codes say."""
    template = next((s.fix for s in symptoms.catalogue() if s.check == event.check), "")
    if template:
        owner = pod.owner_ref if pod else event.ref
        values = quoted({"node": node_name, "namespace": owner.namespace or "default", "object": owner.display(),
                         "pod": f"{pod.namespace}/{pod.name}" if pod else owner.display()})
        return template.format_map(values)
    hints = [f"{c.hex}: {c.hint}" for c in event.codes if c.hint]
    logs = ("read the containerd and kubelet logs on the node (kubectl win logs, or Get-WinEvent on the node) "
            "around the time of the message")
    if event.check == symptoms.UNRECOGNISED:
        chain = structure.parse(event.message, event.reason)
        if chain.operation or chain.components:
            hints.insert(0, f"the error chain reads: {chain.describe()}")
        return "; ".join([*hints, logs])
    if hints:
        return "; ".join(hints)
    return logs


def _fix(event: EventRecord, snapshot: Snapshot, pod: PodRecord | None, node) -> str:  # type: ignore[no-untyped-def]
    if event.check not in _BUILT_FIXES:
        return _template_fix(event, pod, node.name if node is not None else (event.node or "the node"))
    owner = pod.owner_ref if pod else event.ref
    spec_path = spec_path_of(owner.kind)
    if event.check == "symptom-os-build-mismatch":
        if node is not None and node.build_number:
            text = (f"use images (and a pause image) built for build {node.build_number} "
                    f"({builds.tags_for(node.build_number)})")
            image_builds = [b for b in (builds.image_build(c.image) for c in (pod.containers if pod else ()))
                            if b is not None and b != node.build_number]
            info = builds.build_of(image_builds[0]) if image_builds else None
            if info is not None:
                text += ", or pin the workload to the image's build: " + fixes.node_selector(
                    owner, spec_path, {BUILD_LABEL: info.version})
            return text
        return "compare the image tag with the node's node.kubernetes.io/windows-build label (kubectl get nodes -L " \
               "node.kubernetes.io/windows-build) and use the matching tag"
    if event.check == "symptom-no-matching-platform":
        if node is not None and node.windows and not (pod and pod.target.windows):
            return "this Linux image must not run on Windows: " + fixes.node_selector(
                owner, spec_path, {OS_LABEL: "linux"})
        return ("use an image with a windows/amd64 variant for the node's build (docker manifest inspect IMAGE "
                "lists the platforms)")
    if event.check == "symptom-container-administrator-nonroot":
        return fixes.merge_patch(owner, spec_path,
                                 {"securityContext": {"windowsOptions": {"runAsUserName": "ContainerUser"}}})
    if event.check == "symptom-untolerated-windows-taint":
        taints = sorted({t for n in snapshot.windows_nodes for t in n.scheduling_taints}, key=lambda t: t.text())
        if not taints:
            return ("add the toleration for the Windows nodes' taint "
                    "(kubectl describe nodes -l kubernetes.io/os=windows)")
        taint = taints[0]
        toleration = fixes.toleration_for(taint.key, taint.value, taint.effect)
        if pod is None and owner.kind == "Pod":
            return (f"add the toleration {json.dumps(toleration, separators=(',', ':'))} to the pod template of "
                    f"{owner.name}'s controller (kubectl get pod {owner.name} -n {owner.namespace} -o "
                    f"jsonpath='{{.metadata.ownerReferences[0].name}}')")
        return fixes.add_toleration(owner, spec_path, True, toleration)
    return ""


def _exit_codes(snapshot: Snapshot) -> list[Finding]:
    out = []
    seen: set[tuple[ObjectRef, str, int]] = set()
    for pod in snapshot.pods:
        node = snapshot.node(pod.node)
        if not (pod.target.windows or (node is not None and node.windows)):
            continue
        for state in pod.states:
            if state.last_exit_code is None:
                continue
            decoded = decode_exit(state.last_exit_code)
            if decoded is None:
                continue
            key = (pod.owner_ref, state.name, state.last_exit_code)
            if key in seen:
                continue
            seen.add(key)
            path = f"status.containerStatuses[{state.name}].lastState.terminated.exitCode"
            out.append(finding(
                "symptom-ntstatus-exit", pod.ref, path,
                ignores=pod.ignores, container=state.name, pod=f"{pod.namespace}/{pod.name}",
                code=state.last_exit_code, hex=decoded.hex, name=decoded.name, meaning=decoded.meaning,
                restarts=state.restarts,
                fix=decoded.hint or f"look up {decoded.hex} in Microsoft's [MS-ERREF] reference"))
    return out
