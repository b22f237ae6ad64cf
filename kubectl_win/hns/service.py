"""analyze_files / analyze_objects: an HNS dump and the cluster's objects in, an HnsReport out. No printing."""

from __future__ import annotations

import json
from typing import Any

from kubectl_win.errors import InputError
from kubectl_win.findings import sort_key
from kubectl_win.hns.analyze import analyze, infer_node
from kubectl_win.hns.cluster import ClusterView, build_view
from kubectl_win.hns.model import KNOWN_KEYS, parse
from kubectl_win.hns.report import HnsReport

COMPARED_KINDS = (("Service", "Services"), ("EndpointSlice", "EndpointSlices"), ("Pod", "Pods"), ("Node", "Nodes"))


def read_hns_dump(path: str) -> dict[str, Any]:
    """The dump a user collected (the README's one-liner) or the in-pod script printed."""
    from kubectl_win.manifests import read_input_text

    text = read_input_text(path, "HNS dump")
    return parse_hns_text(text, path)


def parse_hns_text(text: str, origin: str) -> dict[str, Any]:
    from kubectl_win.manifests import NestingError, json_loads

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
    return doc


def read_cluster(path: str) -> ClusterView:
    from kubectl_win.doctor.dump import read_objects

    return build_view(read_objects(path))


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
