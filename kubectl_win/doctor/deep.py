"""doctor --deep: look inside each Windows node. Per node, `hns` (a HostProcess pod dumps HNS, compared with
the cluster) and a scan of the last hour of kubelet, containerd and kube-proxy logs with the symptom
catalogue doctor applies to events. Nodes are visited a few at a time (DEEP_CONCURRENCY) in daemon
threads, at most --max-nodes of them; the pods they create are tracked so that an interrupted run deletes
them from the main thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from kubectl_win.doctor.records import Skipped, Snapshot
from kubectl_win.doctor.signatures import model, symptoms
from kubectl_win.errors import KubectlWinError
from kubectl_win.findings import Finding, ObjectRef

DEEP_CONCURRENCY = 4
LOG_COMPONENTS = ("kubelet", "containerd", "kube-proxy")
LOG_WINDOW = timedelta(hours=1)


@dataclass
class DeepOptions:
    max_nodes: int = 10
    namespace: str = "kube-system"
    image: str | None = None
    timeout: float = 180.0
    concurrency: int = DEEP_CONCURRENCY


@dataclass
class DeepResult:
    findings: list[Finding] = field(default_factory=list)
    hns: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def run_deep(cluster: Any, snapshot: Snapshot, options: DeepOptions,
             progress: Callable[[str, int], None] | None = None) -> DeepResult:
    from kubectl_win.hns.cluster import build_view
    from kubectl_win.hns.from_node import cluster_objects
    from kubectl_win.kube.hostprocess import on_nodes

    result = DeepResult()
    candidates = [n.name for n in snapshot.windows_nodes if n.ready is not False]
    not_ready = [n.name for n in snapshot.windows_nodes if n.ready is False]
    if not_ready:
        result.skipped.append(Skipped("deep", f"not Ready, not inspected: {', '.join(not_ready)}"))
    if len(candidates) > options.max_nodes:
        rest = candidates[options.max_nodes:]
        result.skipped.append(Skipped("deep", f"--max-nodes {options.max_nodes}: not inspected: {', '.join(rest)}"))
        candidates = candidates[:options.max_nodes]
    if not candidates:
        return result
    objects = cluster_objects(cluster)
    nodes = {str((o.get("metadata") or {}).get("name")): o for o in objects if o.get("kind") == "Node"}
    view = build_view(objects)
    pods: set[tuple[str, str]] = set()
    lock = threading.Lock()
    done: list[str] = []

    def work(name: str) -> None:
        try:
            node_result = inspect(cluster, nodes.get(name) or {"metadata": {"name": name}}, view, options, pods,
                                  snapshot)
        except Exception as exc:  # noqa: BLE001 - one node's surprise must not lose the others' results
            node_result = DeepResult(skipped=[Skipped(f"deep {name}", f"{type(exc).__name__}: {exc}")])
        with lock:
            result.findings.extend(node_result.findings)
            result.hns.extend(node_result.hns)
            result.skipped.extend(node_result.skipped)
            done.append(name)
            if progress is not None:
                progress("Windows nodes inspected", len(done))

    on_nodes(cluster, candidates, work, options.concurrency, pods)
    result.hns.sort(key=lambda entry: str(entry.get("node")))
    return result


def inspect(cluster: Any, node: dict[str, Any], view: Any, options: DeepOptions,
            pods: set[tuple[str, str]], snapshot: Snapshot | None = None) -> DeepResult:
    """hns and the log scan for one node."""
    from kubectl_win.hns.from_node import dump_node, image_for
    from kubectl_win.hns.report import hns_section
    from kubectl_win.hns.service import analyze_objects
    from kubectl_win.kube.hostprocess import PodOptions

    name = str((node.get("metadata") or {}).get("name"))
    result = DeepResult()
    try:
        image = options.image or image_for(node)
        live = PodOptions(node=name, namespace=options.namespace, image=image, timeout=options.timeout)
        doc = dump_node(cluster, live, image, lambda _text: None, pods)
        doc["node"] = name
        report = analyze_objects(doc, view, name)
        result.findings.extend(report.findings)
        result.hns.append(hns_section(name, report.state))
    except KubectlWinError as exc:
        result.skipped.append(Skipped(f"hns {name}", str(exc)))
        result.hns.append({"node": name, "error": str(exc)})
    result.findings.extend(scan_node_logs(cluster, node, result.skipped, snapshot=snapshot))
    return result


def scan_node_logs(cluster: Any, node: dict[str, Any], skipped: list[Skipped],
                   now: datetime | None = None, snapshot: Snapshot | None = None) -> list[Finding]:
    from kubectl_win.nodelogs.fetch import read_component
    from kubectl_win.nodelogs.locations import detect

    name = str((node.get("metadata") or {}).get("name"))
    dist = detect(node)
    since = (now or datetime.now(UTC)) - LOG_WINDOW
    findings: list[Finding] = []
    unreachable = []
    for component in LOG_COMPONENTS:
        try:
            log = read_component(cluster, name, dist, component, since, None, None)
        except KubectlWinError as exc:
            skipped.append(Skipped(f"logs {name}", f"{component}: {exc}"))
            continue
        if log.lines is None:
            unreachable.append(component)
            continue
        findings.extend(scan_lines(name, component, log.lines, snapshot=snapshot))
    if unreachable:
        skipped.append(Skipped(f"logs {name}", f"{', '.join(unreachable)}: not readable through the log API "
                                               f"({dist.name}; kubectl win logs {name} says where they are)"))
    return findings


def node_scope(cluster: Any, node: dict[str, Any]) -> Snapshot | None:
    """The node (its object, already read) and the pods it runs, read as doctor reads them, so that `kubectl win
    logs --analyse` reads a node's lines with the evidence `doctor --deep` has (the versions it runs, the pod a
    line names); None where the API refuses the pods (a user allowed to read logs but not to list pods gets the
    text's own reading)."""
    from kubectl_win.doctor.build import SnapshotBuilder

    builder = SnapshotBuilder()
    builder.add(node, "Node")
    builder.mark_read("nodes")
    name = str((node.get("metadata") or {}).get("name") or "")
    try:
        for pod in cluster.list("pods", None, field_selector=f"spec.nodeName={name}"):
            builder.add(pod, "Pod")
        builder.mark_read("pods")
    except KubectlWinError:
        return None
    return builder.build()


def scan_lines(node: str, component: str, lines: list[str], window: str = "in the last hour",
               snapshot: Snapshot | None = None) -> list[Finding]:
    """One finding per symptom per component (per place in the model for the failures it places): the
    catalogue's own entries (generic matches are too noisy in logs), the model's, then kube-proxy's HNS failures
    the catalogue does not claim. With the cluster's `snapshot` (doctor --deep), a line that names a pod the
    snapshot holds is read with that pod's evidence too (a Linux workload that landed on this node)."""
    from kubectl_win.catalog import finding
    from kubectl_win.doctor.checks import misplaced, versions
    from kubectl_win.doctor.checks.log_line import Place, line_finding
    from kubectl_win.findings import Fix
    from kubectl_win.hns.analyze import kube_proxy_matches

    ref = ObjectRef("v1", "Node", None, node)
    seen: dict[str, tuple[int, str, symptoms.Match]] = {}
    unclaimed = []
    for line in lines:
        found = symptoms.match(line, "", "log", component)
        if found is None or found.generic or (found.placed and component == "kube-proxy"
                                              and kube_proxy_matches([line])):
            unclaimed.append(line)  # kube-proxy's own sync errors (hns/analyze.py) are more specific than the model
            continue
        key = model.fold_key(found, line, component)
        count = seen[key][0] + 1 if key in seen else 1
        seen[key] = (count, line, found)
    out = []
    running = versions.of_node(snapshot, node)  # the known bugs' versions, as for the node's events
    for _key, (count, line, found) in sorted(seen.items()):
        times = f"{count}x {window}" if count > 1 else window
        place = Place(node=node, label=component, writer=component, ref=ref,
                      values={"node": node, "namespace": "kube-system", "object": ref.display(), "pod": ref.display()},
                      fallback=Fix(commands=(("kubectl", "win", "logs", node, component, "--since", "1h", "--pattern",
                                              found.check.removeprefix("symptom-")),)),
                      where=f" (on {node}, {times})", placed_where=f" ({times})")
        made = line_finding(found, line, place, misplaced.pod_in_line(line, snapshot), snapshot, running)
        if made is not None:
            out.append(made)
    if component == "kube-proxy":
        for what, line in kube_proxy_matches(unclaimed):
            # It names the sync step that failed, not why: the log around it says.
            out.append(finding("hns-kube-proxy-sync-error", ref, "logs/kube-proxy", node=node, what=what, line=line))
    return out
