"""What a support bundle shows of its nodes that the API does not: what could not be collected, containerd's
sandbox image against the node's build and its registry mirrors, excluded port ranges against what the node's
load balancers need, and free disk (knowledge/bundle_checks.yaml).

Every finding from a node's files says which file (and line) it came from: in the message as
"(bundle: FILE:LINE)", and in Finding.file/line. Nothing here runs unless the snapshot came from a bundle.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from kubectl_win.catalog import finding
from kubectl_win.doctor.read.bundle import BundleNode
from kubectl_win.doctor.records import Snapshot
from kubectl_win.errors import InputError
from kubectl_win.findings import Finding, ObjectRef
from kubectl_win.knowledge import load

_SANDBOX = re.compile(r'^\s*sandbox_image\s*=\s*"([^"]+)"', re.MULTILINE)
_RANGE_ROW = re.compile(r"^\s*(\d{1,5})\s+(\d{1,5})\b", re.MULTILINE)
_DYNAMIC = re.compile(r"Start Port\s*:\s*(\d+)\s+Number of Ports\s*:\s*(\d+)", re.IGNORECASE)


def collected_nodes(snapshot: Snapshot) -> Iterator[BundleNode]:
    """The bundle's nodes that have files (none unless the snapshot came from a bundle)."""
    return (node for node in snapshot.bundle.nodes if node.collected) if snapshot.bundle else iter(())


def node_ref(node: str) -> ObjectRef:
    return ObjectRef("v1", "Node", None, node)


def bundle_finding(check_id: str, node: BundleNode, path: str, member: str, line: int | None = None, /,
                   severity: str | None = None, **values: Any) -> Finding:
    """A bundle check's finding on the node, read from `member` (at `line`); `{node}` is the node's name."""
    return finding(check_id, node_ref(node.name), path, severity=severity, at=(member, line), node=node.name,
                   where=f"bundle: {member}:{line}" if line else f"bundle: {member}", **values)


def located(found: Finding, member: str, line: int | None = None) -> Finding:
    """A finding of another family (a symptom, an hns check), marked with where in the bundle it came from."""
    return replace(found, file=member, line=line,
                   message=f"{found.message} (bundle: {member}{f':{line}' if line else ''})")


def run(snapshot: Snapshot) -> list[Finding]:
    if snapshot.bundle is None:
        return []
    out = []
    for node in snapshot.bundle.nodes:
        if not node.collected:
            out.append(bundle_finding("bundle-node-not-collected", node, "bundle.json", "bundle.json",
                                      error=node.errors[0] if node.errors else "no files"))
            continue
        if node.errors:
            errors = node.errors
            listed = "; ".join(errors[:3]) + (f"; and {len(errors) - 3} more" if len(errors) > 3 else "")
            out.append(bundle_finding("bundle-items-failed", node, "bundle.json", node.path("manifest.json"),
                                      count=len(errors), items=listed))
        record = snapshot.node(node.name)
        build = record.build_number if record is not None and record.windows else None
        out += sandbox_image(node, build)
        out += registry_mirrors(node)
        out += excluded_ports(node)
        out += free_disk(node)
        out += update_not_running(node, record)
    return out


def update_not_running(node: BundleNode, record: Any) -> list[Finding]:
    """An update the hotfix list shows installed that the node does not run yet (a restart pending)."""
    from kubectl_win import updates
    from kubectl_win.doctor.read.hotfixes import HOTFIX_FILE, node_facts

    facts = node_facts(node)
    running = facts.running or (updates.parse_kernel(record.kernel_version) if record is not None else None)
    installed = facts.installed
    if installed is None or running is None or installed.build != running[0] or installed.revision <= running[1]:
        return []
    return [bundle_finding("bundle-update-installed-not-running", node, "status.nodeInfo.kernelVersion",
                           node.path(HOTFIX_FILE), kb=installed.kb, version=installed.version,
                           month=installed.month, running=f"10.0.{running[0]}.{running[1]}")]


def sandbox_image(node: BundleNode, build: int | None) -> list[Finding]:
    from kubectl_win.builds import build_of, image_build

    if build is None:
        build = _os_build(node)
    if build is None:
        return []
    out = []
    for member in node.under("config/containerd"):
        text = node.text(member)
        for match in _SANDBOX.finditer(text):
            image = match.group(1)
            built_for = image_build(image)
            if built_for is None or built_for == build:
                continue
            line = text.count("\n", 0, match.start()) + 1
            named, running = build_of(built_for), build_of(build)
            out.append(bundle_finding(
                "bundle-sandbox-image-build", node, "containerd.sandbox_image", member, line,
                image=image, image_build=f"{named.name} ({built_for})" if named else f"build {built_for}",
                node_build=f"{running.name} ({build})" if running else f"build {build}"))
    return out


def registry_mirrors(node: BundleNode) -> list[Finding]:
    """Mirrors in the CRI plugin's registry table: deprecated, and fatal next to config_path."""
    import tomllib

    out = []
    for member in node.under("config/containerd"):
        text = node.text(member)
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
            out.append(bundle_finding("bundle-registry-mirrors", node, "containerd.registry.mirrors", member,
                                      line, severity="error" if both else None,
                                      mirrors=listed or "?", conflict=conflict))
    return out


def _registry_tables(doc: Any) -> list[dict[str, Any]]:
    """Every `registry` table under a CRI plugin (io.containerd.grpc.v1.cri, io.containerd.cri.v1.images)."""
    plugins = doc.get("plugins") if isinstance(doc, dict) else None
    if not isinstance(plugins, dict):
        return []
    return [p["registry"] for name, p in plugins.items()
            if "cri" in str(name) and isinstance(p, dict) and isinstance(p.get("registry"), dict)]


def _os_build(node: BundleNode) -> int | None:
    try:
        doc = node.bundle.json(node.path("node/os.json")) if node.has("node/os.json") else None
        return int(doc["CurrentBuild"]) if isinstance(doc, dict) and doc.get("CurrentBuild") else None
    except (InputError, ValueError, TypeError):
        return None


def excluded_ports(node: BundleNode) -> list[Finding]:
    from kubectl_win.hns import knowledge

    state = node.hns
    if not node.has("ports/excludedportrange-tcp.txt") or state is None:
        return []
    limits = knowledge.limits()
    dynamic = _DYNAMIC.search(node.text(node.path("ports/dynamicport-tcp.txt"))) \
        if node.has("ports/dynamicport-tcp.txt") else None
    if dynamic:
        start, count = int(dynamic.group(1)), int(dynamic.group(2))
    elif state.dynamic_ports:
        start, count = state.dynamic_ports
    else:
        start, count = int(limits["default_dynamic_ports"]["start"]), int(limits["default_dynamic_ports"]["count"])
    end = start + count - 1
    covered: set[int] = set()
    member = node.path("ports/excludedportrange-tcp.txt")
    for low, high in _RANGE_ROW.findall(node.text(member)):
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
    return [bundle_finding("bundle-dynamic-ports-excluded", node, "ports.tcp", member, severity=severity,
                           excluded=excluded, count=count, range=f"{start}-{end}",
                           left=max(left, 0), non_dsr=non_dsr, need=need)]


def free_disk(node: BundleNode) -> list[Finding]:
    member = node.path("node/disks.json")
    if not node.has("node/disks.json"):
        return []
    try:
        disks = node.bundle.json(member)
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
        out.append(bundle_finding("bundle-low-disk", node, "disks", member,
                                  severity="error" if error else None,
                                  drive=str(disk.get("DeviceID") or "?"), free=_gib(free), size=_gib(size),
                                  percent=f"{percent:.0f}", detail=detail))
    return out


def _gib(value: int) -> str:
    return f"{value / (1 << 30):.1f} GiB"
