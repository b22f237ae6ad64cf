"""Node agents (kube-proxy, CNI, csi-proxy, CSI node plugins) recognised by pod, owner or image name."""

from __future__ import annotations

from functools import cache

from kubectl_win.knowledge import load


@cache
def _patterns() -> dict[str, tuple[str, ...]]:
    agents = load("doctor_checks")["agents"]
    return {kind: tuple(str(p).lower() for p in patterns) for kind, patterns in agents.items()}


def agent_kinds(*names: str) -> set[str]:
    """Which agent kinds ('kube_proxy', 'cni', 'csi_proxy', 'csi_node') any of the names looks like."""
    text = "\n".join(n.lower() for n in names if n)
    found = set()
    # Substring tests, not a regex alternation of the patterns: Python's re tries every alternative at every
    # position, and checks ask this for every pod on a Windows node.
    for kind, patterns in _patterns().items():
        for pattern in patterns:
            if pattern in text:
                found.add(kind)
                break
    if "csi_proxy" in found:
        found.discard("csi_node")
    if "kube_proxy" in found:
        found.discard("cni")  # kube-proxy images are often tagged for a CNI (kube-proxy:v1.31-calico-hostprocess)
    return found


def cni_names(name: str) -> set[str]:
    """The CNI patterns a DaemonSet name matches ('calico-node-windows' -> {'calico-node', 'calico'})."""
    lowered = name.lower()
    return {p for p in _patterns()["cni"] if p in lowered}
