"""The one taint scheme for Windows nodes: doctor's suggested taint, scaffold's tolerations and `scaffold
node-taint` all ask `windows_taint`, so following any of them gives the same taint and the matching
toleration.

The answer, in order: the taint the cluster's Windows nodes already carry (KEP-116's per-build os=Win<release>
gives each build its own value), else the platform's own (GKE and OpenShift's WMCO taint Windows nodes
themselves), else KEP-116's per-build os=Win<release> (the docs' os=windows for a build the KEP scheme names
no value for).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from kubectl_win import platforms
from kubectl_win.builds import Build
from kubectl_win.knowledge import load


@dataclass(frozen=True)
class SchemeTaint:
    key: str
    value: str | None  # None: any value of the key (a toleration for a build the scheme names no value for)
    effect: str
    why: str  # where it comes from, for the user: "the taint the cluster's other Windows nodes carry"

    def text(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value is not None else f"{self.key}:{self.effect}"

    def key_value(self) -> str:
        return f"{self.key}={self.value}" if self.value is not None else self.key


def _scheme(scheme_id: str) -> dict[str, str]:
    return next(s for s in load("taints")["schemes"] if s["id"] == scheme_id)


def is_kep_value(key: str, value: str | None) -> bool:
    """os=Win<release>: the KEP scheme's per-build form (os=windows is the docs' fixed value)."""
    kep = _scheme("kep")
    return key == kep["key"] and bool(value) and value.lower().startswith("win") and value.lower() != "windows"


def kep_taint(build: Build | None, open_value: bool = False) -> SchemeTaint:
    """KEP-116's taint for a build; for a build it names no value for, the docs' os=windows, or (open_value)
    any value of the key, which a toleration uses to cover every build."""
    kep = _scheme("kep")
    if build is not None and build.taint_value:
        return SchemeTaint(kep["key"], build.taint_value, kep["effect"], str(kep["description"]))
    if open_value:
        return SchemeTaint(kep["key"], None, kep["effect"], "any value of the KEP-116 scheme's key")
    docs = _scheme("docs")
    return SchemeTaint(docs["key"], docs["value"], docs["effect"], str(docs["description"]))


def windows_taint(build: Build | None, in_use: Iterable[tuple[str, str | None, str]] = (),
                  platform_id: str = platforms.UNKNOWN, open_value: bool = False) -> SchemeTaint:
    """The taint a Windows node of `build` should carry.

    `in_use`: the Windows taints (key, value, effect) the cluster's Windows nodes carry, one per node and taint.
    `open_value`: without a build, answer with any value of the key (for a toleration) rather than os=windows.
    """
    used = Counter((k, v, e) for k, v, e in in_use)
    if used:
        (key, value, effect), _ = used.most_common(1)[0]
        if is_kep_value(key, value):
            per_build = kep_taint(build, open_value)
            if per_build.key == key and per_build.value is not None and per_build.value != "windows":
                return SchemeTaint(key, per_build.value, effect,
                                   "the per-build scheme the cluster's other Windows nodes carry")
            if build is None and open_value:
                return SchemeTaint(key, None, effect, "the per-build scheme the cluster's other Windows nodes carry")
        return SchemeTaint(key, value, effect, "the taint the cluster's other Windows nodes carry")
    own = platforms.platform(platform_id).taint
    if own is not None:
        name = platforms.platform(platform_id).name
        return SchemeTaint(own[0], own[1], own[2], f"the taint {name} gives Windows nodes")
    return kep_taint(build, open_value)
