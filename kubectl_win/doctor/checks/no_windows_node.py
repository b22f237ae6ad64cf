"""A pod that asks for Windows and cannot be scheduled because the cluster has no Windows node to take it: the
scheduler's "didn't match node selector" is then the cluster's answer, not a question (one reading for the
FailedScheduling event and the cluster-level windows-nodes-missing finding)."""

from __future__ import annotations

import re

from kubectl_win.doctor.records import NodeRecord, PodRecord
from kubectl_win.findings import Fix

# The scheduler's words for nodes the pod's selector or required affinity rules out.
_SELECTOR_MISS = re.compile(r"didn'?t match (Pod's )?node (selector|affinity)", re.IGNORECASE)


def sentence(pod: PodRecord | None, reason: str, text: str,
             windows_nodes: tuple[NodeRecord, ...] | None) -> str | None:
    """The cause when the scheduler rules out every node for a pod that asks for Windows and no Windows node is
    Ready and schedulable; None otherwise (or when doctor did not read the nodes)."""
    if windows_nodes is None or pod is None or not pod.target.windows or reason != "FailedScheduling" \
            or not _SELECTOR_MISS.search(text):
        return None
    usable = [n for n in windows_nodes if n.ready is True and not n.unschedulable]
    if usable:
        return None
    asks = f" ({pod.target.because()})" if pod.target.because() else ""
    if not windows_nodes:
        return (f"the pod asks for Windows{asks} and the cluster has no Windows node, so no node matches its "
                "selector")
    names = ", ".join(sorted(n.name for n in windows_nodes)[:5])
    return (f"the pod asks for Windows{asks} and none of the cluster's Windows nodes ({names}) is Ready and "
            "schedulable")


def fix(windows_nodes: tuple[NodeRecord, ...], route: Fix | None) -> Fix:
    """Add a Windows pool (the platform's way, where doctor knows it), or bring a Windows node back."""
    if windows_nodes:
        return Fix(commands=(("kubectl", "get", "nodes", "-l", "kubernetes.io/os=windows"),),
                   note="Bring a Windows node back (its own findings say why it is not Ready, or uncordon it), "
                        "or add one.")
    return route or Fix(note="Join a Windows node to the cluster (sig-windows-tools "
                             "guides/guide-for-adding-windows-node.md) before scheduling Windows workloads.")
