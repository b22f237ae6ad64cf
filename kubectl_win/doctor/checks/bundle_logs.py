"""A support bundle's node logs and event logs through the symptom matcher and the model of the node stack
(klog, logfmt and event text made readable by collect.loglines), each finding on the node or on the pod the
line names, with its file and line; kube-proxy lines the symptoms do not claim through hns's sync-failure
patterns."""

from __future__ import annotations

from typing import Any

from kubectl_win.catalog import finding
from kubectl_win.doctor.checks import evidence, image_platform, misplaced, versions
from kubectl_win.doctor.checks.bundle import collected_nodes, located, node_ref
from kubectl_win.doctor.records import Snapshot
from kubectl_win.doctor.signatures import model, symptoms
from kubectl_win.findings import Finding, Fix, ObjectRef, fix_from_template

EXCERPT = 240


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
    from kubectl_win.wincodes import describe

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
    running, build = versions.of_node(snapshot, node)  # the known bugs' versions, as for the node's events
    for (_key, pod), (count, number, text_line, found) in sorted(seen.items(), key=lambda kv: kv[1][1]):
        check = found.check
        ref = ObjectRef("v1", "Pod", pod[0], pod[1]) if pod else node_ref(node)
        flat = " ".join(text_line.split())
        excerpt = (flat if len(flat) <= EXCERPT else flat[:EXCERPT - 1] + "…") + describe(found.codes)
        values = {"node": node, "namespace": pod[0] if pod else "kube-system", "object": ref.display(),
                  "pod": pod[1] if pod else node}
        fix = fix_from_template(found.fix, values) if found.fix else Fix(
            commands=(("kubectl", "win", "logs", node, component.split()[0]),),
            note=f"See {member} line {number} in the bundle, and the node's current log.")
        fix = image_platform.with_evidence(found.check, text_line, None, fix)
        times = f", {count}x" if count > 1 else ""
        where = f" (on {node}, bundle: {member}:{number}{times})"
        labels: dict[str, str] = {}
        if found.placed:  # placed by the model: its labels, and the next steps for its subsystem on this node
            reading = model.read(text_line, "", "node", component.split()[0])
            labels = reading.labels()
            fix = model.next_steps(reading, node)
            where = f" (bundle: {member}:{number}{times})"
        decided = evidence.decide(
            found.confidence,
            misplaced.pod_named(pod[0], pod[1], snapshot) if pod else misplaced.pod_in_line(text_line, snapshot),
            snapshot.node(node) if snapshot else None, check, text_line, "", "node", component.split()[0])
        if decided.cause and "cause" in labels:
            labels["cause"] = decided.cause
        try:
            out.append(model.with_known_bug(finding(
                check, ref, f"logs/{component}", object=ref.display(), reason=f"{component} log", excerpt=excerpt,
                where=where, node=node, on_node=f" on {node}", fix=fix, route=decided.route, at=(member, number),
                confidence=decided.confidence, **labels),
                text_line, node, running, build, cause=labels.get("cause", "")))
        except KeyError:
            continue  # a catalogue entry whose texts need values a log line cannot give
    if component == "kube-proxy":
        lines = {text_line: number for number, text_line in unclaimed}
        for what, text_line in kube_proxy_matches([t for _, t in unclaimed]):
            number = next((n for t, n in lines.items() if " ".join(t.split())[:400] == text_line), None)
            out.append(located(finding("hns-kube-proxy-sync-error", node_ref(node), "logs/kube-proxy", node=node,
                                       what=what, line=text_line), member, number))
    return out
