"""Windows Server monthly updates from knowledge/windows_updates.yaml: which update a revision is, how many
monthly updates lie between two revisions, the updates known to break containers, and how a platform patches.
Shared by doctor (nodes, images, the support bundle's hotfix list) and the metrics."""

from __future__ import annotations

import datetime as dt
import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from typing import Any

from kubectl_win.clock import today
from kubectl_win.knowledge import load

# More monthly updates behind the newest than this is flagged: doctor's --max-updates-behind default
# (windows-updates-behind) and the threshold of the KubectlWinNodeBehindOnUpdates alert, so both agree.
MAX_UPDATES_BEHIND = 3

_KERNEL = re.compile(r"^\s*10\.0\.(\d{5,6})\.(\d+)")
_KB = re.compile(r"^KB?(\d{6,8})$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Update:
    build: int
    revision: int
    kb: str | None  # KB5044281; None for a release build or a row whose KB the sources did not give
    date: str  # the day Microsoft released it, YYYY-MM-DD
    month: str  # the month Microsoft files it under (YYYY-MM); out-of-band updates can be released the next
    kind: str  # monthly | oob | preview | release
    source: str

    @property
    def version(self) -> str:
        return f"10.0.{self.build}.{self.revision}"

    @property
    def timestamp(self) -> float:
        """The release day at 00:00 UTC, in seconds since the epoch."""
        day = dt.date.fromisoformat(self.date)
        return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp()

    def name(self) -> str:
        """'KB5044281 (2024-10)', or the version for a row without a KB."""
        return f"{self.kb or self.version} ({self.month})"

    def kb_name(self) -> str:
        """The KB, or what the data says when its sources gave none."""
        if self.kb:
            return self.kb
        return "release build (no KB)" if self.kind == "release" else "KB not in the data"


@dataclass(frozen=True, slots=True)
class Problem:
    id: str
    build: int
    applies_to: str  # host | image
    introduced_by: str
    start: int  # first affected revision
    before: int  # the revision of the update that fixed it
    fixed_by: str
    area: str
    problem: str
    established: str  # microsoft | reports
    sources: tuple[str, ...]

    def affects(self, revision: int) -> bool:
        return self.start <= revision < self.before

    @property
    def acknowledged(self) -> bool:
        return self.established == "microsoft"


@cache
def _data() -> dict[str, Any]:
    return load("windows_updates")


def assembled() -> str:
    """The day the rows were last reviewed against their sources (YYYY-MM-DD)."""
    return str(_data()["assembled"])


def updates_to() -> dt.date:
    """The data's date: the day of its newest update (the file's `updates_to`, which a test keeps equal to it)."""
    return dt.date.fromisoformat(str(_data()["updates_to"]))


def patch_tuesday(year: int, month: int) -> dt.date:
    """The second Tuesday of the month: the day of Microsoft's monthly ("B") update."""
    first = dt.date(year, month, 1)
    return first + dt.timedelta(days=(1 - first.weekday()) % 7 + 7)


def patch_tuesdays(after: dt.date, until: dt.date) -> list[dt.date]:
    """The second Tuesdays in (after, until]."""
    out = []
    year, month = after.year, after.month
    while dt.date(year, month, 1) <= until:
        day = patch_tuesday(year, month)
        if after < day <= until:
            out.append(day)
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def updates_end(build: int) -> dt.date | None:
    """The last day Microsoft ships updates for the build (its end of support), if it has one."""
    from kubectl_win.lifecycle import support_end

    return support_end(build)


def unlisted_since_data(build: int, day: dt.date | None = None) -> list[dt.date]:
    """The monthly updates released after the build's newest monthly row up to `day` (today) and the end of
    its support: the updates the data cannot know, estimated from the monthly cadence."""
    row = newest_monthly(build)
    if row is None:
        return []
    until = day or today()
    end = updates_end(build)
    if end is not None and end < until:
        until = end
    return patch_tuesdays(dt.date.fromisoformat(row.date), until)


def missing_between(build: int, older: int, newer: int) -> list[str]:
    """The months (YYYY-MM) of monthly updates the rows lack ('missing_months') released after revision `older`
    up to revision `newer`: between the rows around them."""
    months = _missing().get(build, ())
    if not months:
        return []
    low = running(build, older)
    high = running(build, newer)
    if high is None:
        return []
    start = low.date if low is not None else "0000-00-00"
    return [m for m in months if start < patch_tuesday(*map(int, m.split("-"))).isoformat() <= high.date]


@cache
def _missing() -> dict[int, tuple[str, ...]]:
    return {int(e["build"]): tuple(str(m) for m in e.get("missing_months") or ()) for e in _data()["builds"]}


def tag_lists() -> tuple[str, ...]:
    """Microsoft's base image repositories whose tags carry each published 10.0.BUILD.REVISION."""
    return tuple(str(r) for r in _data().get("tag_lists", ()))


_VERSION_TAG = re.compile(r"^10\.0\.(\d{5})\.(\d+)$")


def revisions_in_tags(tags: list[str]) -> dict[int, tuple[int, ...]]:
    """The revisions per build that a tag list's 10.0.BUILD.REVISION tags name (other tags are passed over)."""
    out: dict[int, set[int]] = {}
    for tag in tags:
        match = _VERSION_TAG.match(tag)
        if match:
            out.setdefault(int(match.group(1)), set()).add(int(match.group(2)))
    return {build: tuple(sorted(revisions)) for build, revisions in out.items()}


@cache
def _histories() -> dict[int, tuple[Update, ...]]:
    out = {}
    for entry in _data()["builds"]:
        build = int(entry["build"])
        rows = [Update(build, int(u["revision"]), u.get("kb"), str(u["date"]), str(u["month"]), str(u["kind"]),
                       str(u["source"])) for u in entry["updates"]]
        out[build] = tuple(sorted(rows, key=lambda u: u.revision))
    return out


@cache
def _revisions(build: int) -> tuple[int, ...]:
    return tuple(u.revision for u in history(build))


def known_builds() -> tuple[int, ...]:
    return tuple(sorted(_histories()))


def history(build: int) -> tuple[Update, ...]:
    """Every listed update of the build, by ascending revision (empty for a build the data does not cover)."""
    return _histories().get(build, ())


def parse_kernel(version: str) -> tuple[int, int] | None:
    """(build, revision) of '10.0.20348.2700' (a kernelVersion or an image's os.version), or None."""
    match = _KERNEL.match(version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def running(build: int, revision: int) -> Update | None:
    """The update a node on this revision runs: the listed one, or the newest listed before it (a hotpatch
    or an unlisted revision is 'after' it); None below the first row or for a build without data."""
    revisions = _revisions(build)
    index = bisect_right(revisions, revision) - 1
    return history(build)[index] if index >= 0 else None


def kb_of_version(version: str) -> str | None:
    """The update an OS version ('10.0.20348.2700') is, as the data names it: 'KB5042881', 'after KB5042881'
    (an unlisted revision), 'KB not in the data', or None (no data, or newer than the data)."""
    parsed = parse_kernel(version)
    if parsed is None:
        return None
    row = running(*parsed)
    if row is None or parsed[1] > history(parsed[0])[-1].revision:
        return None
    return row.kb_name() if row.revision == parsed[1] else f"after {row.kb_name()}"


def newest(build: int) -> Update | None:
    rows = history(build)
    return rows[-1] if rows else None


def newest_monthly(build: int) -> Update | None:
    return next((u for u in reversed(history(build)) if u.kind == "monthly"), None)


def monthly_between(build: int, older: int, newer: int) -> list[Update]:
    """The monthly updates released after revision `older`, up to and including revision `newer`."""
    return [u for u in history(build) if u.kind == "monthly" and older < u.revision <= newer]


def by_kb(kb: str) -> Update | None:
    """The update a KB number names ('KB5044281' or '5044281'), in any build."""
    match = _KB.match(kb.strip())
    if not match:
        return None
    return _by_kb().get(f"KB{match.group(1)}")


@cache
def _by_kb() -> dict[str, Update]:
    return {u.kb: u for rows in _histories().values() for u in rows if u.kb}


@cache
def problems() -> tuple[Problem, ...]:
    return tuple(Problem(str(p["id"]), int(p["build"]), str(p["applies_to"]), str(p["introduced_by"]),
                         int(p["affected"]["from"]), int(p["affected"]["before"]), str(p["fixed_by"]),
                         str(p["area"]), " ".join(str(p["problem"]).split()), str(p["established"]),
                         tuple(str(s) for s in p["sources"])) for p in _data()["problems"])


def problems_of(build: int, revision: int, applies_to: str = "host") -> list[Problem]:
    return [p for p in problems() if p.build == build and p.applies_to == applies_to and p.affects(revision)]


def barrier_between(build: int, host: int, image: int) -> dict[str, Any] | None:
    """The documented revision that host and image lie on opposite sides of (they then fail together)."""
    for entry in _data().get("revision_barriers", ()):
        if int(entry["build"]) == build and (host < int(entry["revision"])) != (image < int(entry["revision"])):
            return entry
    return None


_TAG_REVISION = re.compile(r"(?<![\d.])10\.0\.(\d{5})\.(\d+)(?![\d.])")
_TAG_KB = re.compile(r"(?<![A-Za-z0-9])KB(\d{7})(?!\d)", re.IGNORECASE)


def tag_revision(image: str) -> tuple[int, int] | None:
    """(build, revision) an image's tag names: a 10.0.BUILD.REVISION in it ('servercore:10.0.20348.2700',
    'app:1.4-10.0.17763.6414'), or a KB of the history ('ltsc2022-KB5044281'); None when it names neither."""
    from kubectl_win.builds import tag_of

    tag = tag_of(image)
    if not tag:
        return None
    match = _TAG_REVISION.search(tag)
    if match:
        return int(match.group(1)), int(match.group(2))
    kb = _TAG_KB.search(tag)
    row = by_kb(f"KB{kb.group(1)}") if kb else None
    return (row.build, row.revision) if row is not None else None


def image_rule() -> dict[str, Any]:
    return dict(_data()["image_newer_than_host"])


def base_images() -> dict[int, str]:
    """Microsoft's base image per build whose os.version says which revision is current."""
    return {int(e["build"]): str(e["image"]) for e in _data().get("base_images", ())}


def patching_for(platform_name: str) -> dict[str, Any]:
    """How the node's platform (named as the platform model names it) patches Windows; generic otherwise."""
    entries = _data()["patching"]
    return dict(next((e for e in entries if e["platform"] == platform_name),
                     next(e for e in entries if e["platform"] == "generic")))
