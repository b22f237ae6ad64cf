"""Catalogue causes that hold in one context only (knowledge/symptoms.yaml: presumes).

"failed to find executable" is a HostProcess container's Linux-style command path when the pod runs HostProcess
containers; in any other container the same words say only that a program was not found. Such an entry names the
fact of the cluster its cause presumes; where doctor cannot see that fact on the pod, the finding is unsure and says
what the message does establish (`otherwise`). Events, container states, `--deep` and bundles read it here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from kubectl_win.doctor.records import NodeRecord, PodRecord

# The facts an entry may presume, read from the pod and its node.
FACTS: dict[str, Callable[[PodRecord | None, NodeRecord | None], bool]] = {
    "host_process": lambda pod, _node: pod is not None and pod.host_process,
    "pod_network": lambda pod, _node: pod is not None and not pod.host_network,  # its localhost is not the node's
    "local_logon": lambda pod, _node: pod is not None and not pod.domain_logon,  # no gMSA, no DOMAIN\user
}


@cache
def _presumed() -> dict[str, tuple[str, str]]:
    from kubectl_win.knowledge import load

    out: dict[str, tuple[str, str]] = {}
    for entry in load("symptoms")["symptoms"]:
        presumes = entry.get("presumes")
        if presumes:
            out[entry["check"]] = (str(presumes["fact"]), " ".join(str(presumes["otherwise"]).split()))
    return out


def unsettled(check: str, pod: PodRecord | None, node: NodeRecord | None) -> str | None:
    """What the message establishes when the check's cause presumes a fact the cluster does not show (None when
    the entry presumes nothing, or the fact holds)."""
    presumed = _presumed().get(check)
    if presumed is None:
        return None
    fact, otherwise = presumed
    return None if FACTS[fact](pod, node) else otherwise
