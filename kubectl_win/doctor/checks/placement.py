"""Taints and selectors that keep Linux pods off Windows nodes and let Windows pods onto them."""

from __future__ import annotations

from collections import Counter

from kubectl_win import builds
from kubectl_win.catalog import finding
from kubectl_win.doctor import fixes, scheduling
from kubectl_win.doctor.checks import name_list, no_windows_node
from kubectl_win.doctor.records import NodeRecord, Snapshot, Taint, WorkloadRecord
from kubectl_win.explain.placement import os_selector_gap
from kubectl_win.findings import Finding, Fix
from kubectl_win.knowledge import load
from kubectl_win.taint_scheme import SchemeTaint, windows_taint
from kubectl_win.wellknown import OS_LABEL, windows_taint_keys


def os_taints_in_use(windows: tuple[NodeRecord, ...]) -> Counter[Taint]:
    keys = windows_taint_keys()
    return Counter(t for n in windows for t in n.scheduling_taints if t.key in keys)


def suggested_taint(node: NodeRecord, snapshot: Snapshot, used: Counter[Taint] | None = None) -> SchemeTaint:
    """The one taint scheme's answer for the node (kubectl_win/taint_scheme.py: the taint the other Windows
    nodes carry, else the platform's own, else KEP-116's os=Win<release>), as scaffold writes its toleration.
    `used` is os_taints_in_use(windows) when the caller suggests taints for many nodes."""
    if used is None:
        used = os_taints_in_use(snapshot.windows_nodes)
    in_use = [(t.key, t.value or None, t.effect) for t, n in used.items() for _ in range(n)]
    return windows_taint(builds.build_of(node.build_number), in_use, snapshot.platform_of(node).id)


def taint_fix(node: NodeRecord, snapshot: Snapshot, taint: SchemeTaint, note: str = "") -> Fix:
    """Taint the node through its platform's pool (what lasts there), or with kubectl where nothing else
    reconciles taints (kubeadm, a cluster that shows no platform)."""
    text = f"{taint.key_value()}:NoSchedule"
    lead = note + " " if note else ""
    tolerate = f"Windows workloads need the toleration for {text} ({taint.why}; kubectl win scaffold writes it)."
    route = fixes.node_route(snapshot, node, "taint", taint=text, taint_key=taint.key, taint_value=taint.value or "",
                             taint_effect_api="NO_SCHEDULE")
    if route is None:
        return Fix(commands=(("kubectl", "taint", "nodes", node.name, text),), note=lead + tolerate)
    return Fix(commands=route.commands, note=f"{lead}{route.note} {tolerate}")


def run(snapshot: Snapshot) -> list[Finding]:
    windows = snapshot.windows_nodes
    if not windows:
        return []
    findings: list[Finding] = []
    if "nodes" in snapshot.read and snapshot.namespace is None:
        used = os_taints_in_use(windows)
        for node in windows:
            if not node.scheduling_taints:
                taint = suggested_taint(node, snapshot, used)
                findings.append(finding("windows-node-untainted", node.ref, "spec.taints", ignores=node.ignores,
                                        node=node.name, taint=taint.key_value(),
                                        route=taint_fix(node, snapshot, taint)))
            else:
                findings.extend(_unrelated_taints(node, snapshot, used))
    index = scheduling.NodeIndex(windows)
    for workload in snapshot.workloads:
        placement = scheduling.effective(workload.placement, snapshot.runtime_classes)
        if workload.target.windows:
            findings.extend(_windows_workload(workload, placement, windows, index, snapshot))
        else:
            findings.extend(_linux_workload(workload, placement, index))
    return findings


def _unrelated_taints(node: NodeRecord, snapshot: Snapshot, used: Counter[Taint]) -> list[Finding]:
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
    taint = suggested_taint(node, snapshot, used)
    return [finding("windows-node-taints-not-os", node.ref, "spec.taints", ignores=node.ignores, node=node.name,
                    taints=", ".join(t.text() for t in lasting), linux=linux, taint=taint.key_value(),
                    route=taint_fix(node, snapshot, taint, "Add the OS taint alongside the existing ones."))]


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
        out.append(finding("windows-workload-no-matching-node", ref, workload.spec_path + ".nodeSelector",
                           ignores=workload.ignores, object=ref.display(), selector=selector, count=len(windows),
                           fix=no_windows_node.no_matching_node_fix(tuple(windows))))
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
