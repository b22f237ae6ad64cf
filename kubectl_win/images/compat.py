"""Will an image run on a Windows node? The verdict for an image's platforms and a node's build, by the rule in
knowledge/image_compat.yaml (containerd's checkWindowsHostAndContainerCompat and its preference order).

Verdicts: `runs` (an entry runs under process isolation; the one the runtime would pick is named),
`hyperv-only` (only older builds: Hyper-V isolation only), `no-variant` (nothing can run), `unknown` (the
registry could not be read; never a guess). Pure functions of their inputs: no network, no cluster.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from kubectl_win.knowledge import load

RUNS, HYPERV_ONLY, NO_VARIANT, UNKNOWN = "runs", "hyperv-only", "no-variant", "unknown"
VERDICTS = (RUNS, HYPERV_ONLY, NO_VARIANT, UNKNOWN)
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:\.(\d+))?$")


@dataclass(frozen=True, slots=True)
class Platform:
    """One runnable image of a reference: an index entry, or a single manifest's config."""

    os: str
    architecture: str
    os_version: str = ""
    variant: str = ""
    digest: str = ""  # the child manifest's digest (the image's own digest for a single manifest)

    def name(self) -> str:
        text = f"{self.os}/{self.architecture}" + (f"/{self.variant}" if self.variant else "")
        return f"{text} {self.os_version}" if self.os_version else text

    def entry(self) -> str:
        """The name and the short digest: the entry a node would pull."""
        return f"{self.name()} ({self.digest[:19]})" if self.digest else self.name()

    def to_dict(self) -> dict[str, str | None]:
        return {"os": self.os, "architecture": self.architecture, "osVersion": self.os_version or None}


@dataclass(frozen=True, slots=True)
class HostBuild:
    """A Windows node build as the user gave it (`ltsc2022`, `10.0.20348`, `10.0.20348.2700`)."""

    given: str
    major: int
    minor: int
    build: int
    revision: int | None = None

    @property
    def version(self) -> str:
        return f"{self.major}.{self.minor}.{self.build}" + (f".{self.revision}" if self.revision is not None else "")


@dataclass(frozen=True, slots=True)
class Verdict:
    verdict: str
    variant: str | None  # the os.version of the chosen entry (runs), else None
    digest: str | None  # the chosen entry's digest (runs), else None
    reason: str

    def to_dict(self, build: str) -> dict[str, str | None]:
        return {"build": build, "verdict": self.verdict, "variant": self.variant, "reason": self.reason}


def parse_host(text: str) -> HostBuild:
    """`ltsc2019|ltsc2022|ltsc2025`, a known release name, or `10.0.BUILD[.REVISION]`; ValueError otherwise."""
    wanted = text.strip()
    match = _VERSION.match(wanted)
    if match:
        major, minor, build, revision = match.groups()
        return HostBuild(text, int(major), int(minor), int(build), int(revision) if revision is not None else None)
    from kubectl_win.builds import resolve_build

    try:
        known = resolve_build(wanted)
    except ValueError:
        raise ValueError(f"unknown Windows build {text!r} (expected ltsc2019, ltsc2022, ltsc2025 "
                         "or a build like 10.0.20348 or 10.0.20348.2700)") from None
    return parse_host_version(known.version, given=text)


def parse_host_version(version: str, given: str | None = None) -> HostBuild:
    match = _VERSION.match(version.strip())
    if not match:
        raise ValueError(f"not a Windows build: {version!r}")
    major, minor, build, revision = match.groups()
    return HostBuild(given or version, int(major), int(minor), int(build), int(revision) if revision else None)


@cache
def _rule() -> dict:
    return load("image_compat")


def _image_version(os_version: str) -> tuple[int, int, int, int | None] | None:
    match = _VERSION.match(os_version.strip())
    if not match:
        return None
    major, minor, build, revision = match.groups()
    return int(major), int(minor), int(build), int(revision) if revision is not None else None


def process_compatible(host: HostBuild, os_version: str) -> bool:
    """containerd's checkWindowsHostAndContainerCompat, its inputs read from the knowledge file."""
    rule = _rule()["process_isolation"]
    if not os_version:
        return bool(rule["empty_os_version_matches"])
    parsed = _image_version(os_version)
    if parsed is None:
        return False  # containerd parses it as 0.0.0, which never matches a real host
    major, minor, build, _ = parsed
    if rule["same_major_minor"] and (major, minor) != (host.major, host.minor):
        return False
    if host.build < int(rule["exact_build_below"]):
        return build == host.build
    floor = max((int(r) for r in rule["stable_abi_releases"] if host.build >= int(r)), default=0)
    return floor <= build <= host.build


def hyperv_compatible(host: HostBuild, os_version: str) -> bool:
    rule = _rule()["hyperv_isolation"]
    parsed = _image_version(os_version) if os_version else None
    if parsed is None or not rule["runs_older_builds"]:
        return False
    major, minor, build, _ = parsed
    return (major, minor) == (host.major, host.minor) and build < host.build


def hyperv_note() -> str:
    return str(_rule()["hyperv_isolation"]["note"])


def decide(platforms: Sequence[Platform], host: HostBuild, architecture: str = "amd64",
           host_process: bool = False) -> Verdict:
    """The verdict for one image (its runnable platforms, attestations already left out) on one build.
    `host_process`: the container runs as a HostProcess container, which any Windows build runs."""
    windows = [p for p in platforms if p.os == "windows"]
    mine = [p for p in windows if p.architecture == architecture]
    if not mine:
        if windows:
            return Verdict(NO_VARIANT, None, None,
                           f"no windows/{architecture} image (only {_names(windows)})")
        if platforms:
            return Verdict(NO_VARIANT, None, None, f"not a Windows image (only {_names(platforms)})")
        return Verdict(NO_VARIANT, None, None, "the image lists no platforms")
    if host_process and _rule()["host_process"]["any_build"]:
        chosen = max(mine, key=lambda p: p.os_version)
        return Verdict(RUNS, chosen.os_version or None, chosen.digest or None,
                       f"{chosen.entry()} runs as a HostProcess container (the node's build is not matched)")
    matching = [p for p in mine if process_compatible(host, p.os_version)]
    if matching:
        # The runtime's preference order: the greatest os.version string first (stable among equals).
        chosen = max(matching, key=lambda p: p.os_version)
        reason = f"{chosen.entry()} runs under process isolation on {host.version}"
        rule = _rule()["process_isolation"]
        if (chosen.os_version and host.revision is not None and host.build < int(rule["revision_must_match_below"])
                and (_image_version(chosen.os_version) or (0, 0, 0, None))[3] != host.revision):
            reason += f"; a {host.build} host may refuse an image of another revision"
        return Verdict(RUNS, chosen.os_version or None, chosen.digest or None, reason)
    older = [p for p in mine if hyperv_compatible(host, p.os_version)]
    versions = _versions(mine)
    if older:
        return Verdict(HYPERV_ONLY, None, None,
                       f"only older Windows builds ({_versions(older)}): {hyperv_note()}")
    newer = [p for p in mine if (_image_version(p.os_version) or (0, 0, 0, None))[2] > host.build]
    if newer and len(newer) == len(mine):
        return Verdict(NO_VARIANT, None, None,
                       f"only newer Windows builds ({versions}); a {host.version} node can never run them")
    return Verdict(NO_VARIANT, None, None, f"no Windows image for {host.version} (has {versions})")


def unknown(reason: str) -> Verdict:
    return Verdict(UNKNOWN, None, None, reason)


def _names(platforms: Iterable[Platform]) -> str:
    return ", ".join(dict.fromkeys(p.name() for p in platforms))


def _versions(platforms: Iterable[Platform]) -> str:
    return ", ".join(dict.fromkeys(p.os_version or "no os.version" for p in platforms))
