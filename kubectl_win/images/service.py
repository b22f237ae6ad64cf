"""`kubectl win images`: verdicts for images × Windows builds, and for the Windows workloads of a cluster (live,
a dump, or manifest files) against the builds of the nodes each can land on. No printing here.

The registry is read once per run through kubectl_win.registry (each distinct reference once, concurrently);
everything after that is a pure function of the resolutions and the snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubectl_win.images.compat import NO_VARIANT, UNKNOWN, VERDICTS, HostBuild, Platform, Verdict, decide, unknown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kubectl_win.doctor.records import NodeRecord, Snapshot, WorkloadRecord
    from kubectl_win.findings import ObjectRef
    from kubectl_win.registry.client import RegistryClient, Resolution


@dataclass(frozen=True, slots=True)
class Resolved:
    """What the registry said about one reference as given: platforms, or why it could not say."""

    image: str
    digest: str | None = None
    platforms: tuple[Platform, ...] = ()
    error: str | None = None

    def verdict(self, host: HostBuild, architecture: str = "amd64", host_process: bool = False) -> Verdict:
        if self.error is not None:
            return from_tag(self.image, host, self.error, architecture, host_process)
        return decide(self.platforms, host, architecture, host_process)

    def to_dict(self) -> dict[str, Any]:
        return {"image": self.image, "digest": self.digest, "platforms": [p.to_dict() for p in self.platforms]}

    def to_record(self) -> dict[str, Any]:
        """What a dump keeps (no credentials: references, digests and platforms only)."""
        if self.error is not None:
            return {"error": self.error}
        return {"digest": self.digest, "platforms": [
            {"os": p.os, "architecture": p.architecture, "osVersion": p.os_version, "variant": p.variant,
             "digest": p.digest} for p in self.platforms]}

    @classmethod
    def from_record(cls, image: str, record: dict[str, Any]) -> Resolved:
        if record.get("error"):
            return cls(image, error=str(record["error"]))
        platforms = tuple(Platform(str(p.get("os") or ""), str(p.get("architecture") or ""),
                                   str(p.get("osVersion") or ""), str(p.get("variant") or ""),
                                   str(p.get("digest") or ""))
                          for p in record.get("platforms") or [] if isinstance(p, dict))
        return cls(image, record.get("digest"), platforms)


def from_tag(image: str, host: HostBuild, error: str, architecture: str = "amd64",
             host_process: bool = False) -> Verdict:
    """Without the registry's answer, the verdict the tag decides: a tag that names a Windows build
    (knowledge/windows_builds.yaml image_tags, or 10.0.N) is an image of that build, judged by the same rule;
    any other tag stays unknown, with the registry's reason."""
    from kubectl_win.builds import image_build

    number = image_build(image)
    if number is None:
        return unknown(error)
    judged = decide((Platform("windows", architecture, f"10.0.{number}"),), host, architecture, host_process)
    return Verdict(judged.verdict, None, None,
                   f"{judged.reason} (from the tag, which names build {number}: the registry could not be read: "
                   f"{error})")


Resolver = Callable[[Sequence[str]], dict[str, Resolved]]


def recorded_resolver(records: dict[str, Any], fallback: Resolver | None = None) -> Resolver:
    """Answers from resolutions a dump recorded; the rest from `fallback` (the registry), or unknown."""

    def resolve(images: Sequence[str]) -> dict[str, Resolved]:
        out = {image: Resolved.from_record(image, records[image]) for image in images
               if isinstance(records.get(image), dict) and not records[image].get("error")}
        rest = [image for image in dict.fromkeys(images) if image not in out]
        if rest and fallback is not None:
            out.update(fallback(rest))
        for image in rest:
            out.setdefault(image, Resolved(image, error="not recorded in the dump, and registries were not read"))
        return out

    return resolve


def windows_images(snapshot: Snapshot) -> list[str]:
    """Every image of the snapshot's Windows workloads and Windows pods, once each."""
    return list(dict.fromkeys(use.image for w in windows_workloads(snapshot) for use in w.images))


def registry_resolver(client: RegistryClient, progress: Callable[[int, int], None] | None = None) -> Resolver:
    """Resolve each distinct reference once through the client; bad references are `unknown`, not errors."""
    from kubectl_win.registry.reference import BadReference, parse_reference

    def resolve(images: Sequence[str]) -> dict[str, Resolved]:
        out: dict[str, Resolved] = {}
        parsed = {}
        for image in dict.fromkeys(images):
            try:
                parsed[image] = parse_reference(image)
            except BadReference as exc:
                out[image] = Resolved(image, error=str(exc))
        results: list[Resolution] = client.resolve_many(parsed.values(), progress)
        for image, result in zip(parsed, results, strict=True):
            out[image] = Resolved(image, result.digest, result.platforms, result.error)
        return out

    return resolve


# -- images × builds -------------------------------------------------------------------------------------------

@dataclass(slots=True)
class ImageRow:
    resolved: Resolved
    verdicts: list[tuple[str, Verdict]]  # (build as given, verdict)

    def to_dict(self) -> dict[str, Any]:
        return {**self.resolved.to_dict(), "verdicts": [v.to_dict(build) for build, v in self.verdicts]}


@dataclass(slots=True)
class ImagesReport:
    rows: list[ImageRow]

    def to_dict(self) -> dict[str, Any]:
        return {"images": [row.to_dict() for row in self.rows]}

    def verdicts(self) -> Iterable[Verdict]:
        return (v for row in self.rows for _, v in row.verdicts)


def check_images(images: Sequence[str], builds: Sequence[HostBuild], resolve: Resolver,
                 architecture: str = "amd64") -> ImagesReport:
    resolved = resolve(images)
    rows = [ImageRow(resolved[image], [(b.given, resolved[image].verdict(b, architecture)) for b in builds])
            for image in images]
    return ImagesReport(rows)


# -- workloads against their nodes ----------------------------------------------------------------------------

@dataclass(slots=True)
class ImageUse:
    container: str  # the container's name
    path: str  # spec.template.spec.initContainers[0]
    image: str


@dataclass(slots=True)
class WorkloadImages:
    namespace: str
    kind: str
    name: str
    nodes: list[str]  # Windows nodes it can land on
    builds: list[tuple[str, list[str]]]  # node build -> nodes of that build
    architecture: str
    images: list[ImageUse]
    verdicts: dict[str, list[tuple[str, Verdict]]] = field(default_factory=dict)  # image -> (build, verdict)
    image_targets: dict[str, Verdict] = field(default_factory=dict)
    note: str = ""
    host_process: bool = False
    ref: Any = None  # the findings.ObjectRef of the workload (or bare pod)
    spec_path: str = "spec"  # where its pod spec is (for a fix's patch)
    ignores: frozenset[str] = frozenset()
    runtime_class: str | None = None
    kernels: dict[str, str] = field(default_factory=dict)  # node -> its kernelVersion (10.0.20348.2700)

    @property
    def owner(self) -> str:
        return f"{self.kind}/{self.name}"

    def older_nodes(self, build: str, verdict: Verdict) -> list[tuple[str, str]]:
        """(node, its OS version) of the nodes of `build` on an older revision than the image variant chosen."""
        from kubectl_win.updates import parse_kernel

        image = parse_kernel(verdict.variant or "")
        if image is None:
            return []
        out = []
        for node in dict(self.builds).get(build, []):
            host = parse_kernel(self.kernels.get(node, ""))
            if host is not None and host[0] == image[0] and host[1] < image[1]:
                out.append((node, self.kernels[node]))
        return out


@dataclass(slots=True)
class WorkloadReport:
    workloads: list[WorkloadImages]
    resolved: dict[str, Resolved]
    target: HostBuild | None = None
    skipped: list[str] = field(default_factory=list)

    def verdicts(self) -> Iterable[Verdict]:
        """What the exit status reads: the verdicts on the target when planning a move, else on the nodes."""
        for workload in self.workloads:
            if self.target is not None:
                yield from workload.image_targets.values()
                continue
            for pairs in workload.verdicts.values():
                yield from (v for _, v in pairs)

    def summary(self) -> dict[str, Any]:
        """Counts of images by verdict on the target (or on the nodes), per namespace and per owner."""
        per_namespace: dict[str, dict[str, int]] = {}
        per_owner: dict[str, dict[str, int]] = {}
        for workload in self.workloads:
            owner = f"{workload.namespace}/{workload.owner}" if workload.namespace else workload.owner
            for image in workload.images:
                verdict = self._headline(workload, image.image)
                for bucket, key in ((per_namespace, workload.namespace or "<cluster>"), (per_owner, owner)):
                    counts = bucket.setdefault(key, dict.fromkeys(VERDICTS, 0))
                    counts[verdict] += 1
        return {"namespaces": per_namespace, "owners": per_owner}

    def _headline(self, workload: WorkloadImages, image: str) -> str:
        if self.target is not None:
            return workload.image_targets[image].verdict
        verdicts = [v.verdict for _, v in workload.verdicts.get(image, [])]
        for worst in (NO_VARIANT, UNKNOWN, "hyperv-only"):
            if worst in verdicts:
                return worst
        return verdicts[0] if verdicts else UNKNOWN

    def to_dict(self) -> dict[str, Any]:
        from kubectl_win.updates import kb_of_version

        out = []
        for workload in self.workloads:
            images = []
            for use in workload.images:
                resolved = self.resolved[use.image]
                entry = {"container": use.container, "path": use.path, **resolved.to_dict(),
                         "verdicts": [{**v.to_dict(build), "nodes": dict(workload.builds).get(build, []),
                                       "update": kb_of_version(v.variant or ""),
                                       "olderNodes": [{"name": n, "osVersion": k, "update": kb_of_version(k)}
                                                      for n, k in workload.older_nodes(build, v)]}
                                      for build, v in workload.verdicts.get(use.image, [])]}
                if self.target is not None:
                    entry["target"] = workload.image_targets[use.image].to_dict(self.target.given)
                images.append(entry)
            out.append({"namespace": workload.namespace or None, "kind": workload.kind, "name": workload.name,
                        "nodes": workload.nodes, "note": workload.note or None, "images": images})
        payload: dict[str, Any] = {"workloads": out, "summary": self.summary()}
        if self.target is not None:
            payload["targetBuild"] = self.target.given
        if self.skipped:
            payload["skipped"] = self.skipped
        return payload


def windows_workloads(snapshot: Snapshot, builds: Sequence[HostBuild] = (),
                      selector: Callable[[dict[str, str]], bool] | None = None) -> list[WorkloadImages]:
    """Each Windows workload with its images and the Windows nodes it can land on (or, when `builds` is given,
    those builds instead of nodes: manifests checked without a cluster)."""
    from kubectl_win.doctor.scheduling import effective, fits

    out = []
    seen: set[tuple[str, str, str]] = set()
    ephemeral = _ephemeral_by_owner(snapshot)
    for workload in snapshot.workloads:
        if not _is_windows(workload, snapshot):
            continue
        ref = workload.ref
        key = (ref.namespace or "", ref.kind, ref.name)
        if key in seen:
            continue
        seen.add(key)
        uses = [ImageUse(c.name, c.path, c.image) for c in workload.containers if c.image]
        uses += ephemeral.get(workload.ref, [])
        if builds:
            out.append(WorkloadImages(ref.namespace or "", ref.kind, ref.name, [],
                                      [(b.given, []) for b in builds], "amd64", uses,
                                      host_process=workload.host_process, ref=ref, spec_path=workload.spec_path,
                                      ignores=workload.ignores, runtime_class=workload.placement.runtime_class))
            continue
        placement = effective(workload.placement, snapshot.runtime_classes)
        nodes = [n for n in snapshot.windows_nodes if fits(placement, n)]
        note = ""
        if not nodes:
            note = "no Windows node fits its selectors, affinity and tolerations; checked against every Windows node"
            nodes = list(snapshot.windows_nodes)
        out.append(WorkloadImages(ref.namespace or "", ref.kind, ref.name, [n.name for n in nodes],
                                  _builds_of(nodes), _architecture(nodes), uses, note=note,
                                  host_process=workload.host_process, ref=ref, spec_path=workload.spec_path,
                                  ignores=workload.ignores, runtime_class=workload.placement.runtime_class,
                                  kernels={n.name: n.kernel_version for n in nodes if n.kernel_version}))
    for pod in snapshot.pods:  # bare pods already placed on a Windows node
        node = snapshot.node(pod.node)
        if pod.controller is not None or node is None or not node.windows:
            continue
        key = (pod.namespace, "Pod", pod.name)
        if key in seen:
            continue
        seen.add(key)
        uses = [ImageUse(c.name, c.path, c.image) for c in pod.containers if c.image]
        out.append(WorkloadImages(pod.namespace, "Pod", pod.name, [node.name], _builds_of([node]),
                                  _architecture([node]), uses, host_process=pod.host_process, ref=pod.ref,
                                  ignores=pod.ignores, runtime_class=pod.runtime_class,
                                  kernels={node.name: node.kernel_version} if node.kernel_version else {}))
    return out


def _is_windows(workload: WorkloadRecord, snapshot: Snapshot) -> bool:
    from kubectl_win.doctor.scheduling import pins_os

    return bool(workload.target.windows) or pins_os(workload.placement, "windows")


def _ephemeral_by_owner(snapshot: Snapshot) -> dict[ObjectRef, list[ImageUse]]:
    """Ephemeral containers live on pods only: those of each workload's Windows pods, by the pods' owner
    (read once per pod group, whose pods share its representative pod)."""
    out: dict[ObjectRef, list[ImageUse]] = {}
    groups = dict.fromkeys((pod.owner_ref, pod.group) for pod in snapshot.pods)
    for owner, group in groups:
        if '"ephemeralContainers"' not in snapshot.pod_groups[group].packed:
            continue  # most pods have none: no need to decode the group's pod
        spec = snapshot.pod_groups[group].pod.get("spec") or {}
        for index, container in enumerate(spec.get("ephemeralContainers") or []):
            if isinstance(container, dict) and container.get("image"):
                out.setdefault(owner, []).append(ImageUse(str(container.get("name") or ""),
                                                          f"spec.ephemeralContainers[{index}]",
                                                          str(container["image"])))
    return out


def _builds_of(nodes: Sequence[NodeRecord]) -> list[tuple[str, list[str]]]:
    builds: dict[str, list[str]] = {}
    for node in nodes:
        builds.setdefault(node.windows_build or "unknown", []).append(node.name)
    return sorted(builds.items())


def _architecture(nodes: Sequence[NodeRecord]) -> str:
    for node in nodes:
        arch = node.labels.get("kubernetes.io/arch")
        if arch:
            return arch
    return "amd64"


def check_workloads(workloads: list[WorkloadImages], resolve: Resolver, target: HostBuild | None = None,
                    skipped: list[str] | None = None) -> WorkloadReport:
    from kubectl_win.images.compat import parse_host

    images = [use.image for w in workloads for use in w.images]
    resolved = resolve(images) if images else {}
    for workload in workloads:
        for use in workload.images:
            pairs = []
            for build, _nodes in workload.builds:
                try:
                    host = parse_host(build)
                except ValueError:
                    pairs.append((build, unknown(f"the node's build {build!r} is not known "
                                                 "(no node.kubernetes.io/windows-build label)")))
                    continue
                pairs.append((build, resolved[use.image].verdict(host, workload.architecture,
                                                                 workload.host_process)))
            workload.verdicts[use.image] = pairs
            if target is not None:
                workload.image_targets[use.image] = resolved[use.image].verdict(target, workload.architecture,
                                                                                workload.host_process)
    return WorkloadReport(workloads, resolved, target, skipped or [])


def exit_status(verdicts: Iterable[Verdict]) -> int:
    """1 when any verdict is no-variant (an image that cannot run where it is asked to), else 0."""
    return 1 if any(v.verdict == NO_VARIANT for v in verdicts) else 0
