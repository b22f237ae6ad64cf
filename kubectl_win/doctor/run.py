"""run_doctor(options) -> DoctorReport: the snapshot (live, a dump or a support bundle), the checks, the
policy, the report; one pipeline for every source. No printing here."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kubectl_win.doctor.build import SnapshotBuilder
from kubectl_win.doctor.checks.plan import run_checks
from kubectl_win.doctor.read.dump import DumpWriter, read_dump
from kubectl_win.doctor.records import Snapshot
from kubectl_win.doctor.render.report import DoctorReport
from kubectl_win.findings import sort_key
from kubectl_win.policy import load_policy
from kubectl_win.updates import MAX_UPDATES_BEHIND

if TYPE_CHECKING:
    from kubectl_win.doctor.read.bundle import BundleFacts

SCOPES = ("cluster", "nodes", "workloads")


@dataclass
class DoctorOptions:
    scope: str = "cluster"
    from_dump: str | None = None
    from_bundle: str | None = None  # a support bundle (kubectl win collect): its cluster part and its nodes' files
    save_dump: str | None = None
    force: bool = False  # --save-dump may replace an existing file
    redact: bool = True  # --save-dump keeps only what the checks read (False: --no-redact)
    kube_flags: Any = None  # kubectl_win.kube.KubeFlags; built lazily so dump runs never import the client
    namespace: str | None = None  # None: every namespace
    config: str | None = None
    progress: Callable[[str, int], None] | None = field(default=None, repr=False)
    deep: Any = None  # kubectl_win.doctor.deep.DeepOptions: also look inside each Windows node
    # kubectl_win.images.service.Resolver: read the Windows workloads' images from their registries
    # (--check-images). None: doctor stays offline; a dump's recorded platforms are still used.
    images: Any = field(default=None, repr=False)
    # (repository) -> (tags, error): read the tag lists of Microsoft's base images (--check-images), whose
    # 10.0.BUILD.REVISION tags count the Windows updates released after the update data. None: offline.
    tags: Any = field(default=None, repr=False)
    max_updates_behind: int = MAX_UPDATES_BEHIND  # windows-updates-behind: more updates behind is a warning


def take_snapshot(options: DoctorOptions) -> Snapshot:
    writer = DumpWriter(options.save_dump, options.force, options.redact) if options.save_dump else None
    builder = SnapshotBuilder(sink=writer.write if writer else None)
    bundle = None
    try:
        if options.from_bundle:
            bundle = _read_bundle(options, builder)
        elif options.from_dump:
            read_dump(options.from_dump, builder)
        else:
            _read_live(options, builder)
        if options.images is not None:
            _resolve_images(builder, options.images)
    except BaseException:
        if writer:
            writer.abort()
        raise
    if writer:
        writer.finish(builder.header())
    snapshot = builder.build()
    if bundle is None:
        return snapshot
    from kubectl_win.doctor.read.hotfixes import with_bundle_revisions

    return with_bundle_revisions(replace(snapshot, bundle=bundle))


def _read_bundle(options: DoctorOptions, builder: SnapshotBuilder) -> BundleFacts:
    from kubectl_win.collect.bundle import open_bundle
    from kubectl_win.doctor.read.bundle import read_bundle

    return read_bundle(open_bundle(options.from_bundle or ""), builder, options.scope)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector while the cluster is read and checked. Parsed pages are trees of
    dicts and lists without cycles, freed by reference counting as soon as a page is done, and records and
    findings form none either; the collector would otherwise run every few hundred of the millions of
    containers a large cluster's pages hold, walking every record kept so far each time (about a sixth of
    doctor's time at 150,000 pods). It resumes, as it was, when the checks are done. Counted, because
    `kubectl win doctor --context A --context B` runs several scans in threads and the switch is global:
    the collector resumes when the last of them is done, not when the first one is."""
    global _pauses, _was_enabled
    with _pause_lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()


_pause_lock = threading.Lock()
_pauses = 0
_was_enabled = True


def _resolve_images(builder: SnapshotBuilder, resolve: Any) -> None:
    """Record what the registries say about each Windows workload image not recorded yet (a dump may carry some)."""
    from kubectl_win.images.service import windows_images

    wanted = [image for image in windows_images(builder.build()) if image not in builder.images]
    if wanted:
        for image, resolved in resolve(wanted).items():
            builder.images[image] = resolved.to_record()


def _with_base_images(snapshot: Snapshot, resolve: Any) -> Snapshot:
    """The snapshot with what the registry says about Microsoft's base images of the Windows nodes' builds (their
    os.version is the newest revision Microsoft ships); one it cannot read is said in skipped, and "behind" then
    counts from the update history alone."""
    from kubectl_win import updates
    from kubectl_win.doctor.patchlevel import node_revision
    from kubectl_win.doctor.records import Skipped

    present = {parsed[0] for node in snapshot.windows_nodes if (parsed := node_revision(node))}
    wanted = [image for build, image in sorted(updates.base_images().items()) if build in present]
    if not wanted:
        return snapshot
    records = {image: resolved.to_record() for image, resolved in resolve(wanted).items()}
    unread = tuple(Skipped(f"base image {image}", str(record["error"])) for image, record in records.items()
                   if record.get("error"))
    return replace(snapshot, base_images=records, skipped=snapshot.skipped + unread)


def _with_release_tags(snapshot: Snapshot, tags: Any) -> Snapshot:
    """The snapshot with the revisions Microsoft published for the Windows nodes' builds, from the first tag list
    of its base image repositories that can be read; none read is said in skipped, and the updates after the
    data are then estimated."""
    from kubectl_win import updates
    from kubectl_win.doctor.patchlevel import node_revision
    from kubectl_win.doctor.records import Skipped

    present = {parsed[0] for node in snapshot.windows_nodes
               if (parsed := node_revision(node)) and updates.history(parsed[0])}
    if not present:
        return snapshot
    reasons = []
    for repository in updates.tag_lists():
        names, error = tags(repository)
        if error is None:
            found = {b: r for b, r in updates.revisions_in_tags(names).items() if b in present}
            return replace(snapshot, release_tags=found)
        reasons.append(f"{repository}: {error}")
    return replace(snapshot, skipped=(*snapshot.skipped, Skipped("base image tags", "; ".join(reasons))))


def _read_live(options: DoctorOptions, builder: SnapshotBuilder) -> None:
    from kubectl_win.doctor.read.api import read_cluster
    from kubectl_win.kube import KubeFlags, connect

    with connect(options.kube_flags or KubeFlags()) as cluster:
        read_cluster(cluster, builder, options.scope, options.namespace, options.progress)


def run_doctor(options: DoctorOptions) -> DoctorReport:
    if options.scope not in SCOPES:
        raise ValueError(f"unknown scope {options.scope!r}")
    policy = load_policy(options.config)
    with _no_cycle_collection():
        snapshot = take_snapshot(options)
        if options.max_updates_behind != snapshot.max_updates_behind:
            snapshot = replace(snapshot, max_updates_behind=options.max_updates_behind)
        if options.images is not None:
            snapshot = _with_base_images(snapshot, options.images)
        if options.tags is not None:
            snapshot = _with_release_tags(snapshot, options.tags)
        findings = run_checks(snapshot, options.scope)
    deep = _run_deep(options, snapshot) if options.deep is not None and options.scope != "workloads" else None
    if deep is not None:
        findings.extend(deep.findings)
    findings = policy.apply(findings)
    findings.sort(key=sort_key)
    report = DoctorReport.build(snapshot, findings, options.scope)
    if snapshot.bundle is not None:
        report.locations = True  # findings from the nodes' files name the file and line
        report.hns = snapshot.bundle.hns
    if deep is not None:
        report.skipped.extend(deep.skipped)
        report.hns = deep.hns
    return report


def _run_deep(options: DoctorOptions, snapshot: Snapshot):  # type: ignore[no-untyped-def]
    from kubectl_win.doctor.deep import run_deep
    from kubectl_win.kube import KubeFlags, connect

    with connect(options.kube_flags or KubeFlags()) as cluster:
        return run_deep(cluster, snapshot, options.deep, options.progress)
