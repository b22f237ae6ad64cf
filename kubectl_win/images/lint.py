"""`explain -f --check-images`: findings (with file and line, for SARIF) for the images of Windows workloads in
manifest files, read from their registries and judged against Windows builds.

Which builds: the `--build` values when given, else the build a workload pins with a
node.kubernetes.io/windows-build selector; a workload that pins none and no --build given is not judged
(it may land on any Windows build the cluster has, which a file does not say).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from kubectl_win.findings import Finding, Fix, ObjectRef
from kubectl_win.images.compat import HYPERV_ONLY, NO_VARIANT, UNKNOWN, HostBuild, parse_host_version
from kubectl_win.wellknown import BUILD_LABEL

SOURCE = "knowledge/image_compat.yaml (containerd/platforms checkWindowsHostAndContainerCompat)"
RULES = {
    "image-no-variant-for-build": {
        "description": "The image's registry lists no variant a node of this Windows build can run",
        "help": "Build and push the image for the build, or pin the workload to a build the image has.",
        "source": SOURCE},
    "image-hyperv-only-for-build": {
        "description": "The image has only older Windows builds: it runs there only with Hyper-V isolation",
        "help": "Build the image for the node's build (Hyper-V isolation is rarely offered).",
        "source": SOURCE},
    "image-not-checked": {
        "description": "The image's registry could not be read",
        "help": "Check the reference, the registry's reachability and the credentials in DOCKER_CONFIG.",
        "source": SOURCE},
}


def _path_steps(path: str) -> tuple[str | int, ...]:
    steps: list[str | int] = []
    for part in path.split("."):
        name, *indexes = re.split(r"\[(\d+)\]", part)
        if name:
            steps.append(name)
        steps.extend(int(i) for i in indexes if i != "")
    return tuple(steps)


def image_findings(items: Sequence[Any], builds: Sequence[HostBuild], resolve: Any) -> list[Finding]:
    """items: ManifestObjects; resolve: an images.run Resolver."""
    from kubectl_win.doctor.build import SnapshotBuilder
    from kubectl_win.images.service import windows_workloads

    by_ref: dict[tuple[str, str, str], Any] = {}
    builder = SnapshotBuilder()
    for item in items:
        ref = ObjectRef.of(item.obj)
        by_ref[(ref.namespace or "", ref.kind, ref.name)] = item
        builder.add(item.obj)
    snapshot = builder.build()
    pinned = {w.ref: w.placement.node_selector.get(BUILD_LABEL) for w in snapshot.workloads}
    checks = []
    for workload in windows_workloads(snapshot, builds or (parse_host_version("10.0.0"),)):
        hosts = list(builds)
        if not hosts:
            build = pinned.get(workload.ref)
            try:
                hosts = [parse_host_version(build)] if build else []
            except ValueError:
                hosts = []
        if hosts and not workload.host_process:
            checks.append((workload, hosts))
    resolved = resolve([use.image for w, _ in checks for use in w.images]) if checks else {}
    out = []
    for workload, hosts in checks:
        item = by_ref.get((workload.namespace, workload.kind, workload.name))
        for use in workload.images:
            result = resolved[use.image]
            for host in hosts:
                verdict = result.verdict(host, workload.architecture)
                if verdict.verdict not in (NO_VARIANT, HYPERV_ONLY, UNKNOWN):
                    continue
                line = item.line(_path_steps(use.path) + ("image",)) if item is not None else None
                out.append(_finding(workload.ref, use, host, verdict, item.source if item else None, line))
                if verdict.verdict == UNKNOWN:
                    break  # one unreadable-image finding per container, not one per build
    return out


def _finding(ref: ObjectRef, use: Any, host: HostBuild, verdict: Any, file: str | None,
             line: int | None) -> Finding:
    if verdict.verdict == NO_VARIANT:
        check, severity = "image-no-variant-for-build", "error"
        message = (f"{use.image} in container {use.container} has no variant a Windows {host.given} node can "
                   f"run: {verdict.reason}")
        hint = f"Build and push {use.image} for {host.version}, or pin the workload to a build the image has."
    elif verdict.verdict == HYPERV_ONLY:
        check, severity = "image-hyperv-only-for-build", "warning"
        message = f"{use.image} in container {use.container} on Windows {host.given}: {verdict.reason}"
        hint = f"Build and push {use.image} for {host.version}."
    else:
        check, severity = "image-not-checked", "warning"
        message = f"{use.image} in container {use.container} could not be checked: {verdict.reason}"
        hint = "Check the reference, the registry's reachability and the credentials in DOCKER_CONFIG."
    return Finding(check, severity, ref, use.path + ".image", message, Fix(note=hint), file=file, line=line,
                   source=SOURCE, enforced_by="runtime")
