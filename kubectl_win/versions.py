"""Kubernetes minor versions as comparable tuples ("1.30" -> (1, 30))."""

from __future__ import annotations

import re
from functools import lru_cache

# The newest Kubernetes minor the knowledge files describe; --k8s-version defaults to it.
NEWEST_KNOWN = (1, 37)
OLDEST_KNOWN = (1, 14)  # Windows nodes went GA in 1.14

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")

Version = tuple[int, int]


@lru_cache(maxsize=256)
def parse_version(text: str) -> Version:
    """Parse '1.30', 'v1.30.2' or '1.30.0-eks-1234' into (1, 30); raise ValueError otherwise."""
    match = _VERSION.match(str(text).strip())
    if not match:
        raise ValueError(f"not a Kubernetes version: {text!r} (expected e.g. 1.30)")
    return int(match.group(1)), int(match.group(2))


def format_version(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def in_range(version: Version, since: str | None, until: str | None = None) -> bool:
    """True when since <= version and (no until or version < until)."""
    if since and version < parse_version(since):
        return False
    if until and version >= parse_version(until):
        return False
    return True


def max_version(*versions: str | None) -> str | None:
    """The latest of several version strings (None entries ignored)."""
    present = [v for v in versions if v]
    return max(present, key=parse_version) if present else None
