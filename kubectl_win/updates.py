"""Windows Server monthly updates from knowledge/windows_updates.yaml: which update a revision is, how many
monthly updates lie between two revisions, the updates known to break containers, and how a platform patches.
Shared by doctor (nodes, images, the support bundle's hotfix list) and the metrics."""

from __future__ import annotations

import datetime as dt
import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

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
    """The day the data was put together (YYYY-MM-DD)."""
    return str(_data()["assembled"])


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


def image_rule() -> dict[str, Any]:
    return dict(_data()["image_newer_than_host"])


def base_images() -> dict[int, str]:
    """Microsoft's base image per build whose os.version says which revision is current."""
    return {int(e["build"]): str(e["image"]) for e in _data().get("base_images", ())}


def patching_for(labels: Mapping[str, str]) -> dict[str, Any]:
    """How the node's platform patches Windows (the first entry whose label the node has, else generic)."""
    entries = _data()["patching"]
    for entry in entries:
        if any(label in labels for label in entry["labels"]):
            return dict(entry)
    return dict(next(e for e in entries if e["platform"] == "generic"))
