"""A support bundle's patch facts (kubectl win collect): the revision each node runs (node/os.json: CurrentBuild
and UBR, as the registry has them) and the updates installed on it (node/hotfixes.txt: Get-HotFix). doctor
--from-bundle gives the patch-level verdicts from them as from the API: a node whose Node object lacks the
revision takes the bundle's (with_bundle_revisions), and checks/bundle.py reports an update installed but not
yet running."""

from __future__ import annotations

import dataclasses
import re

from kubectl_win import updates
from kubectl_win.doctor.read.bundle import BundleNode
from kubectl_win.doctor.records import NodeRecord, Snapshot
from kubectl_win.errors import InputError

_KB = re.compile(r"\bKB(\d{6,8})\b", re.IGNORECASE)
OS_FILE, HOTFIX_FILE = "node/os.json", "node/hotfixes.txt"


@dataclasses.dataclass(frozen=True, slots=True)
class NodeFacts:
    running: tuple[int, int] | None  # (build, revision) from os.json
    installed: updates.Update | None  # the newest cumulative update of the node's build the hotfix list names


def installed_updates(text: str) -> list[updates.Update]:
    """The updates of the history that a Get-HotFix listing names (KB numbers the history does not know, such
    as servicing stack or .NET updates, are passed over)."""
    found = (updates.by_kb(f"KB{number}") for number in dict.fromkeys(_KB.findall(text)))
    return [u for u in found if u is not None]


def node_facts(node: BundleNode) -> NodeFacts:
    running = None
    if node.has(OS_FILE):
        try:
            data = node.bundle.json(node.path(OS_FILE))
            running = (int(str(data.get("CurrentBuild"))), int(str(data.get("UBR")))) if isinstance(data, dict) \
                else None
        except (InputError, ValueError, TypeError):  # a damaged os.json: the hotfix list still counts
            running = None
    installed = None
    if node.has(HOTFIX_FILE):
        rows = installed_updates(node.text(node.path(HOTFIX_FILE)))
        rows = [u for u in rows if running is None or u.build == running[0]]
        installed = max(rows, key=lambda u: u.revision, default=None)
    return NodeFacts(running, installed)


def with_bundle_revisions(snapshot: Snapshot) -> Snapshot:
    """The snapshot with the bundle's revision on each Windows node whose kernelVersion lacks one (the one
    os.json says it runs, else the newest update its hotfix list names)."""
    if snapshot.bundle is None:
        return snapshot
    facts = {node.name: node_facts(node) for node in snapshot.bundle.nodes if node.collected}
    nodes: list[NodeRecord] = []
    changed = False
    for record in snapshot.nodes:
        fact = facts.get(record.name)
        if fact is not None and record.windows and updates.parse_kernel(record.kernel_version) is None:
            revision = fact.running or ((fact.installed.build, fact.installed.revision) if fact.installed else None)
            if revision is not None:
                record = dataclasses.replace(record, kernel_version=f"10.0.{revision[0]}.{revision[1]}")
                changed = True
        nodes.append(record)
    return dataclasses.replace(snapshot, nodes=tuple(nodes)) if changed else snapshot
