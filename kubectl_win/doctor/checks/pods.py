"""explain's Windows field rules on the live pods that run on or target Windows (once per pod template)."""

from __future__ import annotations

from kubectl_win.doctor.catalog import catalog
from kubectl_win.doctor.snapshot import Snapshot
from kubectl_win.explain import lint_object
from kubectl_win.findings import Finding
from kubectl_win.record import replace
from kubectl_win.versions import NEWEST_KNOWN, OLDEST_KNOWN, Version, parse_version


def cluster_version(snapshot: Snapshot) -> Version:
    return version_of(snapshot.server_version)


def version_of(server_version: str | None) -> Version:
    try:
        version = parse_version(server_version or "")
    except ValueError:
        return NEWEST_KNOWN
    return min(max(version, OLDEST_KNOWN), NEWEST_KNOWN)


def lint_group(pod: dict, on_windows: bool, version: Version) -> list[Finding]:
    """explain's findings for one pod template (the snapshot builder runs this as each new template
    arrives, while the next page is fetched)."""
    return lint_object(pod, k8s_version=version, assume_windows=on_windows)


def run(snapshot: Snapshot) -> list[Finding]:
    version = cluster_version(snapshot)
    out: list[Finding] = []
    own = set(catalog())
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
