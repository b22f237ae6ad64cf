"""Pods on the wrong OS, Windows image builds vs node builds, and build selectors in mixed clusters."""

from __future__ import annotations

from collections import defaultdict

from kubectl_win import builds
from kubectl_win.catalog import finding
from kubectl_win.doctor import fixes, scheduling
from kubectl_win.doctor.records import PodRecord, Snapshot
from kubectl_win.findings import Finding, Fix, ObjectRef
from kubectl_win.manifests.objects import spec_path_of
from kubectl_win.wellknown import BUILD_LABEL, OS_LABEL


def _hyperv(pod: PodRecord, snapshot: Snapshot) -> bool:
    """Hyper-V isolated pods may run older image builds than the host."""
    rc = snapshot.runtime_classes.get(pod.runtime_class or "")
    text = f"{pod.runtime_class or ''} {rc.handler if rc else ''}".lower()
    return "hyperv" in text or "hypervisor" in text


def _pod_label(pods: list[PodRecord]) -> str:
    first = pods[0]
    if len(pods) == 1:
        return f"{first.namespace}/{first.name}"
    owner = first.controller.display() if first.controller else "the same owner"
    return f"{first.namespace}/{first.name} (and {len(pods) - 1} more of {owner})"


def run(snapshot: Snapshot) -> list[Finding]:
    return _os_mismatch(snapshot) + _no_variant(snapshot) + _build_mismatch(snapshot) + _build_selector(snapshot)


def _answered(snapshot: Snapshot, image: str) -> bool:
    """The registry said what the image holds (doctor --check-images, or a dump that recorded it): the tag
    heuristics below give way to image-no-variant-for-node for it."""
    record = snapshot.images.get(image)
    return isinstance(record, dict) and not record.get("error")


def _no_variant(snapshot: Snapshot) -> list[Finding]:
    """Images whose registry lists no variant a Windows node the workload can land on runs (the rule of
    knowledge/image_compat.yaml), naming those nodes."""
    if not snapshot.images:
        return []
    from kubectl_win.images.compat import NO_VARIANT, parse_host_version
    from kubectl_win.images.service import Resolved, windows_workloads

    out = []
    present = {n.windows_build for n in snapshot.windows_nodes if n.windows_build}
    for workload in windows_workloads(snapshot):
        rc = snapshot.runtime_classes.get(workload.runtime_class or "")
        text = f"{workload.runtime_class or ''} {rc.handler if rc else ''}".lower()
        if "hyperv" in text or "hypervisor" in text or workload.host_process or workload.ref is None:
            continue
        for use in workload.images:
            if not _answered(snapshot, use.image):
                continue
            resolved = Resolved.from_record(use.image, snapshot.images[use.image])
            for build, nodes in workload.builds:
                try:
                    host = parse_host_version(build)
                except ValueError:
                    continue
                verdict = resolved.verdict(host, workload.architecture)
                if verdict.verdict != NO_VARIANT:
                    continue
                runnable = sorted(b for b in present if resolved.verdict(parse_host_version(b)).verdict == "runs")
                if runnable:
                    fix = fixes.node_selector(
                        workload.ref, workload.spec_path, {BUILD_LABEL: runnable[0]},
                        note=f"Either pin the workload to nodes of a build the image has ({', '.join(runnable)}) "
                             f"with the command, or rebuild {use.image} for {build} and push it.")
                else:
                    fix = Fix(note=f"Rebuild {use.image} for {build} and push it: no node of the cluster runs a "
                                   "build the image has.")
                out.append(finding("image-no-variant-for-node", workload.ref, use.path + ".image",
                                   ignores=workload.ignores, object=workload.ref.display(), image=use.image,
                                   container=use.container, s="s" if len(nodes) > 1 else "",
                                   nodes=", ".join(nodes), node_build=build, reason=verdict.reason, fix=fix))
    return out


def _os_mismatch(snapshot: Snapshot) -> list[Finding]:
    groups: dict[tuple[ObjectRef, str], list[PodRecord]] = defaultdict(list)
    for pod in snapshot.pods:
        node = snapshot.node(pod.node)
        if node is None or node.os not in ("windows", "linux") or pod.target.os not in ("windows", "linux"):
            continue
        if node.os != pod.target.os:
            groups[(pod.owner_ref, node.os)].append(pod)
    out = []
    for (owner, node_os), pods in groups.items():
        pod = pods[0]
        fix = fixes.node_selector(owner, spec_path_of(owner.kind), {OS_LABEL: pod.target.os or ""})
        if node_os == "windows":
            fix = fixes.combine(fix, Fix(commands=(("kubectl", "taint", "nodes", pod.node, "os=windows:NoSchedule"),)),
                                note="Taint the Windows nodes too, so nothing else without a selector lands there.")
        out.append(finding("pod-os-mismatch", pod.ref, "spec.nodeName", ignores=pod.ignores, pod=_pod_label(pods),
                           target=pod.target.os, reasons=pod.target.because(), node_os=node_os, node=pod.node,
                           fix=fix))
    return out


def _build_mismatch(snapshot: Snapshot) -> list[Finding]:
    groups: dict[tuple[ObjectRef, str, int, int], list[PodRecord]] = defaultdict(list)
    for pod in snapshot.pods:
        node = snapshot.node(pod.node)
        if node is None or not node.windows or node.build_number is None or pod.host_process:
            continue
        if _hyperv(pod, snapshot):
            continue
        for container in pod.containers:
            if _answered(snapshot, container.image):
                continue
            image_build = builds.image_build(container.image)
            if image_build is not None and image_build != node.build_number:
                groups[(pod.owner_ref, container.name, image_build, node.build_number)].append(pod)
    out = []
    for (owner, container_name, image_build, node_build), pods in groups.items():
        pod = pods[0]
        container = next(c for c in pod.containers if c.name == container_name)
        image_info = builds.build_of(image_build)
        image_version = image_info.version if image_info else str(image_build)
        fix = fixes.node_selector(
            owner, spec_path_of(owner.kind), {BUILD_LABEL: image_version},
            note=f"Either use the image tag built for {node_build} ({builds.tags_for(node_build)}), or pin the "
                 f"workload to build {image_build} nodes with the command.")
        out.append(finding("image-build-mismatch", pod.ref, container.path + ".image", ignores=pod.ignores,
                           container=container.name, pod=_pod_label(pods), image=container.image,
                           image_os=image_info.name if image_info else "an unknown Windows build",
                           image_build=image_build, node=pod.node, node_build=node_build, fix=fix))
    return out


def _build_selector(snapshot: Snapshot) -> list[Finding]:
    present = sorted({n.build_number for n in snapshot.windows_nodes if n.build_number is not None})
    if len(present) < 2:
        return []
    out = []
    for workload in snapshot.workloads:
        if not workload.target.windows or workload.host_process:
            continue
        placement = scheduling.effective(workload.placement, snapshot.runtime_classes)
        if BUILD_LABEL in placement.node_selector or _affinity_names_build(placement.required_terms):
            continue
        for container in workload.containers:
            image_build = builds.image_build(container.image)
            if image_build is None or _answered(snapshot, container.image):
                continue
            info = builds.build_of(image_build)
            version = info.version if info else str(image_build)
            fix = fixes.node_selector(workload.ref, workload.spec_path, {BUILD_LABEL: version})
            out.append(finding("image-build-selector-missing", workload.ref, container.path + ".image",
                               ignores=workload.ignores, object=workload.ref.display(), image=container.image,
                               image_build=image_build, builds=", ".join(str(b) for b in present), fix=fix))
            break
    return out


def _affinity_names_build(terms) -> bool:  # type: ignore[no-untyped-def]
    for term in terms or ():
        for expr in (term.get("matchExpressions") or []) if isinstance(term, dict) else []:
            if isinstance(expr, dict) and expr.get("key") == BUILD_LABEL:
                return True
    return False
