"""hns's checks on each node's HNS state in a support bundle (hns.json), against the bundle's cluster part."""

from __future__ import annotations

from kubectl_win.doctor.checks.bundle import collected_nodes, located
from kubectl_win.doctor.records import Snapshot
from kubectl_win.findings import Finding


def run(snapshot: Snapshot) -> list[Finding]:
    from kubectl_win.hns.analyze import analyze

    out = []
    for node in collected_nodes(snapshot):
        if node.hns is not None:
            member = node.path("hns.json")
            out += [located(found, member) for found in analyze(node.hns, snapshot.bundle.view, node.name)]
    return out
