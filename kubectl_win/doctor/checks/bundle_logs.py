"""A support bundle's node logs and event logs through the symptom matcher and the model of the node stack
(klog, logfmt and event text made readable by collect.loglines), each finding on the node or on the pod the
line names, with its file and line; kube-proxy lines the symptoms do not claim through hns's sync-failure
patterns."""

from __future__ import annotations

from typing import Any

from kubectl_win.catalog import finding
from kubectl_win.doctor.checks import misplaced, versions
from kubectl_win.doctor.checks.bundle import collected_nodes, located, node_ref
from kubectl_win.doctor.checks.log_line import Place, line_finding
from kubectl_win.doctor.records import Snapshot
from kubectl_win.doctor.signatures import model, symptoms
from kubectl_win.findings import Finding, Fix, ObjectRef


def run(snapshot: Snapshot) -> list[Finding]:
    out = []
    for node in collected_nodes(snapshot):
        for member in node.under("logs") + node.under("events"):
            out += scan_file(node.name, member, node.text(member), snapshot)
    return out


def component_of(member: str) -> str:
    """logs/kubelet.1.log -> kubelet; events/hns-admin.log -> hns-admin events."""
    stem = member.rsplit("/", 1)[-1].split(".", 1)[0]
    return f"{stem} events" if "/events/" in member else stem


def scan_file(node: str, member: str, text: str, snapshot: Snapshot | None = None) -> list[Finding]:
    """One finding per symptom per (node or pod) in the file, naming its first line and how often it came; with
    the bundle's cluster (`snapshot`), a line about a pod is read with that pod's evidence too."""
    from kubectl_win.collect.loglines import parse
    from kubectl_win.hns.analyze import kube_proxy_matches

    component = component_of(member)
    seen: dict[tuple[str, tuple[str, str] | None], list[Any]] = {}
    unclaimed: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        line = parse(raw)
        found = symptoms.match(line.text, "", "log", component.split()[0])
        if found is None or found.generic or (found.placed and component == "kube-proxy"
                                              and kube_proxy_matches([line.text])):
            unclaimed.append((number, line.text))  # kube-proxy's own sync errors are more specific than the model
            continue
        key = (model.fold_key(found, line.text, component.split()[0]), line.pod)
        if key in seen:
            seen[key][0] += 1
        else:
            seen[key] = [1, number, line.text, found]
    out = []
    running = versions.of_node(snapshot, node)  # the known bugs' versions, as for the node's events
    for (_key, pod), (count, number, text_line, found) in sorted(seen.items(), key=lambda kv: kv[1][1]):
        ref = ObjectRef("v1", "Pod", pod[0], pod[1]) if pod else node_ref(node)
        times = f", {count}x" if count > 1 else ""
        place = Place(node=node, label=component, writer=component.split()[0], ref=ref,
                      values={"node": node, "namespace": pod[0] if pod else "kube-system", "object": ref.display(),
                              "pod": f"{pod[0]}/{pod[1]}" if pod else ref.display()},  # as an event's and --deep's
                      fallback=Fix(commands=(("kubectl", "win", "logs", node, component.split()[0]),),
                                   note=f"See {member} line {number} in the bundle, and the node's current log."),
                      where=f" (on {node}, bundle: {member}:{number}{times})",
                      placed_where=f" (bundle: {member}:{number}{times})", at=(member, number))
        evidence_pod = misplaced.pod_named(pod[0], pod[1], snapshot) if pod else \
            misplaced.pod_in_line(text_line, snapshot)
        made = line_finding(found, text_line, place, evidence_pod, snapshot, running)
        if made is not None:
            out.append(made)
    if component == "kube-proxy":
        lines = {text_line: number for number, text_line in unclaimed}
        for what, text_line in kube_proxy_matches([t for _, t in unclaimed]):
            number = next((n for t, n in lines.items() if " ".join(t.split())[:400] == text_line), None)
            out.append(located(finding("hns-kube-proxy-sync-error", node_ref(node), "logs/kube-proxy", node=node,
                                       what=what, line=text_line), member, number))
    return out
