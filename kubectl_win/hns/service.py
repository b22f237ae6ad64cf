"""analyze_files / analyze_objects: an HNS dump and the cluster's objects in, an HnsReport out. No printing."""

from __future__ import annotations

import json
import re
from typing import Any

from kubectl_win.errors import InputError
from kubectl_win.findings import sort_key
from kubectl_win.hns.analyze import analyze, infer_node
from kubectl_win.hns.cluster import ClusterView, build_view
from kubectl_win.hns.model import KNOWN_KEYS, parse
from kubectl_win.hns.report import HnsReport

COMPARED_KINDS = (("Service", "Services"), ("EndpointSlice", "EndpointSlices"), ("Pod", "Pods"), ("Node", "Nodes"))
# The README's one-liner: what to run again when a dump was written with too small a ConvertTo-Json depth.
COLLECT_COMMAND = ("@{node=$env:COMPUTERNAME.ToLower(); networks=Get-HnsNetwork; endpoints=Get-HnsEndpoint; "
                   "policyLists=Get-HnsPolicyList; namespaces=Get-HnsNamespace} | ConvertTo-Json -Depth 20 | "
                   "Set-Content -Encoding UTF8 hns.json")
# What ConvertTo-Json writes for a nested object or array below its -Depth (default 2).
_TRUNCATED = re.compile(r"^(?:System\.Object\[\]|System\.Collections\.\w+|@\{.*\})$", re.DOTALL)


def read_hns_dump(path: str) -> dict[str, Any]:
    """The dump a user collected (the README's one-liner) or the in-pod script printed."""
    from kubectl_win.manifests.inputs import read_input_text

    text = read_input_text(path, "HNS dump")
    return parse_hns_text(text, path)


def parse_hns_text(text: str, origin: str) -> dict[str, Any]:
    from kubectl_win.manifests.yamlsafe import NestingError, json_loads

    try:
        doc = json_loads(text)
    except NestingError:
        raise InputError(f"{origin}: nested too deeply to be an HNS dump") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{origin}: not JSON at line {exc.lineno} column {exc.colno}: {exc.msg} "
                         "(expected one object with networks, endpoints, policyLists, loadBalancers, ...)") from None
    if not isinstance(doc, dict):
        raise InputError(f"{origin}: the HNS dump is a {type(doc).__name__}; expected one object with keys "
                         f"{', '.join(KNOWN_KEYS[:6])}")
    if not any(key in doc for key in KNOWN_KEYS):
        raise InputError(f"{origin}: no HNS keys in the dump (expected some of {', '.join(KNOWN_KEYS[:6])})")
    truncated = _truncated_at(doc, "")
    if truncated is not None:
        path, value = truncated
        raise InputError(f"{origin}: {path} reads {value[:60]!r}: the dump was written with a ConvertTo-Json "
                         "depth too small, which flattens nested HNS objects, so comparing it would give false "
                         f"findings. Collect it again with -Depth 20 on the node: {COLLECT_COMMAND}")
    return doc


def _truncated_at(value: Any, path: str, depth: int = 0) -> tuple[str, str] | None:
    """The first place ConvertTo-Json cut off below its depth, as (path, what it wrote there)."""
    if isinstance(value, str):
        return (path or "the dump", value) if _TRUNCATED.match(value.strip()) else None
    if depth > 40:
        return None
    if isinstance(value, dict):
        items = ((f"{path}.{key}" if path else str(key), item) for key, item in value.items() if key != "kubeProxyLog")
    elif isinstance(value, list):
        items = ((f"{path}[{index}]", item) for index, item in enumerate(value))
    else:
        return None
    for child_path, child in items:
        found = _truncated_at(child, child_path, depth + 1)
        if found is not None:
            return found
    return None


def read_cluster(path: str) -> ClusterView:
    from kubectl_win.doctor.read.dump import open_dump

    return build_view(open_dump(path).objects())


def analyze_objects(doc: dict[str, Any], view: ClusterView | None, node: str | None = None,
                    config: str | None = None) -> HnsReport:
    """The report for one node's dump; `view` None means there is nothing to compare with."""
    from kubectl_win.policy import load_policy

    state = parse(doc)
    view = view or ClusterView()
    node = node or infer_node(state, view)
    findings = load_policy(config).apply(analyze(state, view, node))
    findings.sort(key=sort_key)
    compared = [label for kind, label in COMPARED_KINDS if kind in view.kinds]
    return HnsReport(node, state, findings, compared)


def analyze_files(hns_path: str, cluster_path: str | None = None, node: str | None = None,
                  config: str | None = None) -> HnsReport:
    view = read_cluster(cluster_path) if cluster_path else None
    return analyze_objects(read_hns_dump(hns_path), view, node, config)
