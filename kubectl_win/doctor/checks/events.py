"""Event, container-state and node-condition symptoms (knowledge/symptoms.yaml) and Windows exit codes."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

from kubectl_win import builds
from kubectl_win.catalog import finding
from kubectl_win.doctor import fixes
from kubectl_win.doctor.checks import evidence, image_platform, no_windows_node, versions
from kubectl_win.doctor.checks.log_line import EXCERPT
from kubectl_win.doctor.records import ContainerState, EventRecord, PodRecord, Snapshot
from kubectl_win.doctor.signatures import model, structure, symptoms
from kubectl_win.doctor.signatures.agents import agent_kinds
from kubectl_win.findings import CONFIDENCE_CAUSE, CONFIDENCE_UNSURE, NO_FIX, Finding, Fix, ObjectRef, fix_from_template
from kubectl_win.manifests.objects import spec_path_of
from kubectl_win.wellknown import BUILD_LABEL, OS_LABEL
from kubectl_win.wincodes import Decoded, decode_exit, describe

# Checks whose fix is built here from the cluster (the others fill the catalogue's fix template).
_BUILT_FIXES = frozenset({"symptom-os-build-mismatch", "symptom-no-matching-platform",
                          "symptom-windows-image-no-variant", "symptom-container-administrator-nonroot",
                          "symptom-untolerated-windows-taint"})


def run(snapshot: Snapshot) -> list[Finding]:
    pods = {(p.namespace, p.name): p for p in snapshot.pods}
    # Read once: what the scheduler's misses are measured against (where doctor read the nodes), with the
    # platform's way to add a Windows pool.
    windows = no_windows_node.WindowsNodes(snapshot.windows_nodes, fixes.cluster_route(snapshot, "add_windows_pool"),
                                           snapshot) if "nodes" in snapshot.read else None
    out = [_event_finding(event, snapshot, pods, windows) for event in snapshot.events
           if not _image_newer(event, snapshot)]
    out.extend(_node_conditions(snapshot))
    out.extend(_exit_codes(snapshot))
    return out


def _image_newer(event: EventRecord, snapshot: Snapshot) -> bool:
    """A pod's 0xc0370106 failure where its image was built on a newer revision than its node: the evidence
    (both revisions) makes it windows-image-newer-than-node's, not a compute-system failure to look into."""
    from kubectl_win.doctor.checks.patches import image_newer_pods, shows_image_newer_symptom

    if not shows_image_newer_symptom(event.message):
        return False
    pod = event.pod or (event.ref.name if event.ref.kind == "Pod" else None)
    return pod is not None and (event.ref.namespace or "", pod) in image_newer_pods(snapshot)


def _node_conditions(snapshot: Snapshot) -> list[Finding]:
    """A NotReady Windows node whose Ready message is a known symptom (the CNI not initialised, ...)."""
    out = []
    for node in snapshot.windows_nodes:
        if node.ready is not False or not node.ready_message:
            continue
        found = symptoms.match(node.ready_message, node.ready_reason, "condition")
        if found is None or found.generic:
            found = symptoms.unrecognised(node.ready_message)  # nothing Windows-related is dropped
        event = EventRecord(found.check, node.ref, node.ready_reason or "NotReady", node.ready_message, node.name,
                            1, codes=found.codes, confidence=found.confidence)
        out.append(_event_finding(event, snapshot, {}))
    return out


def _event_finding(event: EventRecord, snapshot: Snapshot, pods: dict[tuple[str, str], PodRecord],
                   windows: no_windows_node.WindowsNodes | None = None) -> Finding:
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
              "where": where, "node": node_name, "on_node": f" on {node_name}" if node_name != "the node" else ""}
    if model.is_model_check(event.check):
        subsystem = model.subsystem_of_check(event.check)
        reading = model.read(event.message, event.reason, "node" if event.ref.kind == "Node" else "pod")
        # The record keeps the redacted text: the check read the original.
        if subsystem and reading.subsystem != subsystem:
            reading = dataclasses.replace(reading, subsystem=subsystem)
        place = [f"{event.count}x"] if event.count > 1 else []
        values.update(dict(event.labels) or reading.labels(), where=f" ({', '.join(place)})" if place else "",
                      fix=model.next_steps(reading, node_name if node_name != "the node" else None,
                                           _agents_on(snapshot, node_name)))
    else:
        values["fix"] = _fix(event, snapshot, pod, node)
    # The cluster decides: a Linux workload on a Windows node fails for its placement (one answer with
    # linux-workload-can-land-on-windows on its controller); a cause presuming a context the pod lacks is unsure.
    decided = evidence.decide(event.confidence, pod, node, event.check, event.message, event.reason,
                              "node" if event.ref.kind == "Node" else "pod", images=snapshot.images,
                              windows=windows)
    confidence, route = decided.confidence, decided.route
    if decided.cause and "cause" in values:
        values["cause"] = decided.cause
    check = event.check
    if decided.settles and check == model.UNPLACED:  # the evidence settles where the failure is
        check, values["subsystem"] = model.check_id(decided.settles), decided.settles
    values["fix"] = decided.fix_of(values["fix"])
    found = finding(check, event.ref, "", ignores=pod.ignores if pod else frozenset(),
                    confidence=confidence, route=route, **values)
    # A known bug of a component version: the cause only where the node runs an affected version.
    running, build = versions.of_node(snapshot, node.name if node is not None else None)
    return model.with_known_bug(found, event.message, node_name, running, build, str(values.get("cause") or ""))


def _agents_on(snapshot: Snapshot, node_name: str) -> model.AgentPods:
    """The node agents' pods on the node (kind -> namespace, name), the first of each kind, for their logs."""
    out: model.AgentPods = {}
    for pod in snapshot.pods:
        if pod.node != node_name:
            continue
        owner = pod.controller.name if pod.controller else ""
        for kind in agent_kinds(pod.name, owner, *(c.image for c in pod.containers)):
            out.setdefault(kind, (pod.namespace, pod.name))
    return out


def _template_fix(event: EventRecord, pod: PodRecord | None, node_name: str) -> Fix:
    """The catalogue's fix for the check; for the generic checks, what the decoded codes say."""
    template = next((s.fix for s in symptoms.catalogue() if s.check == event.check), "")
    if template:
        owner = pod.owner_ref if pod else event.ref
        values = {"node": node_name, "namespace": owner.namespace or "default", "object": owner.display(),
                  "pod": f"{pod.namespace}/{pod.name}" if pod else owner.display()}
        return fix_from_template(template, values)
    hints = [f"{c.hex}: {c.hint}" for c in event.codes if c.hint]
    logs = ("Read the containerd and kubelet logs on the node (kubectl win logs, or Get-WinEvent on the node) "
            "around the time of the message.")
    if event.check == symptoms.UNRECOGNISED:
        chain = structure.parse(event.message, event.reason)
        if chain.operation or chain.components:
            hints.insert(0, f"The error chain reads: {chain.describe()}")
        return Fix(note="; ".join([*hints, logs]))
    if hints:
        return Fix(note="; ".join(hints))
    return Fix(note=logs)


def _fix(event: EventRecord, snapshot: Snapshot, pod: PodRecord | None, node) -> Fix:  # type: ignore[no-untyped-def]
    if event.check not in _BUILT_FIXES:
        return _template_fix(event, pod, node.name if node is not None else (event.node or "the node"))
    owner = pod.owner_ref if pod else event.ref
    spec_path = spec_path_of(owner.kind)
    if event.check == "symptom-os-build-mismatch":
        named = image_platform.mismatch_note(event.message)
        if named:
            return Fix(note=named)
        if node is not None and node.build_number:
            text = (f"Use images (and a pause image) built for build {node.build_number} "
                    f"({builds.tags_for(node.build_number)})")
            image_builds = [b for b in (builds.image_build(c.image) for c in (pod.containers if pod else ()))
                            if b is not None and b != node.build_number]
            info = builds.build_of(image_builds[0]) if image_builds else None
            if info is not None:
                return fixes.node_selector(owner, spec_path, {BUILD_LABEL: info.version},
                                           note=text + ", or pin the workload to the image's build with the command.")
            # The image's build is not in its tag: the usual case is a publisher that ships no variant for this build.
            image = next((c.image for c in (pod.containers if pod else ()) if c.image), None)
            return Fix(commands=(("kubectl", "win", "images", image, "--build", f"10.0.{node.build_number}"),)
                       if image else (),
                       note=text + f": a tag with no {node.build_number} variant in its manifest list (an image "
                                   "published only for another Windows Server release) cannot run here "
                                   "process-isolated; the command reads which builds the tag has ("
                                   f"{image_platform.chose_another_child()}).")
        return Fix(commands=(("kubectl", "get", "nodes", "-L", BUILD_LABEL),),
                   note="Compare the image tag with the nodes' node.kubernetes.io/windows-build label and use the "
                        "matching tag.")
    if event.check == "symptom-windows-image-no-variant":
        template = _template_fix(event, pod, node.name if node is not None else (event.node or "the node"))
        return image_platform.with_evidence(event.check, event.message, node.build_number if node else None, template)
    if event.check == "symptom-no-matching-platform":
        if node is not None and node.windows and not (pod and pod.target.windows):
            # The cluster decides: the pod does not ask for Windows, so its image is a Linux one.
            return fixes.node_selector(owner, spec_path, {OS_LABEL: "linux"},
                                       note=f"A Linux workload landed on Windows node {node.name}: its image is built "
                                            "for Linux only (no Windows variant to pull) and the pod has no "
                                            "kubernetes.io/os=windows selector. Keep it on Linux nodes.")
        if node is not None and not node.windows:
            return fixes.node_selector(owner, spec_path, {OS_LABEL: "windows"},
                                       note=f"A Windows image was sent to Linux node {node.name}: it runs only on a "
                                            "Windows node.")
        return image_platform.with_evidence(
            event.check, event.message, None,
            Fix(note="Use an image with a windows/amd64 variant for the node's build: kubectl win doctor "
                     "--check-images (or kubectl win images IMAGE --build BUILD) reads the tag's platforms from the "
                     "registry and says which it is."))
    if event.check == "symptom-container-administrator-nonroot":
        return fixes.merge_patch(owner, spec_path,
                                 {"securityContext": {"windowsOptions": {"runAsUserName": "ContainerUser"}}})
    if event.check == "symptom-untolerated-windows-taint":
        taints = sorted({t for n in snapshot.windows_nodes for t in n.scheduling_taints}, key=lambda t: t.text())
        if not taints:
            return Fix(commands=(("kubectl", "describe", "nodes", "-l", "kubernetes.io/os=windows"),),
                       note="Add the toleration for the Windows nodes' taint (the command shows it).")
        taint = taints[0]
        toleration = fixes.toleration_for(taint.key, taint.value, taint.effect)
        workload = _owner_by_name(snapshot, owner) if pod is None and owner.kind == "Pod" else None
        if workload is not None:  # the same patch the placement check gives its controller: printed once
            ref, spec_path, tolerations = workload
            return fixes.add_toleration(ref, spec_path, tolerations, toleration)
        if pod is None and owner.kind == "Pod":
            return Fix(commands=(("kubectl", "get", "pod", owner.name, "-n", owner.namespace or "default", "-o",
                                  "jsonpath={.metadata.ownerReferences[0].name}"),),
                       note=f"Add the toleration {json.dumps(toleration, separators=(',', ':'))} to the pod template "
                            f"of {owner.name}'s controller (the command names it).")
        return fixes.add_toleration(owner, spec_path, True, toleration)
    return NO_FIX


# How controllers name their pods: <cronjob>-<minutes>-<5>, <deployment>-<hash>-<5>, <daemonset>-<5>,
# <statefulset>-<ordinal>, <job>-<5> (kubernetes pkg/controller: names from generateName).
_POD_NAME_SHAPES = {"CronJob": r"-\d+-[a-z0-9]{5}", "Deployment": r"-[a-z0-9]{6,10}-[a-z0-9]{5}",
                    "DaemonSet": r"-[a-z0-9]{5}", "StatefulSet": r"-\d+", "Job": r"-[a-z0-9]{5}",
                    "ReplicaSet": r"-[a-z0-9]{5}"}


def _owner_by_name(snapshot: Snapshot, pod_ref: ObjectRef) -> tuple[ObjectRef, str, bool] | None:
    """The workload a pod that is gone (only its events remain) came from, by the name its controller gave it:
    (its ref, spec path, whether its template has tolerations)."""
    import re

    for workload in _workloads_in_order(snapshot):
        ref = workload[0]
        shape = _POD_NAME_SHAPES.get(ref.kind)
        if shape and ref.namespace == pod_ref.namespace and re.fullmatch(re.escape(ref.name) + shape, pod_ref.name):
            return workload
    return None


def _workloads_in_order(snapshot: Snapshot) -> Iterator[tuple[ObjectRef, str, bool]]:
    """Every workload, those pinned to Linux included, as (ref, spec path, has tolerations), in the order read."""
    linux = iter(snapshot.linux_workloads)
    pending = next(linux, None)
    for index, workload in enumerate(snapshot.workloads):
        while pending is not None and pending.after <= index:
            yield pending.ref, pending.spec_path, pending.tolerations
            pending = next(linux, None)
        yield workload.ref, workload.spec_path, bool(workload.placement.tolerations)
    while pending is not None:
        yield pending.ref, pending.spec_path, pending.tolerations
        pending = next(linux, None)


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
            key = (pod.owner_ref, state.name, state.last_exit_code)
            if key in seen or (decoded is None and (state.last_exit_code == 0 or state.terminated_message)):
                continue  # a clean exit, or a termination whose message is read (and placed) as such
            seen.add(key)
            if decoded is None:
                out.append(_exit_placed(pod, state, snapshot))
                continue
            path = f"status.containerStatuses[{state.name}].lastState.terminated.exitCode"
            out.append(finding(
                "symptom-ntstatus-exit", pod.ref, path,
                ignores=pod.ignores, container=state.name, pod=f"{pod.namespace}/{pod.name}",
                code=state.last_exit_code, hex=decoded.hex, name=decoded.name, meaning=decoded.meaning,
                restarts=state.restarts, confidence=CONFIDENCE_CAUSE if decoded.names_cause else CONFIDENCE_UNSURE,
                fix=Fix(note=_exit_note(decoded))))
    return out


def _exit_note(decoded: Decoded) -> str:
    """What to do about a Windows status exit code; for one that names what ended the process but not why, said
    first (doctor is then unsure of the cause)."""
    hint = decoded.hint or f"Look up {decoded.hex} in Microsoft's [MS-ERREF] reference."
    if decoded.names_cause:
        return hint
    return f"The code says what ended the process, not why; {hint[0].lower()}{hint[1:]}"


def _exit_placed(pod: PodRecord, state: ContainerState, snapshot: Snapshot) -> Finding:
    """A Windows container that exited with a code that is no Windows status: the application's own failure,
    placed in the model with the container's previous log as the first step."""
    reading = model.read_exit(state.last_exit_code or 0, state.terminated_reason)
    node_name = pod.node or "the node"
    fix = model.next_steps(reading, pod.node, _agents_on(snapshot, node_name))
    fix = Fix(commands=(("kubectl", "logs", "-n", pod.namespace, pod.name, "-c", state.name, "--previous"),
                        *fix.commands[:3]), note=fix.note)
    restarts = f"restarted {state.restarts} times" if state.restarts > 1 else ""
    return finding(reading.check, pod.ref, f"status.containerStatuses[{state.name}].lastState.terminated.exitCode",
                   ignores=pod.ignores, object=pod.ref.display(), reason=state.terminated_reason or "Terminated",
                   node=node_name, on_node=f" on {node_name}" if pod.node else "",
                   where=f" ({restarts})" if restarts else "",
                   excerpt=f"container {state.name} exited with code {state.last_exit_code}", fix=fix,
                   confidence=CONFIDENCE_CAUSE if reading.established else CONFIDENCE_UNSURE, **reading.labels())
