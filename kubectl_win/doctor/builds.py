"""Windows builds from knowledge/windows_builds.yaml: what a node runs and what an image was built for."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from kubectl_win.explain.target import is_windows_image
from kubectl_win.knowledge import load

# Tags that name a build on their own; bare release numbers (1809, 2004) count only on Windows images.
_UNAMBIGUOUS = re.compile(r"^(ltsc\d{4}|\d+\.\d+\.\d+)$", re.IGNORECASE)


@dataclass(frozen=True)
class Build:
    build: int
    version: str
    name: str
    release: str
    channel: str
    supported: bool
    note: str
    image_tags: tuple[str, ...]
    taint_value: str


@cache
def builds() -> dict[int, Build]:
    out = {}
    for entry in load("windows_builds")["builds"]:
        out[int(entry["build"])] = Build(int(entry["build"]), str(entry["version"]), str(entry["name"]),
                                         str(entry["release"]), str(entry["channel"]), bool(entry["supported"]),
                                         str(entry.get("note") or ""), tuple(str(t) for t in entry["image_tags"]),
                                         str(entry.get("taint_value") or ""))
    return out


def build_of(number: int | None) -> Build | None:
    return builds().get(number) if number is not None else None


@cache
def _tag_patterns() -> tuple[tuple[re.Pattern[str], int, bool], ...]:
    out = []
    for build in builds().values():
        for tag in build.image_tags:
            pattern = re.compile(rf"(?<![0-9A-Za-z]){re.escape(tag)}(?![0-9A-Za-z])", re.IGNORECASE)
            out.append((pattern, build.build, bool(_UNAMBIGUOUS.match(tag))))
    return tuple(out)


@cache
def image_build(image: str) -> int | None:
    """The Windows build an image tag names (':ltsc2019', '-1809', ':10.0.20348.1234'), or None."""
    tag = _tag_of(image)
    if not tag:
        return None
    windows = None
    for pattern, number, unambiguous in _tag_patterns():
        if pattern.search(tag):
            if unambiguous:
                return number
            if windows is None:
                windows = is_windows_image(image)
            if windows:
                return number
    return None


def _tag_of(image: str) -> str:
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else ""


def tags_for(number: int) -> str:
    build = build_of(number)
    return ", ".join(build.image_tags) if build else str(number)


def summary(number: int | None) -> dict[str, Any]:
    build = build_of(number)
    return {"name": build.name if build else "unknown", "supported": build.supported if build else None}
