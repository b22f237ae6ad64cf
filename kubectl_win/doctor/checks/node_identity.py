"""An agent the platform runs as a host service with the node's own identity (EKS's kube-proxy) that the API
server refuses: the platform grants that identity the agent's rights through its own mapping, so the cause is
the mapping, not the agent's credentials (knowledge/platforms.yaml: a platform's `node_identity_rights` fix).
Elsewhere a component refused as the node was given the kubelet's kubeconfig, as the text's own reading says."""

from __future__ import annotations

import re

from kubectl_win import platforms
from kubectl_win.doctor.records import NodeRecord
from kubectl_win.doctor.signatures import model
from kubectl_win.findings import Fix

RIGHTS = "node_identity_rights"
_AS_THE_NODE = re.compile(r'User "(system:node:[^"]+)" cannot \w+ resource')


def decide(node: NodeRecord | None, text: str, reason: str, context: str, writer: str) -> tuple[str, Fix] | None:
    """(cause, the platform's fix) where the node's platform runs the refused agent as a service with the node's
    identity and says how it grants that identity its rights; None otherwise."""
    found = _AS_THE_NODE.search(text) if node is not None else None
    if found is None or node is None:
        return None
    where = platforms.platform(node.platform)
    spec = where.fixes.get(RIGHTS) or {}
    agent = str(spec.get("agent") or "")
    if not agent or where.runs_as_pod(agent):
        return None
    if agent not in model.agents_in(model.read(text, reason, context, writer)):
        return None
    fix = platforms.fix(where, RIGHTS, platforms.fix_values(where, node.name, node.labels))
    if fix is None:
        return None
    return str(spec["cause"]).format(user=found.group(1)), fix
