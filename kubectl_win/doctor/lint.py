"""explain's Windows field rules on one pod template, at the cluster's Kubernetes version: the builder lints each
new template as it arrives (while the next page is fetched), and the pods check reports the result."""

from __future__ import annotations

from kubectl_win.explain import lint_object
from kubectl_win.findings import Finding
from kubectl_win.versions import NEWEST_KNOWN, OLDEST_KNOWN, Version, parse_version


def version_of(server_version: str | None) -> Version:
    try:
        version = parse_version(server_version or "")
    except ValueError:
        return NEWEST_KNOWN
    return min(max(version, OLDEST_KNOWN), NEWEST_KNOWN)


def lint_group(pod: dict, on_windows: bool, version: Version) -> list[Finding]:
    """explain's findings for one pod template."""
    return lint_object(pod, k8s_version=version, assume_windows=on_windows)
