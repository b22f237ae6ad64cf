"""Taints and selectors that keep Linux pods off Windows nodes and let Windows pods onto them."""

from __future__ import annotations

from collections import Counter

from kubectl_win import builds
from kubectl_win.catalog import finding
from kubectl_win.doctor import fixes, scheduling
from kubectl_win.doctor.checks import name_list
from kubectl_win.doctor.records import NodeRecord, Snapshot, Taint, WorkloadRecord
from kubectl_win.explain.placement import os_selector_gap
from kubectl_win.findings import Finding, Fix
from kubectl_win.knowledge import load
from kubectl_win.wellknown import OS_LABEL, windows_taint_keys


def os_taints_in_use(windows: tuple[NodeRecord, ...]) -> Counter[Taint]:
    keys = windows_taint_keys()
    return Counter(t for n in windows for t in n.scheduling_taints if t.key in keys)


def suggested_taint(node: NodeRecord, windows: tuple[NodeRecord, ...], used: Counter[Taint] | None = None) -> str:
    """The taint the other Windows nodes use (KEP-116's os=Win<release> per build), else os=windows.
    `used` is os_taints_in_use(windows) when the caller suggests taints for many nodes."""
    if used is None:
        used = os_taints_in_use(windows)
    if not used:
        return "os=windows"
    taint = used.most_common(1)[0][0]
    if taint.key == "os" and taint.value.lower().startswith("win") and taint.value.lower() != "windows":
        build = builds.build_of(node.build_number)
        if build and build.taint_value:
            return f"os={build.taint_value}"
    return f"{taint.key}={taint.value}" if taint.value else taint.key


def run(snapshot: Snapshot) -> list[Finding]:
    windows = snapshot.windows_nodes
    if not windows:
        return []
    findings: list[Finding] = []
    if "nodes" in snapshot.read and snapshot.namespace is None:
        used = os_taints_in_use(windows)
        for node in windows:
            if not node.scheduling_taints:
                findings.append(finding("windows-node-untainted", node.ref, "spec.taints", ignores=node.ignores,
                                        node=node.name, taint=suggested_taint(node, windows, used)))
            else:
                findings.extend(_unrelated_taints(node, windows, snapshot, used))
    index = scheduling.NodeIndex(windows)
    for workload in snapshot.workloads:
        placement = scheduling.effective(workload.placement, snapshot.runtime_classes)
        if workload.target.windows:
            findings.extend(_windows_workload(workload, placement, windows, index, snapshot))
        else:
            findings.extend(_linux_workload(workload, placement, index))
    return findings


def _unrelated_taints(node: NodeRecord, windows: tuple[NodeRecord, ...], snapshot: Snapshot,
                      used: Counter[Taint]) -> list[Finding]:
    """A Windows node whose only NoSchedule/NoExecute taints have nothing to do with the OS (spot capacity,
    GPUs, dedicated pools): every Linux pod that tolerates them, as spot-aware workloads do, can land there."""
    transient = set(load("taints")["transient_taint_keys"])
    lasting = [t for t in node.scheduling_taints if t.key not in transient]
    if not lasting or any(t.key in windows_taint_keys() for t in lasting):
        return []
    tolerating = []
    for workload in snapshot.workloads:
        if workload.target.windows or workload.host_process:
            continue
        placement = scheduling.effective(workload.placement, snapshot.runtime_classes)
        if not scheduling.pins_os(placement, "linux") and scheduling.fits(placement, node):
            tolerating.append(workload.ref.display())
    linux = (f"; Linux workloads that tolerate them and can land there: {name_list(tolerating)}" if tolerating
             else "; any Linux pod that tolerates them can land there")
    return [finding("windows-node-taints-not-os", node.ref, "spec.taints", ignores=node.ignores, node=node.name,
                    taints=", ".join(t.text() for t in lasting), linux=linux,
                    taint=suggested_taint(node, windows, used))]


def _linux_workload(workload: WorkloadRecord, placement, index) -> list[Finding]:  # type: ignore[no-untyped-def]
    if scheduling.pins_os(placement, "linux") or workload.host_process:
        return []
    landing = [n.name for n in index.fitting(placement)]
    if not landing:
        return []
    ref = workload.ref
    fix = fixes.node_selector(ref, workload.spec_path, {OS_LABEL: "linux"})
    severity = "error" if ref.kind == "DaemonSet" else None
    return [finding("linux-workload-can-land-on-windows", ref, workload.spec_path + ".nodeSelector",
                    severity=severity, ignores=workload.ignores, object=ref.display(), nodes=name_list(landing),
                    fix=fix)]


def _windows_workload(workload: WorkloadRecord, placement, windows, index,  # type: ignore[no-untyped-def]
                      snapshot: Snapshot) -> list[Finding]:
    ref = workload.ref
    out = []
    own = workload.placement
    gap = os_selector_gap(own.node_selector, own.required_terms, own.node_name, own.runtime_class,
                          {name: rc.node_selector for name, rc in snapshot.runtime_classes.items()},
                          "runtimeclasses" in snapshot.read)
    if gap is not None:  # explain's rule (explain/placement.py), on the cluster's RuntimeClasses
        out.append(finding("windows-workload-no-os-selector", ref, workload.spec_path + ".nodeSelector",
                           severity=gap.severity, ignores=workload.ignores, object=ref.display(),
                           reasons=workload.target.because(), unseen=gap.note(),
                           fix=fixes.node_selector(ref, workload.spec_path, {OS_LABEL: "windows"})))
    groups = index.selecting_groups(placement)  # nodes alike in what the placement reads, taints included
    if not groups:
        if placement.node_name:
            return out
        selector = ", ".join(f"{k}={v}" for k, v in placement.node_selector.items()) or "node affinity"
        labels = sorted({n.build_label or n.windows_build or "" for n in windows} - {""})
        if labels:
            fix = Fix(note=f"Select labels a Windows node has, for example nodeSelector {{kubernetes.io/os: windows, "
                           f"node.kubernetes.io/windows-build: '{labels[0]}'}} (builds present: {', '.join(labels)}).")
        else:
            fix = Fix(commands=(("kubectl", "get", "nodes", "-l", "kubernetes.io/os=windows", "--show-labels"),),
                      note="Select labels a Windows node has; the command lists them.")
        out.append(finding("windows-workload-no-matching-node", ref, workload.spec_path + ".nodeSelector",
                           ignores=workload.ignores, object=ref.display(), selector=selector, count=len(windows),
                           fix=fix))
        return out
    blocking_by_group = [scheduling.blocking_taints(placement, group[0]) for group in groups]
    if not all(blocking_by_group):
        return out
    blocking: Counter[Taint] = Counter()
    for group, taints in zip(groups, blocking_by_group, strict=True):
        for taint in taints:
            blocking[taint] += len(group)
    taint = blocking.most_common(1)[0][0]
    nodes = [n.name for group, taints in zip(groups, blocking_by_group, strict=True) if taint in taints
             for n in group]
    toleration = fixes.toleration_for(taint.key, taint.value, taint.effect)
    fix = fixes.add_toleration(ref, workload.spec_path, bool(workload.placement.tolerations), toleration)
    out.append(finding("windows-workload-missing-toleration", ref, workload.spec_path + ".tolerations",
                       ignores=workload.ignores, object=ref.display(), taint=taint.text(), nodes=name_list(nodes),
                       fix=fix))
    return out
