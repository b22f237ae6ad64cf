"""Could the scheduler put a pod template on a node? nodeSelector, required node affinity and taints.

Only what decides Windows vs Linux placement is modelled: resources, pod affinity and spread
constraints are ignored (they never make a Linux pod fit a Windows node or the reverse).
"""

from __future__ import annotations

from typing import Any

from kubectl_win.doctor.records import NodeRecord, Placement, RuntimeClassRecord, Taint
from kubectl_win.explain.placement import pins_os as placement_pins_os


def effective(placement: Placement, runtime_classes: dict[str, RuntimeClassRecord]) -> Placement:
    """Merge the RuntimeClass's scheduling block, as the RuntimeClass admission plugin does."""
    rc = runtime_classes.get(placement.runtime_class or "")
    if rc is None or not (rc.node_selector or rc.tolerations):
        return placement
    return Placement({**rc.node_selector, **placement.node_selector}, placement.required_terms,
                     placement.tolerations + rc.tolerations, placement.node_name, placement.runtime_class)


def tolerates(tolerations: tuple[dict[str, Any], ...], taint: Taint) -> bool:
    for toleration in tolerations:
        effect = toleration.get("effect")
        if effect and effect != taint.effect:
            continue
        key = toleration.get("key")
        if toleration.get("operator") == "Exists":
            if not key or key == taint.key:
                return True
        elif key == taint.key and str(toleration.get("value") or "") == taint.value:
            return True
    return False


def blocking_taints(placement: Placement, node: NodeRecord) -> list[Taint]:
    return [t for t in node.scheduling_taints if not tolerates(placement.tolerations, t)]


def selects(placement: Placement, node: NodeRecord) -> bool:
    """nodeName, nodeSelector and required node affinity all allow the node."""
    if placement.node_name and placement.node_name != node.name:
        return False
    for key, value in placement.node_selector.items():
        if node.labels.get(key) != value:
            return False
    if placement.required_terms is None:
        return True
    return any(_term_matches(term, node) for term in placement.required_terms)


def fits(placement: Placement, node: NodeRecord) -> bool:
    return selects(placement, node) and not blocking_taints(placement, node)


def pins_os(placement: Placement, os_name: str) -> bool:
    """The template's selector or every affinity term requires nodes of this OS (explain's rule, on a record)."""
    return placement_pins_os(placement.node_selector, placement.required_terms, os_name)


def _term_matches(term: Any, node: NodeRecord) -> bool:
    if not isinstance(term, dict):
        return False
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False  # an empty term matches nothing
    for expr in expressions:
        if not _expression_matches(expr, node.labels):
            return False
    for expr in fields:
        if not _expression_matches(expr, {"metadata.name": node.name}):
            return False
    return True


def _expression_matches(expr: Any, labels: dict[str, str]) -> bool:
    if not isinstance(expr, dict):
        return False
    key, operator = expr.get("key"), expr.get("operator")
    values = [str(v) for v in expr.get("values") or ()]
    present = key in labels
    value = labels.get(key)
    if operator == "In":
        return present and value in values
    if operator == "NotIn":
        return not present or value not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and values:
        try:
            number, bound = int(value or ""), int(values[0])
        except ValueError:
            return False
        return number > bound if operator == "Gt" else number < bound
    return False


class NodeIndex:
    """Nodes grouped by what a placement can see of them, so that judging one placement against thousands of
    nodes costs one `fits` per group: a placement reads only the labels its selector and affinity name and
    the node's NoSchedule/NoExecute taints (by name only through nodeName or matchFields)."""

    def __init__(self, nodes: tuple[NodeRecord, ...]) -> None:
        self.nodes = nodes
        self._taints = [n.scheduling_taints for n in nodes]
        self._groups: dict[tuple[str, ...], list[list[NodeRecord]]] = {}

    def _grouped(self, keys: tuple[str, ...]) -> list[list[NodeRecord]]:
        groups = self._groups.get(keys)
        if groups is None:
            by_sig: dict[Any, list[NodeRecord]] = {}
            for node, taints in zip(self.nodes, self._taints, strict=True):
                sig = (tuple(node.labels.get(k) for k in keys), tuple(k in node.labels for k in keys), taints)
                by_sig.setdefault(sig, []).append(node)
            groups = self._groups[keys] = list(by_sig.values())
        return groups

    def fitting(self, placement: Placement) -> list[NodeRecord]:
        """The nodes `fits(placement, node)` holds for, in index order within each group."""
        keys = _label_keys(placement)
        if keys is None:
            return [n for n in self.nodes if fits(placement, n)]
        return [n for group in self._grouped(keys) if fits(placement, group[0]) for n in group]

    def selecting_groups(self, placement: Placement) -> list[list[NodeRecord]]:
        """The nodes `selects` holds for, in groups whose nodes have the same scheduling taints (one node per
        group when the placement reads node names)."""
        keys = _label_keys(placement)
        if keys is None:
            return [[n] for n in self.nodes if selects(placement, n)]
        return [group for group in self._grouped(keys) if selects(placement, group[0])]


def _label_keys(placement: Placement) -> tuple[str, ...] | None:
    """The node labels the placement reads, sorted; None when it reads the node's name."""
    if placement.node_name:
        return None
    keys = set(placement.node_selector)
    for term in placement.required_terms or ():
        if not isinstance(term, dict):
            continue
        if term.get("matchFields"):
            return None
        for expr in term.get("matchExpressions") or ():
            if isinstance(expr, dict) and isinstance(expr.get("key"), str):
                keys.add(expr["key"])
    return tuple(sorted(keys))
