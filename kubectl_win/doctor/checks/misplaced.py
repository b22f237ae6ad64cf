"""A Linux workload that landed on a Windows node: what its failures mean there.

A Linux shell that is not found, a Linux user the image does not have, a chown Windows cannot do, a Linux path:
on a pod that asks for Windows these are settings to change; on a pod that neither selects Windows nor runs a
Windows image they all have one cause, its placement (the same answer linux-workload-can-land-on-windows gives
its controller). The failures that mean this are marked in the data (knowledge/symptoms.yaml and
knowledge/failure_model.yaml: linux_workload).
"""

from __future__ import annotations

from kubectl_win.doctor import fixes
from kubectl_win.doctor.records import EventRecord, NodeRecord, PodRecord
from kubectl_win.doctor.signatures import model, symptoms
from kubectl_win.explain.target import is_windows_image
from kubectl_win.findings import Fix
from kubectl_win.manifests.objects import spec_path_of
from kubectl_win.wellknown import OS_LABEL


def is_linux_workload(pod: PodRecord | None, node: NodeRecord | None) -> bool:
    """A pod on a Windows node that neither selects Windows nor runs a Windows image."""
    return (pod is not None and node is not None and node.windows and not pod.target.windows
            and not any(is_windows_image(c.image) for c in pod.containers if c.image))


def shows_it(event: EventRecord) -> bool:
    """Whether the failure is one a Linux workload shows on Windows (by its catalogue entry or its condition)."""
    if model.is_model_check(event.check):
        reading = model.read(event.message, event.reason, "node" if event.ref.kind == "Node" else "pod")
        return model.linux_workload_condition(reading.condition)
    return symptoms.linux_workload_check(event.check)


def sentence(pod: PodRecord, node: str) -> str:
    return (f"{pod.namespace}/{pod.name} is a Linux workload (it has no kubernetes.io/os=windows selector and no "
            f"Windows image) that landed on Windows node {node}, where its Linux settings, paths and binaries "
            f"cannot work: keep it on Linux nodes with a kubernetes.io/os=linux node selector")


def fix(pod: PodRecord, node: str) -> Fix:
    owner = pod.owner_ref
    return fixes.node_selector(owner, spec_path_of(owner.kind), {OS_LABEL: "linux"}, note=sentence(pod, node) + ".")
