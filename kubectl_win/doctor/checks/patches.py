"""Windows patch level (knowledge/windows_updates.yaml): nodes on an update known to break containers, nodes
many monthly updates behind, pools whose nodes run different revisions, and images built on a newer revision
than the node they run on."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from kubectl_win import builds, updates
from kubectl_win.catalog import finding
from kubectl_win.doctor import patchlevel
from kubectl_win.doctor.checks import name_list
from kubectl_win.doctor.records import NodeRecord, PodRecord, Snapshot
from kubectl_win.findings import Finding, Fix

KERNEL_PATH = "status.nodeInfo.kernelVersion"


def run(snapshot: Snapshot) -> list[Finding]:
    if "nodes" not in snapshot.read or not snapshot.windows_nodes:
        return []
    levels = patchlevel.of(snapshot)
    return (_known_problems(snapshot, levels) + _behind(snapshot, levels) + _spread(snapshot, levels)
            + _images_newer(snapshot, levels))


def platform_fix(snapshot: Snapshot, node: NodeRecord, kb: str, note: str = "") -> Fix:
    """How the node's platform brings it to `kb` or newer (AKS node image, EKS AMI, OpenShift, Windows Update)."""
    where = snapshot.platform_of(node)
    entry = updates.patching_for(where.name)
    pool = where.pool_of(node.labels)
    values = {"node": node.name, "pool": pool or "<pool>", "kb": kb}
    commands = tuple(tuple(str(arg).format_map(values) for arg in argv) for argv in entry["commands"])
    text = str(entry["note"]).format_map(values)
    return Fix(commands=commands, note=f"{text} {note}".strip())


def _describe(patch: patchlevel.NodePatch) -> str:
    """'10.0.20348.2582 (KB5040437, 2024-07)' (or 'after KB...' for an unlisted revision)."""
    kb, month = patch.kb_text(), patch.month()
    if kb and month:
        return f"{patch.version} ({kb}, {month})"
    if month:
        return f"{patch.version} ({month})"
    return patch.version


def _inline(patch: patchlevel.NodePatch) -> str:
    """'10.0.20348.2700, KB5042881 of 2024-09', for use inside parentheses."""
    kb, month = patch.kb_text(), patch.month()
    if kb and month and patch.update is not None and not patch.update.kb:
        return f"{patch.version}, the update of {month}, {kb}"
    return f"{patch.version}, {kb} of {month}" if kb and month else patch.version


def _os_name(build: int) -> str:
    known = builds.build_of(build)
    return known.name if known else f"Windows build {build}"


def _fixing(problem: updates.Problem) -> str:
    row = updates.by_kb(problem.fixed_by)
    return f"{problem.fixed_by} (10.0.{problem.build}.{row.revision}, {row.month})" if row else problem.fixed_by


def _known_problems(snapshot: Snapshot, levels: dict[str, patchlevel.NodePatch]) -> list[Finding]:
    out = []
    for node in snapshot.windows_nodes:
        patch = levels.get(node.name)
        if patch is None:
            continue
        for problem in updates.problems_of(patch.build, patch.revision, "host"):
            out.append(finding(
                "windows-update-known-problem", node.ref, KERNEL_PATH, ignores=node.ignores,
                severity="error" if problem.acknowledged else "warning",
                fix=platform_fix(snapshot, node, problem.fixed_by),
                node=node.name, running=_describe(patch), introduced=problem.introduced_by, problem=problem.problem,
                fixed=_fixing(problem),
                how="Microsoft acknowledged it" if problem.acknowledged else "users report it",
                sources=", ".join(problem.sources[:2])))
    return out


def _behind(snapshot: Snapshot, levels: dict[str, patchlevel.NodePatch]) -> list[Finding]:
    limit = snapshot.max_updates_behind
    out = []
    for node in snapshot.windows_nodes:
        patch = levels.get(node.name)
        if patch is None or patch.behind is None or patch.behind <= limit or patch.newest is None:
            continue
        newest = patch.newest
        if newest.update is not None:
            target = f"10.0.{patch.build}.{newest.revision} ({newest.update.kb_name()}, {newest.update.month})"
        else:
            target = f"10.0.{patch.build}.{newest.revision}"
        seen = {patchlevel.CLUSTER: f", seen on node {newest.where}",
                patchlevel.REGISTRY: f", the os.version of {newest.where}",
                patchlevel.TAGS: f", a tag of {newest.where}"}.get(newest.source, "")
        estimate = (f"; {patch.estimated} of them estimated from Microsoft's monthly release cadence (the update "
                    f"data ends on {updates.updates_to().isoformat()})" if patch.estimated else "")
        kb = newest.update.kb if newest.update is not None and newest.update.kb else "the newest update"
        out.append(finding(
            "windows-updates-behind", node.ref, KERNEL_PATH, ignores=node.ignores, fix=platform_fix(snapshot, node, kb),
            node=node.name, running=_describe(patch), behind=f"{'at least ' if patch.at_least else ''}{patch.behind}",
            s="" if patch.behind == 1 else "s", estimate=estimate,
            limit=limit, os=_os_name(patch.build), newest=target + seen))
    return out


def pool_of(node: NodeRecord, snapshot: Snapshot) -> str:
    """The node's pool as its platform names it ('' when no platform label says)."""
    return snapshot.platform_of(node).pool_of(node.labels)


def _spread(snapshot: Snapshot, levels: dict[str, patchlevel.NodePatch]) -> list[Finding]:
    """Nodes of one pool (or, without pool labels, of one build) on different revisions."""
    groups: dict[tuple[int, str], list[patchlevel.NodePatch]] = defaultdict(list)
    nodes = {n.name: n for n in snapshot.windows_nodes}
    for name, patch in sorted(levels.items()):
        groups[(patch.build, pool_of(nodes[name], snapshot))].append(patch)
    out = []
    for (build, pool), members in sorted(groups.items()):
        by_revision: dict[int, list[str]] = defaultdict(list)
        for patch in members:
            by_revision[patch.revision].append(patch.node)
        if len(by_revision) < 2:
            continue
        spread = "; ".join(f"{_describe(next(p for p in members if p.revision == revision))}: "
                           f"{name_list(names)}" for revision, names in sorted(by_revision.items(), reverse=True))
        oldest = min(by_revision)
        first = nodes[sorted(by_revision[oldest])[0]]
        newest = max(by_revision)
        row = updates.running(build, newest)
        kb = row.kb if row is not None and row.revision == newest and row.kb else f"10.0.{build}.{newest}"
        out.append(finding(
            "windows-revision-spread", first.ref, KERNEL_PATH, ignores=first.ignores,
            fix=platform_fix(snapshot, first, kb, "Bring the older nodes to the newest revision so that every node "
                                                  "runs the images built for it."),
            group=f"pool {pool}" if pool else _os_name(build), count=len(by_revision), spread=spread))
    return out


_SYMPTOM = re.compile(str(updates.image_rule()["symptom"]), re.IGNORECASE)


def shows_image_newer_symptom(message: str) -> bool:
    """The message is the failure of an image newer than its host (0xc0370106 or its text)."""
    return bool(_SYMPTOM.search(message))


def image_newer_pods(snapshot: Snapshot) -> frozenset[tuple[str, str]]:
    """(namespace, pod) of the Windows pods whose image was built on a newer revision of their node's build than
    the node runs (the registry's os.version, else the image tag's revision): their 0xc0370106 failures are
    windows-image-newer-than-node's, the cause the revisions show."""
    cases, _, _ = _image_cases(snapshot, patchlevel.of(snapshot))
    return frozenset((case["pod"].namespace, name) for case in cases.values() for name in case["pods"])


def _image_revision(image: str, record: Any, patch: patchlevel.NodePatch) -> tuple[tuple[int, int] | None, bool]:
    """(build, revision) of the variant the runtime picks for the node: the registry's record, else the tag's
    revision (offline); and whether it came from the tag."""
    if isinstance(record, dict) and not record.get("error"):
        from kubectl_win.images.compat import parse_host_version
        from kubectl_win.images.service import Resolved

        verdict = Resolved.from_record(image, record).verdict(parse_host_version(patch.version))
        parsed = updates.parse_kernel(verdict.variant or "")
        if parsed is not None:
            return parsed, False
    parsed = updates.tag_revision(image)
    return parsed, parsed is not None


def _image_cases(snapshot: Snapshot, levels: dict[str, patchlevel.NodePatch]) -> tuple[Any, Any, Any]:
    """Per (owner, image, path): images newer than their nodes, images on a known-bad update, images across a
    revision barrier from their nodes (worked out once per snapshot)."""
    cached = snapshot.__dict__.get("_image_cases")
    if cached is not None:
        return cached
    cases: dict[tuple[Any, str, str], dict[str, Any]] = {}
    image_problems: dict[tuple[Any, str, str], tuple[PodRecord, Any, int, updates.Problem]] = {}
    older_images: dict[tuple[Any, str, str], tuple[PodRecord, Any, int, dict[str, Any], dict[str, Any]]] = {}
    for pod in snapshot.pods:
        node = snapshot.node(pod.node)
        if node is None or not node.windows or pod.host_process or _hyperv(pod, snapshot):
            continue
        patch = levels.get(node.name)
        if patch is None:
            continue
        for container in pod.containers:
            parsed, from_tag = _image_revision(container.image, snapshot.images.get(container.image), patch)
            if parsed is None or parsed[0] != patch.build:
                continue
            for problem in updates.problems_of(parsed[0], parsed[1], "image"):
                image_problems.setdefault((pod.owner_ref, container.image, problem.id),
                                          (pod, container, parsed[1], problem))
            if parsed[1] < patch.revision and (barrier := updates.barrier_between(patch.build, patch.revision,
                                                                                  parsed[1])):
                older_images.setdefault((pod.owner_ref, container.image, container.path),
                                        (pod, container, parsed[1], barrier, {}))[4][node.name] = patch
            if parsed[1] <= patch.revision:
                continue
            case = cases.setdefault((pod.owner_ref, container.image, container.path), {
                "pod": pod, "container": container, "image_revision": parsed[1], "nodes": {}, "pods": set(),
                "from_tag": from_tag})
            case["nodes"][node.name] = patch
            case["pods"].add(pod.name)
    found = (cases, image_problems, older_images)
    object.__setattr__(snapshot, "_image_cases", found)
    return found


def _images_newer(snapshot: Snapshot, levels: dict[str, patchlevel.NodePatch]) -> list[Finding]:
    """A Windows pod whose image (the variant the runtime picks for its node) was built on a newer revision of
    the node's build than the node runs: the registry says what the image holds or, offline, its tag names the
    revision."""
    cases, image_problems, older_images = _image_cases(snapshot, levels)
    out = []
    for (owner, image, path), case in cases.items():
        pod: PodRecord = case["pod"]
        revision = case["image_revision"]
        older = case["nodes"]
        build = next(iter(older.values())).build
        seen = [e for e in snapshot.events if shows_image_newer_symptom(e.message)
                and (e.pod in case["pods"] or e.ref == owner
                     or (e.ref.kind == "Pod" and e.ref.namespace == pod.namespace and e.ref.name in case["pods"]))]
        barrier = next((b for p in older.values() if (b := updates.barrier_between(build, p.revision, revision))),
                       None)
        row = updates.running(build, revision)
        image_update = (f"{row.kb} of {row.month}" if row is not None and row.revision == revision and row.kb
                        else (f"after {row.kb}" if row is not None and row.kb else "an update newer than known"))
        if case["from_tag"]:
            image_update += ", as its tag says"
        oldest = min(older.values(), key=lambda p: p.revision)
        if barrier is not None:
            severity, why = "error", (f"host and image lie on opposite sides of {barrier['kb']} "
                                      f"(10.0.{build}.{barrier['revision']}), which Microsoft documents as not "
                                      "working together")
        elif seen:
            severity, why = "error", (f"its containers fail to start with {updates.image_rule()['symptom_code']} "
                                      f"({_excerpt(seen[0].message)}), the failure of an image newer than its host")
        else:
            severity, why = "warning", ("process isolation needs the host on the image's revision or newer; such "
                                        f"images fail to start with {updates.image_rule()['symptom_code']}")
        node = snapshot.node(oldest.node)
        kb = row.kb if row is not None and row.revision == revision and row.kb else "the image's update"
        fix = platform_fix(snapshot, node, kb, f"Or pin {image} to a tag built on 10.0.{build}.{oldest.revision} "
                                               "or older until the nodes are patched.") if node else Fix()
        out.append(finding(
            "windows-image-newer-than-node", owner, _owner_path(owner, path) + ".image", ignores=pod.ignores,
            severity=severity,
            fix=fix, object=owner.display(), image=image, container=case["container"].name,
            image_version=f"10.0.{build}.{revision}", image_update=image_update, s="s" if len(older) > 1 else "",
            nodes=name_list(older), node_versions="; ".join(sorted({_inline(p) for p in older.values()})),
            why=why))
    for (owner, image, path), (pod, container, revision, barrier, hosts) in older_images.items():
        build = next(iter(hosts.values())).build
        out.append(finding(
            "windows-image-revision-incompatible", owner, _owner_path(owner, path) + ".image", ignores=pod.ignores,
            fix=Fix(note=f"Rebuild {image} on a base image of {barrier['kb']} or newer (10.0.{build}."
                         f"{barrier['revision']} or later) and roll the workload out."),
            object=owner.display(), image=image, container=container.name, image_version=f"10.0.{build}.{revision}",
            s="s" if len(hosts) > 1 else "", nodes=name_list(hosts),
            node_versions="; ".join(sorted({_inline(p) for p in hosts.values()})), kb=barrier["kb"],
            barrier=f"10.0.{build}.{barrier['revision']}"))
    for (owner, image, _), (pod, container, revision, problem) in image_problems.items():
        fixed = updates.by_kb(problem.fixed_by)
        out.append(finding(
            "windows-image-known-problem", owner, _owner_path(owner, container.path) + ".image",
            ignores=pod.ignores, severity="error" if problem.acknowledged else "warning",
            fix=Fix(note=f"Rebuild {image} on a base image of {problem.fixed_by} or newer "
                         f"(10.0.{problem.build}.{fixed.revision if fixed else problem.before} or later) and "
                         "roll the workload out."),
            object=owner.display(), image=image, container=container.name,
            image_version=f"10.0.{problem.build}.{revision}", introduced=problem.introduced_by,
            problem=problem.problem, how="Microsoft acknowledged it" if problem.acknowledged else "users report it",
            sources=", ".join(problem.sources[:2]), fixed=_fixing(problem)))
    return out


def _owner_path(owner: Any, pod_path: str) -> str:
    """The container's path in its owner (spec.containers[0] of a Deployment's pod: spec.template.spec...)."""
    from kubectl_win.manifests.objects import spec_path_of

    return spec_path_of(owner.kind) + pod_path[len("spec"):] if pod_path.startswith("spec") else pod_path


def _excerpt(message: str, limit: int = 120) -> str:
    text = " ".join(message.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _hyperv(pod: PodRecord, snapshot: Snapshot) -> bool:
    rc = snapshot.runtime_classes.get(pod.runtime_class or "")
    text = f"{pod.runtime_class or ''} {rc.handler if rc else ''}".lower()
    return "hyperv" in text or "hypervisor" in text
