"""A support bundle's patch facts (kubectl win collect): the revision each node runs (node/os.json: CurrentBuild
and UBR, as the registry has them) and the updates installed on it (node/hotfixes.txt: Get-HotFix). doctor
--from-bundle gives the patch-level verdicts from them as from the API: a node whose Node object lacks the
revision takes the bundle's, and an update installed but not yet running is reported."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from kubectl_win import updates
from kubectl_win.doctor.records import NodeRecord, Snapshot
from kubectl_win.findings import Finding

_KB = re.compile(r"\bKB(\d{6,8})\b", re.IGNORECASE)
OS_FILE, HOTFIX_FILE = "node/os.json", "node/hotfixes.txt"


@dataclasses.dataclass(frozen=True, slots=True)
class NodeFacts:
    running: tuple[int, int] | None  # (build, revision) from os.json
    installed: updates.Update | None  # the newest cumulative update of the node's build the hotfix list names
    folder: str


def installed_updates(text: str) -> list[updates.Update]:
    """The updates of the history that a Get-HotFix listing names (KB numbers the history does not know, such
    as servicing stack or .NET updates, are passed over)."""
    found = (updates.by_kb(f"KB{number}") for number in dict.fromkeys(_KB.findall(text)))
    return [u for u in found if u is not None]


def node_facts(bundle: Any, folder: str) -> NodeFacts:
    running = None
    if f"{folder}/{OS_FILE}" in bundle.files:
        try:
            data = bundle.json(f"{folder}/{OS_FILE}")
        except Exception:  # a damaged file: the other facts still count  # noqa: BLE001
            data = None
        if isinstance(data, dict):
            try:
                running = (int(str(data.get("CurrentBuild"))), int(str(data.get("UBR"))))
            except ValueError:
                running = None
    installed = None
    if f"{folder}/{HOTFIX_FILE}" in bundle.files:
        rows = installed_updates(bundle.text(f"{folder}/{HOTFIX_FILE}"))
        build = running[0] if running else None
        rows = [u for u in rows if build is None or u.build == build]
        installed = max(rows, key=lambda u: u.revision, default=None)
    return NodeFacts(running, installed, folder)


def with_bundle_revisions(bundle: Any, snapshot: Snapshot,
                          bundle_finding: Callable[..., Finding]) -> tuple[Snapshot, list[Finding]]:
    """The snapshot with the bundle's revision on each Windows node whose kernelVersion lacks one, and the
    bundle-update-installed-not-running findings (made by `bundle_finding`, the bundle checks' factory)."""
    from kubectl_win.collect.bundle import node_entries

    facts = {node: node_facts(bundle, str(entry.get("dir") or "")) for node, entry in node_entries(bundle)}
    nodes: list[NodeRecord] = []
    findings: list[Finding] = []
    changed = False
    for node in snapshot.nodes:
        fact = facts.get(node.name)
        if fact is None or not node.windows:
            nodes.append(node)
            continue
        current = updates.parse_kernel(node.kernel_version)
        revision = fact.running or ((fact.installed.build, fact.installed.revision) if fact.installed else None)
        if current is None and revision is not None:
            node = dataclasses.replace(node, kernel_version=f"10.0.{revision[0]}.{revision[1]}")
            current, changed = revision, True
        nodes.append(node)
        running = fact.running or current
        installed = fact.installed
        if installed is not None and running is not None and installed.build == running[0] \
                and installed.revision > running[1]:
            findings.append(bundle_finding(
                "bundle-update-installed-not-running", node.ref, "status.nodeInfo.kernelVersion",
                f"{fact.folder}/{HOTFIX_FILE}", node=node.name, kb=installed.kb, version=installed.version,
                month=installed.month, running=f"10.0.{running[0]}.{running[1]}"))
    if changed:
        snapshot = dataclasses.replace(snapshot, nodes=tuple(nodes))
    return snapshot, findings
