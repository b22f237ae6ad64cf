"""explain's Windows field rules on the live pods that run on or target Windows (once per pod template)."""

from __future__ import annotations

from dataclasses import replace

from kubectl_win.catalog import doctor_checks
from kubectl_win.doctor.lint import lint_group, version_of
from kubectl_win.doctor.records import Snapshot
from kubectl_win.findings import Finding
from kubectl_win.versions import Version


def cluster_version(snapshot: Snapshot) -> Version:
    return version_of(snapshot.server_version)


def run(snapshot: Snapshot) -> list[Finding]:
    version = cluster_version(snapshot)
    out: list[Finding] = []
    own = set(doctor_checks())
    for group in snapshot.pod_groups:
        early = group.lint
        findings = list(early[1]) if early is not None and early[0] == version else \
            lint_group(group.pod, group.on_windows, version)
        # Ids doctor checks itself (memory limits) are reported once on the workload, with its exact fix.
        findings = [f for f in findings if f.id not in own]
        if group.count > 1 and findings:
            owner = _owner(group.pod)
            suffix = f" (the same in {group.count - 1} more pods of {owner})"
            findings = [replace(f, message=f.message + suffix) for f in findings]
        out.extend(findings)
    return out


def _owner(pod: dict) -> str:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            return f"{ref.get('kind')}/{ref.get('name')}"
    return "the same owner"
