"""Windows Server builds from knowledge/windows_builds.yaml: what a node runs, what a user names, and
what an image tag was built for. Shared by doctor and scaffold."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from kubectl_win.knowledge import load

_BUILD_VERSION = re.compile(r"^10\.0\.(\d{5,6})$")
# Any 10.0.NNNNN in a tag (10.0.20348.2762, windowsservercore-10.0.17763): a build even if not in the file.
_TAG_VERSION = re.compile(r"(?<![0-9])10\.0\.(\d{5,6})(?![0-9])")
# Tags that name a build on their own; bare release numbers (1809, 2004) count only on Windows images.
_UNAMBIGUOUS = re.compile(r"^(ltsc\d{4}|\d+\.\d+\.\d+)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Build:
    build: int  # 17763
    version: str  # the node label value, 10.0.17763
    name: str  # Windows Server 2019
    image_tags: tuple[str, ...] = ()  # tags of images built for it: ltsc2019, 1809, ...
    taint_value: str | None = None  # the KEP-116 scheme's taint value: Win1809
    supported: bool = True  # a supported Kubernetes node OS today
    release: str = ""
    channel: str = ""
    note: str = ""

    @property
    def tags(self) -> tuple[str, ...]:
        return self.image_tags

    @property
    def label(self) -> str:
        """A short human name: the first image tag (ltsc2022), or the version for unknown builds."""
        return self.image_tags[0] if self.image_tags else self.version

    def display(self) -> str:
        return f"{self.name} ({self.version})"


@cache
def builds() -> dict[int, Build]:
    """The known builds by build number."""
    out = {}
    for entry in load("windows_builds")["builds"]:
        number = int(entry["build"])
        out[number] = Build(
            number,
            str(entry["version"]),
            str(entry["name"]),
            tuple(str(t) for t in entry["image_tags"]),
            entry.get("taint_value"),
            bool(entry.get("supported", True)),
            str(entry.get("release") or ""),
            str(entry.get("channel") or ""),
            str(entry.get("note") or ""),
        )
    return out


def known_builds() -> list[Build]:
    return list(builds().values())


def build_of(number: int | None) -> Build | None:
    return builds().get(number) if number is not None else None


def build_for_version(version: str) -> Build:
    """The Build for a node.kubernetes.io/windows-build value (an unknown build gets a bare Build)."""
    match = _BUILD_VERSION.match(version.strip())
    number = int(match.group(1)) if match else 0
    return builds().get(number) or Build(number, version, f"Windows build {version}")


def resolve_build(text: str) -> Build:
    """'ltsc2022', '1809', '10.0.20348' -> Build; ValueError for anything else."""
    wanted = text.strip()
    for build in builds().values():
        if wanted.lower() in (t.lower() for t in build.image_tags) or wanted == build.version:
            return build
    if _BUILD_VERSION.match(wanted):
        return build_for_version(wanted)
    raise ValueError(
        f"unknown Windows build {text!r} (expected ltsc2019, ltsc2022, ltsc2025 or a node build like 10.0.20348)"
    )


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
    """The Windows build number an image's tag names (':ltsc2019', '-1809', ':10.0.20348.1234'), or None."""
    from kubectl_win.explain.target import is_windows_image

    tag = tag_of(image)
    if not tag:
        return None
    windows = None
    for pattern, number, unambiguous in _tag_patterns():
        if pattern.search(tag):
            if unambiguous or pattern.fullmatch(tag):  # ':1809' alone names the build too
                return number
            if windows is None:
                windows = is_windows_image(image)
            if windows:
                return number
    match = _TAG_VERSION.search(tag)
    return int(match.group(1)) if match else None


def build_of_image(image: str) -> Build | None:
    """The Build an image was made for (a bare Build for a 10.0.N tag not in the file), or None."""
    number = image_build(image)
    if number is None:
        return None
    return builds().get(number) or build_for_version(f"10.0.{number}")


def tag_of(image: str) -> str:
    """'mcr.microsoft.com/windows/servercore:ltsc2022@sha256:...' -> 'ltsc2022'; '' when the reference has no tag."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else ""


def tags_for(number: int) -> str:
    build = build_of(number)
    return ", ".join(build.image_tags) if build else str(number)
