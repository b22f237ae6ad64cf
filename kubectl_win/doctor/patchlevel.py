"""Each Windows node's patch level: the update its revision is (knowledge/windows_updates.yaml), the newest
revision known for its build and how many monthly updates lie between.

The newest known revision is the newest of the data, of the cluster's other nodes and of the os.version the
registries reported for the images doctor read (--check-images also reads Microsoft's base images and the
10.0.BUILD.REVISION tags of their repositories), so that "behind" does not go stale with the file. The
updates after the data are counted from those tags when doctor read them (each tag a published revision);
else each second Tuesday since the data's newest update counts as one (estimated, and "behind" is then a lower
bound), and a revision newer than the data seen elsewhere as at least one. A node newer than the data is newer
than this release knows, never a problem.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubectl_win import clock, updates
from kubectl_win.doctor.records import NodeRecord, Snapshot
from kubectl_win.updates import Update

DATA, CLUSTER, REGISTRY, TAGS = "data", "cluster", "registry", "tags"


@dataclass(frozen=True, slots=True)
class Newest:
    revision: int
    source: str  # data | cluster | registry (an image's os.version) | tags (the base images' tag list)
    where: str = ""  # the node, image or repository that showed it (cluster, registry, tags)
    update: Update | None = None  # the data's row for it, when listed


@dataclass(frozen=True, slots=True)
class NodePatch:
    node: str
    build: int
    revision: int
    update: Update | None  # the update the node runs: its revision's row, or the newest row before it
    exact: bool  # the revision is that row's
    newest: Newest | None
    behind: int | None  # monthly updates between the node's revision and the newest known; None without data
    at_least: bool  # the newest known is beyond the data: `behind` is a lower bound
    newer_than_data: bool  # the node's revision is newer than every row of the data
    estimated: int = 0  # of `behind`, the monthly updates counted from the release cadence (not in the data)

    @property
    def version(self) -> str:
        return f"10.0.{self.build}.{self.revision}"

    def kb_text(self) -> str | None:
        """'KB5044281', 'after KB5044281' (an unlisted revision), 'KB not in the data' (a row whose sources gave no
        KB), or None (newer than the data)."""
        if self.newer_than_data or self.update is None:
            return None
        return self.update.kb_name() if self.exact else f"after {self.update.kb_name()}"

    def month(self) -> str | None:
        if self.newer_than_data or self.update is None:
            return None
        return self.update.month

    def behind_text(self) -> str | None:
        if self.newer_than_data and not self.behind:
            return "newer than known"
        if self.behind is None:
            return None
        return f"≥{self.behind}" if self.at_least and self.behind else str(self.behind)

    def to_dict(self) -> dict[str, Any]:
        update = self.update if not self.newer_than_data else None
        return {
            "revision": self.revision,
            "kb": update.kb if update and self.exact else None,
            "after": update.kb if update and not self.exact else None,
            "releaseMonth": update.month if update else None,
            "releaseDate": update.date if update and self.exact else None,
            "kind": update.kind if update and self.exact else None,
            "newerThanData": self.newer_than_data,
            "updatesBehind": self.behind,
            "updatesBehindAtLeast": self.at_least,
            "behindEstimated": self.estimated > 0,
            "estimatedUpdates": self.estimated,
            "newestKnown": ({"revision": self.newest.revision, "source": self.newest.source,
                             "kb": self.newest.update.kb if self.newest.update else None}
                            if self.newest else None),
        }


def node_revision(node: NodeRecord) -> tuple[int, int] | None:
    """(build, revision) from a Windows node's kernelVersion, or None."""
    if not node.windows:
        return None
    return updates.parse_kernel(node.kernel_version)


def image_revisions(images: Mapping[str, Any]) -> Iterable[tuple[int, int, str]]:
    """(build, revision, image) for every Windows os.version the registries reported."""
    for image, record in images.items():
        if not isinstance(record, dict):
            continue
        for platform in record.get("platforms") or ():
            if isinstance(platform, dict) and platform.get("os") == "windows":
                parsed = updates.parse_kernel(str(platform.get("osVersion") or ""))
                if parsed:
                    yield parsed[0], parsed[1], image


def newest_known(nodes: Iterable[NodeRecord], images: Mapping[str, Any],
                 tags: Mapping[int, tuple[int, ...]] | None = None, tags_from: str = "") -> dict[int, Newest]:
    """The newest revision known per build: the data's, another node's or an image's, whichever is newest."""
    out: dict[int, Newest] = {}

    def offer(build: int, newest: Newest) -> None:
        current = out.get(build)
        if current is None or newest.revision > current.revision:
            out[build] = newest

    for build in updates.known_builds():
        row = updates.newest(build)
        if row is not None:
            offer(build, Newest(row.revision, DATA, update=row))
    for node in nodes:
        parsed = node_revision(node)
        if parsed and updates.history(parsed[0]):
            offer(parsed[0], Newest(parsed[1], CLUSTER, node.name))
    for build, revision, image in image_revisions(images):
        if updates.history(build):
            offer(build, Newest(revision, REGISTRY, image))
    for build, revisions in (tags or {}).items():
        if updates.history(build) and revisions:
            offer(build, Newest(max(revisions), TAGS, tags_from))
    for build, newest in list(out.items()):
        row = updates.running(build, newest.revision)
        if newest.update is None and row is not None and row.revision == newest.revision:
            out[build] = Newest(newest.revision, newest.source, newest.where, row)
    return out


def assess_node(node: NodeRecord, newest: Mapping[int, Newest], tags: Mapping[int, tuple[int, ...]] | None = None,
                day: dt.date | None = None) -> NodePatch | None:
    """The node's patch level. `tags`: the revisions per build the registry's tag lists name (the updates after
    the data are then counted from them); without them, the monthly updates after the data are estimated from
    the release cadence up to `day` (today)."""
    parsed = node_revision(node)
    if parsed is None:
        return None
    build, revision = parsed
    rows = updates.history(build)
    if not rows:
        return NodePatch(node.name, build, revision, None, False, None, None, False, False)
    update = updates.running(build, revision)
    last = rows[-1].revision
    best = newest.get(build)
    published = (tags or {}).get(build)
    behind, at_least, estimated = None, False, 0
    if best is not None:
        top = min(best.revision, last)
        gaps = len(updates.missing_between(build, revision, top)) if revision < top else 0
        behind, estimated = len(updates.monthly_between(build, revision, top)) + gaps, gaps
        if published:  # Microsoft's tags: each revision after the data is one published update
            behind += len([r for r in published if max(revision, last) < r <= best.revision])
        elif revision <= last:
            missed = len(updates.unlisted_since_data(build, day))
            if missed:
                behind, estimated = behind + missed, estimated + missed
            elif best.revision > last:
                behind += 1
            at_least = missed > 0 or best.revision > last
        elif best.revision > revision:  # newer than the data, yet older than a revision seen elsewhere
            behind, at_least = behind + 1, True
        at_least = at_least or estimated > 0
    return NodePatch(node.name, build, revision, update, update is not None and update.revision == revision,
                     best, behind, at_least, revision > last, estimated)


def assess(snapshot: Snapshot) -> dict[str, NodePatch]:
    """Every Windows node's patch level, by node name."""
    tags_from = " or ".join(updates.tag_lists()) + " tags"
    newest = newest_known(snapshot.windows_nodes, {**snapshot.images, **snapshot.base_images},
                          snapshot.release_tags, tags_from)
    day = clock.today()
    out = {}
    for node in snapshot.windows_nodes:
        patch = assess_node(node, newest, snapshot.release_tags, day)
        if patch is not None:
            out[node.name] = patch
    return out


def update_data(snapshot: Snapshot) -> dict[str, Any]:
    """How current the update history is and what the updates after it were counted from, for reports:
    updatesTo (the data's newest update), reviewed, countedTo (the day "behind" counts to), estimatedSince (the
    second Tuesdays after the data, estimated when no tag list was read) and releaseTags (the repositories whose
    tags counted them, when read)."""
    if not snapshot.windows_nodes:
        return {}
    day = clock.today()
    builds = {parsed[0] for node in snapshot.windows_nodes if (parsed := node_revision(node))}
    since = sorted({d.isoformat() for b in builds if updates.history(b) and b not in snapshot.release_tags
                    for d in updates.unlisted_since_data(b, day)})
    return {"updatesTo": updates.updates_to().isoformat(), "reviewed": updates.assembled(),
            "countedTo": day.isoformat(), "estimatedSince": since,
            "releaseTags": " or ".join(updates.tag_lists()) if snapshot.release_tags else None}


def of(snapshot: Snapshot) -> dict[str, NodePatch]:
    """assess(snapshot), worked out once per snapshot (checks and renderers all read it)."""
    cached = snapshot.__dict__.get("_patch_levels")
    if cached is None:
        cached = assess(snapshot)
        object.__setattr__(snapshot, "_patch_levels", cached)
    return cached
