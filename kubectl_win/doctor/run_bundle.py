"""doctor --from-bundle: every check a support bundle (kubectl win collect) has data for, offline.

The cluster checks run on cluster.json (a --save-dump); per node, hns's checks on hns.json against the
cluster; every line of the node's logs and event logs goes through the symptom matcher (klog, logfmt and
event text made readable by collect.loglines), attributed to the node or to the pod the line names; and
the node facts the API does not show: containerd's sandbox image against the node's build, its registry
mirrors, excluded port ranges against what its load balancers need, free disk, and what could not be
collected. Every finding
from a node's files says which file (and line) it came from: in the message as "(bundle: FILE:LINE)", and
in Finding.file/line.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from typing import Any

from kubectl_win.collect.bundle import Bundle, node_entries, open_bundle
from kubectl_win.doctor.catalog import bundle_checks
from kubectl_win.doctor.records import Skipped, Snapshot
from kubectl_win.doctor.render.report import DoctorReport
from kubectl_win.doctor.signatures import symptoms
from kubectl_win.errors import InputError, KubectlWinError
from kubectl_win.findings import Finding, Fix, ObjectRef, fix_from_template
from kubectl_win.knowledge import load

EXCERPT = 240
_SANDBOX = re.compile(r'^\s*sandbox_image\s*=\s*"([^"]+)"', re.MULTILINE)
_RANGE_ROW = re.compile(r"^\s*(\d{1,5})\s+(\d{1,5})\b", re.MULTILINE)
_DYNAMIC = re.compile(r"Start Port\s*:\s*(\d+)\s+Number of Ports\s*:\s*(\d+)", re.IGNORECASE)


def bundle_finding(check_id: str, ref: ObjectRef, path: str, file: str, line: int | None = None,
                   severity: str | None = None, **values: Any) -> Finding:
    info = bundle_checks()[check_id]
    where = f"{file}:{line}" if line else file
    return Finding(id=check_id, severity=severity or info.severity, object=ref, path=path,
                   message=info.message.format_map({**values, "where": f"bundle: {where}"}),
                   fix=fix_from_template(info.fix, values), file=file, line=line, source=info.source,
                   enforced_by=info.enforced_by)


def located(finding: Finding, file: str, line: int | None = None) -> Finding:
    """A finding of another catalogue, marked with where in the bundle it came from."""
    finding.file, finding.line = file, line
    finding.message = f"{finding.message} (bundle: {file}{f':{line}' if line else ''})"
    return finding


@dataclass
class BundleResult:
    snapshot: Snapshot
    findings: list[Finding]
    hns: list[dict[str, Any]]
    skipped: list[Skipped]


def analyse(path: str, scope: str = "cluster", config: str | None = None) -> BundleResult:
    from kubectl_win.doctor.build import SnapshotBuilder
    from kubectl_win.doctor.checks.registry import run_checks
    from kubectl_win.doctor.read.dump import read_dump, read_objects
    from kubectl_win.hns.cluster import build_view

    bundle = open_bundle(path)
    cluster_name = str(bundle.json("bundle.json").get("cluster") or "cluster.json")
    if cluster_name not in bundle.files:
        raise InputError(f"{path}: bundle.json names {cluster_name}, which is not in the bundle")
    with tempfile.TemporaryDirectory(prefix="kubectl-win-bundle-") as folder:
        dump = os.path.join(folder, "cluster.json")
        with open(dump, "wb") as handle:
            handle.write(bundle.files[cluster_name])
        builder = SnapshotBuilder()
        read_dump(dump, builder)
        snapshot = builder.build()
        objects = read_objects(dump)
    from kubectl_win.doctor.read.hotfixes import with_bundle_revisions

    snapshot, patch_findings = with_bundle_revisions(bundle, snapshot, bundle_finding)
    findings = run_checks(snapshot, scope) + (patch_findings if scope != "workloads" else [])
    result = BundleResult(snapshot, findings, [], [Skipped("bundle", why) for why in bundle.refused])
    refused = len(bundle.refused)
    if scope == "workloads":
        return result
    view = build_view(objects)
    builds = {n.name: n.build_number for n in snapshot.nodes if n.windows}
    for node, entry in node_entries(bundle):
        _node(bundle, node, entry, view, builds.get(node), result, config)
    result.skipped.extend(Skipped("bundle", why) for why in bundle.refused[refused:])
    if scope == "nodes":  # as run_checks does: `doctor nodes` keeps node findings
        from kubectl_win.doctor.checks.registry import NODE_KINDS

        result.findings = [f for f in result.findings if f.object.kind in NODE_KINDS]
    return result


def report(path: str, scope: str = "cluster", config: str | None = None) -> DoctorReport:
    from kubectl_win.findings import sort_key
    from kubectl_win.policy import load_policy

    result = analyse(path, scope, config)
    findings = load_policy(config).apply(result.findings)
    findings.sort(key=sort_key)
    doctor_report = DoctorReport.build(result.snapshot, findings, scope)
    doctor_report.skipped.extend(result.skipped)
    doctor_report.locations = True
    if scope != "workloads":
        doctor_report.hns = result.hns
    return doctor_report


def _node(bundle: Bundle, node: str, entry: dict[str, Any], view: Any, build: int | None, result: BundleResult,
          config: str | None) -> None:
    folder = entry["dir"]
    ref = ObjectRef("v1", "Node", None, node)
    collected = entry.get("collected") or []
    errors = [str(e) for e in entry.get("errors") or ()]
    if not collected:
        result.findings.append(bundle_finding("bundle-node-not-collected", ref, "bundle.json", "bundle.json",
                                              node=node, error=errors[0] if errors else "no files"))
        result.hns.append({"node": node, "error": errors[0] if errors else "not collected"})
        return
    if errors:
        listed = "; ".join(errors[:3]) + (f"; and {len(errors) - 3} more" if len(errors) > 3 else "")
        result.findings.append(bundle_finding("bundle-items-failed", ref, "bundle.json", f"{folder}/manifest.json",
                                              node=node, count=len(errors), items=listed))
    state = _hns(bundle, node, folder, view, result, config)
    for member in bundle.under(f"{folder}/logs") + bundle.under(f"{folder}/events"):
        result.findings.extend(scan_file(node, member, bundle.text(member)))
    result.findings.extend(sandbox_image(bundle, node, folder, build))
    result.findings.extend(registry_mirrors(bundle, node, folder))
    result.findings.extend(excluded_ports(bundle, node, folder, state))
    result.findings.extend(free_disk(bundle, node, folder))


def _hns(bundle: Bundle, node: str, folder: str, view: Any, result: BundleResult, config: str | None) -> Any:
    from kubectl_win.hns.report import hns_section
    from kubectl_win.hns.run import analyze_objects, parse_hns_text

    member = f"{folder}/hns.json"
    if member not in bundle.files:
        result.skipped.append(Skipped(f"hns {node}", "no hns.json in the bundle"))
        return None
    try:
        doc = parse_hns_text(bundle.text(member).lstrip("\ufeff"), member)
        hns_report = analyze_objects(doc, view, node, config)
    except KubectlWinError as exc:
        result.skipped.append(Skipped(f"hns {node}", str(exc)))
        result.hns.append({"node": node, "error": str(exc)})
        return None
    result.findings.extend(located(f, member) for f in hns_report.findings)
    result.hns.append(hns_section(node, hns_report.state))
    return hns_report.state


def component_of(member: str) -> str:
    """logs/kubelet.1.log -> kubelet; events/hns-admin.log -> hns-admin events."""
    stem = member.rsplit("/", 1)[-1].split(".", 1)[0]
    return f"{stem} events" if "/events/" in member else stem


def scan_file(node: str, member: str, text: str) -> list[Finding]:
    """One finding per symptom per (node or pod) in the file, naming its first line and how often it came."""
    from kubectl_win.collect.loglines import parse
    from kubectl_win.doctor.catalog import finding
    from kubectl_win.hns.analyze import kube_proxy_matches
    from kubectl_win.hns.catalog import finding as hns_finding
    from kubectl_win.wincodes import describe

    component = component_of(member)
    seen: dict[tuple[str, tuple[str, str] | None], list[Any]] = {}
    unclaimed: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        line = parse(raw)
        found = symptoms.match(line.text, "", "log")
        if found is None or found.generic:
            unclaimed.append((number, line.text))
            continue
        key = (found.check, line.pod)
        if key in seen:
            seen[key][0] += 1
        else:
            seen[key] = [1, number, line.text, found]
    out = []
    node_ref = ObjectRef("v1", "Node", None, node)
    for (check, pod), (count, number, text_line, found) in sorted(seen.items(), key=lambda kv: kv[1][1]):
        ref = ObjectRef("v1", "Pod", pod[0], pod[1]) if pod else node_ref
        flat = " ".join(text_line.split())
        excerpt = (flat if len(flat) <= EXCERPT else flat[:EXCERPT - 1] + "…") + describe(found.codes)
        values = {"node": node, "namespace": pod[0] if pod else "kube-system", "object": ref.display(),
                  "pod": pod[1] if pod else node}
        fix = fix_from_template(found.fix, values) if found.fix else Fix(
            commands=(("kubectl", "win", "logs", node, component.split()[0]),),
            note=f"See {member} line {number} in the bundle, and the node's current log.")
        times = f", {count}x" if count > 1 else ""
        where = f" (on {node}, bundle: {member}:{number}{times})"
        try:
            result = finding(check, ref, f"logs/{component}", object=ref.display(), reason=f"{component} log",
                             excerpt=excerpt, where=where, node=node, fix=fix)
        except KeyError:
            continue  # a catalogue entry whose texts need values a log line cannot give
        result.file, result.line = member, number
        out.append(result)
    if component == "kube-proxy":
        lines = {text_line: number for number, text_line in unclaimed}
        for what, text_line in kube_proxy_matches([t for _, t in unclaimed]):
            number = next((n for t, n in lines.items() if " ".join(t.split())[:400] == text_line), None)
            out.append(located(hns_finding("hns-kube-proxy-sync-error", node_ref, "logs/kube-proxy", node=node,
                                           what=what, line=text_line), member, number))
    return out


def sandbox_image(bundle: Bundle, node: str, folder: str, build: int | None) -> list[Finding]:
    from kubectl_win.builds import build_of, image_build

    if build is None:
        build = _os_build(bundle, folder)
    if build is None:
        return []
    out = []
    for member in bundle.under(f"{folder}/config/containerd"):
        text = bundle.text(member)
        for match in _SANDBOX.finditer(text):
            image = match.group(1)
            built_for = image_build(image)
            if built_for is None or built_for == build:
                continue
            line = text.count("\n", 0, match.start()) + 1
            named, running = build_of(built_for), build_of(build)
            out.append(bundle_finding(
                "bundle-sandbox-image-build", ObjectRef("v1", "Node", None, node), "containerd.sandbox_image",
                member, line, node=node, image=image,
                image_build=f"{named.name} ({built_for})" if named else f"build {built_for}",
                node_build=f"{running.name} ({build})" if running else f"build {build}"))
    return out


def registry_mirrors(bundle: Bundle, node: str, folder: str) -> list[Finding]:
    """Mirrors in the CRI plugin's registry table: deprecated, and fatal next to config_path."""
    import tomllib

    out = []
    for member in bundle.under(f"{folder}/config/containerd"):
        text = bundle.text(member)
        try:
            doc = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            continue
        for registry in _registry_tables(doc):
            mirrors = registry.get("mirrors")
            if not isinstance(mirrors, dict) or not mirrors:
                continue
            listed = ", ".join(f"{name} -> {' '.join(map(str, (m or {}).get('endpoint') or ())) or '?'}"
                               for name, m in sorted(mirrors.items()) if isinstance(m, dict))
            both = bool(registry.get("config_path"))
            conflict = ("; config_path is set too, so the CRI plugin refuses the configuration and containerd runs "
                        "without it" if both else "; they are deprecated in favour of config_path and hosts.toml")
            line = next((n for n, row in enumerate(text.splitlines(), 1) if ".mirrors" in row), None)
            out.append(bundle_finding("bundle-registry-mirrors", ObjectRef("v1", "Node", None, node),
                                      "containerd.registry.mirrors", member, line,
                                      severity="error" if both else None, node=node, mirrors=listed or "?",
                                      conflict=conflict))
    return out


def _registry_tables(doc: Any) -> list[dict[str, Any]]:
    """Every `registry` table under a CRI plugin (io.containerd.grpc.v1.cri, io.containerd.cri.v1.images)."""
    plugins = doc.get("plugins") if isinstance(doc, dict) else None
    if not isinstance(plugins, dict):
        return []
    return [p["registry"] for name, p in plugins.items()
            if "cri" in str(name) and isinstance(p, dict) and isinstance(p.get("registry"), dict)]


def _os_build(bundle: Bundle, folder: str) -> int | None:
    member = f"{folder}/node/os.json"
    try:
        doc = bundle.json(member) if member in bundle.files else None
        return int(doc["CurrentBuild"]) if isinstance(doc, dict) and doc.get("CurrentBuild") else None
    except (InputError, ValueError, TypeError):
        return None


def excluded_ports(bundle: Bundle, node: str, folder: str, state: Any) -> list[Finding]:
    from kubectl_win.hns import catalog

    member = f"{folder}/ports/excludedportrange-tcp.txt"
    if member not in bundle.files or state is None:
        return []
    limits = catalog.limits()
    dynamic = _DYNAMIC.search(bundle.text(f"{folder}/ports/dynamicport-tcp.txt")) \
        if f"{folder}/ports/dynamicport-tcp.txt" in bundle.files else None
    if dynamic:
        start, count = int(dynamic.group(1)), int(dynamic.group(2))
    elif state.dynamic_ports:
        start, count = state.dynamic_ports
    else:
        start, count = int(limits["default_dynamic_ports"]["start"]), int(limits["default_dynamic_ports"]["count"])
    end = start + count - 1
    covered: set[int] = set()
    for low, high in _RANGE_ROW.findall(bundle.text(member)):
        low_port, high_port = max(int(low), start), min(int(high), end)
        if low_port <= high_port:
            covered.update(range(low_port, high_port + 1))
    excluded = len(covered)
    non_dsr = sum(1 for lb in state.load_balancers if not lb.dsr)
    need = non_dsr * int(limits["port_pool"])
    left = count - excluded
    if not excluded or not need:
        return []
    share = need / left if left > 0 else 1.0
    if share < float(limits["port_warning_share"]):
        return []
    severity = "error" if share >= float(limits["port_error_share"]) else None
    return [bundle_finding("bundle-dynamic-ports-excluded", ObjectRef("v1", "Node", None, node), "ports.tcp", member,
                           severity=severity, node=node, excluded=excluded, count=count, range=f"{start}-{end}",
                           left=max(left, 0), non_dsr=non_dsr, need=need)]


def free_disk(bundle: Bundle, node: str, folder: str) -> list[Finding]:
    member = f"{folder}/node/disks.json"
    if member not in bundle.files:
        return []
    try:
        disks = bundle.json(member)
    except InputError:
        return []
    limits = load("bundle_checks")["limits"]
    out = []
    for disk in disks if isinstance(disks, list) else [disks]:
        if not isinstance(disk, dict):
            continue
        try:
            size, free = int(disk.get("Size") or 0), int(disk.get("FreeSpace") or 0)
        except (TypeError, ValueError):
            continue
        if size <= 0:
            continue
        percent = 100.0 * free / size
        if percent >= float(limits["disk_warning_percent"]):
            continue
        error = percent < float(limits["disk_error_percent"])
        detail = ("below the kubelet's hard eviction threshold (nodefs.available<10%): it evicts pods"
                  if error else "image garbage collection runs from 85% use, and new image pulls may fail")
        out.append(bundle_finding("bundle-low-disk", ObjectRef("v1", "Node", None, node), "disks",
                                  member, severity="error" if error else None, node=node,
                                  drive=str(disk.get("DeviceID") or "?"), free=_gib(free), size=_gib(size),
                                  percent=f"{percent:.0f}", detail=detail))
    return out


def _gib(value: int) -> str:
    return f"{value / (1 << 30):.1f} GiB"
