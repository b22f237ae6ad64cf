"""Windows Server builds from the knowledge files: resolve a build name, and tell the build an image tag is for."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kubectl_win.knowledge import load

_BUILD_NUMBER = re.compile(r"^10\.0\.(\d{5,6})$")
_TAG_BUILD = re.compile(r"(?:^|[^0-9])10\.0\.(\d{5,6})(?:$|[^0-9])")
_TAG_TOKEN = re.compile(r"[-_.]")
_WINDOWS_WORDS = ("servercore", "nanoserver", "windows", "ltsc")


@dataclass(frozen=True)
class Build:
    version: str  # the node label value, e.g. 10.0.20348
    name: str  # e.g. Windows Server 2022
    taint_value: str | None  # the KEP-116 taint value, e.g. Win2022
    tags: tuple[str, ...]  # image tags built for it
    supported: bool = True  # a supported Kubernetes node OS today

    @property
    def label(self) -> str:
        """A short human name: the first image tag (ltsc2022) or the version for unknown builds."""
        return self.tags[0] if self.tags else self.version

    def display(self) -> str:
        return f"{self.name} ({self.version})"


def known_builds() -> list[Build]:
    return [
        Build(str(b["version"]), str(b["name"]), b.get("taint_value"), tuple(str(t) for t in b["image_tags"]),
              bool(b.get("supported", True)))
        for b in load("windows_builds")["builds"]
    ]


def resolve_build(text: str) -> Build:
    """'ltsc2022', '1809', '10.0.20348' -> Build; ValueError for anything else."""
    wanted = text.strip()
    for build in known_builds():
        if wanted.lower() in (t.lower() for t in build.tags) or wanted == build.version:
            return build
    match = _BUILD_NUMBER.match(wanted)
    if match:
        return Build(wanted, f"Windows build {match.group(1)}", None, ())
    raise ValueError(
        f"unknown Windows build {text!r} (expected ltsc2019, ltsc2022, ltsc2025 or a node build like 10.0.20348)"
    )


def build_for_version(version: str) -> Build:
    """The Build for a node's node.kubernetes.io/windows-build label (unknown builds get a bare Build)."""
    for build in known_builds():
        if build.version == version:
            return build
    return Build(version, f"Windows build {version}", None, ())


def build_of_image(image: str) -> Build | None:
    """The Windows build an image tag is made for (ltsc2019, nanoserver-1809, 10.0.17763.5458), or None."""
    name, _, tag = image.partition("@")[0].rpartition(":")
    if not name or "/" in tag:
        return None  # no tag (the colon belonged to a registry port)
    match = _TAG_BUILD.search(tag)
    if match:
        return build_for_version(f"10.0.{match.group(1)}")
    tokens = [t.lower() for t in _TAG_TOKEN.split(tag) if t]
    windows_image = any(word in image.lower() for word in _WINDOWS_WORDS)
    for build in known_builds():
        for alias in build.tags:
            alias = alias.lower()
            if alias.startswith("ltsc") and alias in tokens:
                return build
            # A bare release number (1809, 20H2) only counts as a tag when the image is clearly Windows.
            if not alias.startswith("ltsc") and alias in tokens and (windows_image or tag.lower() == alias):
                return build
    return None
