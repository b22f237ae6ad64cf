"""The explicit list of doctor's checks, in report order. Adding a check means adding a line here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kubectl_win.doctor.checks import (
    bundle,
    bundle_hns,
    bundle_logs,
    events,
    gmsa,
    images,
    memory,
    network,
    nodes,
    patches,
    placement,
    pods,
    runtime,
    skew,
    storage,
)
from kubectl_win.doctor.records import Snapshot
from kubectl_win.findings import Finding

NODE_KINDS = frozenset({"Node", "Cluster"})


@dataclass(frozen=True)
class Check:
    area: str
    run: Callable[[Snapshot], list[Finding]]


CHECKS: tuple[Check, ...] = (
    Check("nodes", nodes.run),
    Check("patches", patches.run),
    Check("runtime", runtime.run),
    Check("skew", skew.run),
    Check("placement", placement.run),
    Check("images", images.run),
    Check("pods", pods.run),
    Check("memory", memory.run),
    Check("network", network.run),
    Check("storage", storage.run),
    Check("gmsa", gmsa.run),
    Check("events", events.run),
    # What a support bundle holds of its nodes (doctor --from-bundle; nothing for other sources).
    Check("bundle", bundle.run),
    Check("bundle-hns", bundle_hns.run),
    Check("bundle-logs", bundle_logs.run),
)


def run_checks(snapshot: Snapshot, scope: str = "cluster") -> list[Finding]:
    """Every check over the snapshot; `doctor nodes` keeps node findings, `doctor workloads` the rest."""
    findings: list[Finding] = []
    for check in CHECKS:
        findings.extend(check.run(snapshot))
    if scope == "nodes":
        findings = [f for f in findings if f.object.kind in NODE_KINDS]
    elif scope == "workloads":
        findings = [f for f in findings if f.object.kind not in NODE_KINDS]
    return findings
