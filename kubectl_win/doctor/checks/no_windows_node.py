"""A pod that asks for Windows and that the scheduler cannot place because no Windows node can take it: none is
Ready and schedulable, or its node selector matches none of them. The scheduler's "didn't match node selector"
is then the cluster's answer, not a question, and the pod's FailedScheduling finding gives the same cause and
fix as the cluster-level windows-nodes-missing and the workload's windows-workload-no-matching-node."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kubectl_win.doctor import scheduling
from kubectl_win.doctor.records import NodeRecord, Placement, PodRecord, Snapshot
from kubectl_win.findings import Fix

# The scheduler's words for nodes the pod's selector or required affinity rules out.
_SELECTOR_MISS = re.compile(r"didn'?t match (Pod's )?node (selector|affinity)", re.IGNORECASE)


@dataclass(frozen=True)
class WindowsNodes:
    """What decides: the cluster's Windows nodes (where doctor read the nodes), the platform's way to add a
    pool, and the placement of each workload that targets Windows (by the workload's object)."""

    nodes: tuple[NodeRecord, ...]
    route: Fix | None
    snapshot: Snapshot

    def placement_of(self, pod: PodRecord) -> Placement | None:
        owner = pod.owner_ref
        workload = next((w for w in self.snapshot.workloads if w.ref == owner), None)
        return scheduling.effective(workload.placement, self.snapshot.runtime_classes) if workload else None


def decide(pod: PodRecord | None, reason: str, text: str, windows: WindowsNodes | None) -> tuple[str, Fix] | None:
    """(the cause, the fix) when the scheduler rules out every node for a pod that asks for Windows and no Windows
    node can take it; None otherwise (or when doctor did not read the nodes)."""
    if windows is None or pod is None or not pod.target.windows or reason != "FailedScheduling" \
            or not _SELECTOR_MISS.search(text):
        return None
    asks = f" ({pod.target.because()})" if pod.target.because() else ""
    if not windows.nodes:
        return (f"the pod asks for Windows{asks} and the cluster has no Windows node, so no node matches its "
                "selector", windows.route or Fix(note="Join a Windows node to the cluster (sig-windows-tools "
                                                     "guides/guide-for-adding-windows-node.md) before scheduling "
                                                     "Windows workloads."))
    usable = tuple(n for n in windows.nodes if n.ready is True and not n.unschedulable)
    if not usable:
        names = ", ".join(sorted(n.name for n in windows.nodes)[:5])
        return (f"the pod asks for Windows{asks} and none of the cluster's Windows nodes ({names}) is Ready and "
                "schedulable", Fix(commands=(("kubectl", "get", "nodes", "-l", "kubernetes.io/os=windows"),),
                                   note="Bring a Windows node back (its own findings say why it is not Ready, or "
                                        "uncordon it), or add one."))
    placement = windows.placement_of(pod)
    if placement is None or placement.node_name or scheduling.NodeIndex(usable).selecting_groups(placement):
        return None
    return (f"its {selector_text(placement)} matches none of the cluster's {len(windows.nodes)} Windows nodes",
            no_matching_node_fix(windows.nodes))


def selector_text(placement: Placement) -> str:
    shown = ", ".join(f"{k}={v}" for k, v in placement.node_selector.items())
    return f"node selector ({shown})" if shown else "node affinity"


def no_matching_node_fix(windows: tuple[NodeRecord, ...]) -> Fix:
    """Select labels the Windows nodes carry (the builds present, where the nodes name them)."""
    labels = sorted({n.build_label or n.windows_build or "" for n in windows} - {""})
    if labels:
        return Fix(note=f"Select labels a Windows node has, for example nodeSelector {{kubernetes.io/os: windows, "
                        f"node.kubernetes.io/windows-build: '{labels[0]}'}} (builds present: {', '.join(labels)}).")
    return Fix(commands=(("kubectl", "get", "nodes", "-l", "kubernetes.io/os=windows", "--show-labels"),),
               note="Select labels a Windows node has; the command lists them.")
