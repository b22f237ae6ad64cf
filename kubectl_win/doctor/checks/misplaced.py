"""A Linux workload that landed on a Windows node: what its failures mean there.

A Linux shell that is not found, a Linux user the image does not have, a chown Windows cannot do, a Linux path:
on a pod that asks for Windows these are settings to change; on a pod that neither selects Windows nor runs a
Windows image they all have one cause, its placement (the same answer linux-workload-can-land-on-windows gives
its controller). The failures that mean this are marked in the data (knowledge/symptoms.yaml and
knowledge/failure_model.yaml: linux_workload).
"""

from __future__ import annotations

import re

from kubectl_win.doctor import fixes
from kubectl_win.doctor.records import NodeRecord, PodRecord, Snapshot
from kubectl_win.doctor.signatures import model, symptoms
from kubectl_win.explain.target import is_windows_image
from kubectl_win.findings import Fix
from kubectl_win.manifests.objects import spec_path_of
from kubectl_win.wellknown import OS_LABEL


def is_linux_workload(pod: PodRecord | None, node: NodeRecord | None) -> bool:
    """A pod on a Windows node that neither selects Windows nor runs a Windows image."""
    return (pod is not None and node is not None and node.windows and not pod.target.windows
            and not any(is_windows_image(c.image) for c in pod.containers if c.image))


def shown_by(check: str, message: str, reason: str = "", context: str = "pod", writer: str = "") -> bool:
    """Whether the failure is one a Linux workload shows on Windows, for a check and the text it read (a node log
    line: its writer's): marked so (its catalogue entry or its condition), or any failure on the way to the pod's
    first start (a pull, a mount, its sandbox, creating or starting a container), which a Linux image never gets
    past on a Windows node. A failure after it started (a probe, an exec) is not its placement's."""
    if model.is_model_check(check):
        reading = model.read(message, reason, context, writer)
        return model.linux_workload_condition(reading.condition) or (
            context == "pod" and model.starts_pod(reading.operation))
    return symptoms.linux_workload_check(check) or (context == "pod" and symptoms.fails_on_the_way_to_start(check))


# The kubelet names the pod a line is about: pod="shop/web-1" (structured), or pod "web-1_shop(uid)" (klog).
_POD_NAMED = re.compile(r'\bpods?="(?P<ns>[a-z0-9-]+)/(?P<name>[a-z0-9.-]+)"|'
                        r'\bpod "(?P<name2>[a-z0-9.-]+)_(?P<ns2>[a-z0-9-]+)\(', re.IGNORECASE)


def pod_in_line(line: str, snapshot: Snapshot | None) -> PodRecord | None:
    """The pod of the snapshot a node log line names, if it names one doctor read."""
    found = _POD_NAMED.search(line) if snapshot is not None else None
    if found is None or snapshot is None:
        return None
    return pod_named(found.group("ns") or found.group("ns2"), found.group("name") or found.group("name2"), snapshot)


def sentence(pod: PodRecord, node: str) -> str:
    return (f"{pod.namespace}/{pod.name} is a Linux workload (it has no kubernetes.io/os=windows selector and no "
            f"Windows image) that landed on Windows node {node}, where its Linux settings, paths and binaries "
            f"cannot work: keep it on Linux nodes with a kubernetes.io/os=linux node selector")


def placement(pod: PodRecord | None, node: NodeRecord | None, check: str, message: str, reason: str = "",
              context: str = "pod", writer: str = "") -> tuple[Fix, str] | None:
    """(the fix, the cause sentence) when the failure is a Linux workload's on a Windows node, else None: the one
    reading events, container states, doctor --deep's log lines and a bundle's share."""
    if pod is None or node is None or not is_linux_workload(pod, node) or \
            not shown_by(check, message, reason, context, writer):
        return None
    return fix(pod, node.name), sentence(pod, node.name)


def pod_named(namespace: str, name: str, snapshot: Snapshot | None) -> PodRecord | None:
    if snapshot is None:
        return None
    return next((p for p in snapshot.pods if p.namespace == namespace and p.name == name), None)


def fix(pod: PodRecord, node: str) -> Fix:
    owner = pod.owner_ref
    return fixes.node_selector(owner, spec_path_of(owner.kind), {OS_LABEL: "linux"}, note=sentence(pod, node) + ".")
