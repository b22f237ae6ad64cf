"""What the cluster adds to an image-platform failure: the Windows build the message (or the node) names, that
build's support status, and which way round a Linux/Windows mix-up went."""

from __future__ import annotations

import re

from kubectl_win import builds, lifecycle, updates

# Docker and containerd name the build they looked for: "no matching manifest for windows/amd64 10.0.17134".
_ASKED = re.compile(r"windows/\w+ (?:10\.0\.)?(\d{5})\b", re.IGNORECASE)


def build_asked(message: str, node_build: int | None) -> int | None:
    """The Windows build the pull looked for: the one the message names, else the node's."""
    found = _ASKED.search(message)
    return int(found.group(1)) if found else node_build


def variant_note(message: str, node_build: int | None) -> str:
    """A sentence on the build the image lacks a variant for: out of support (images are no longer published for
    it, so the host must move) or which tags are built for it. Empty when no build is known."""
    number = build_asked(message, node_build)
    if number is None:
        return ""
    info = builds.build_of(number)
    name = info.display() if info is not None else f"build {number}"
    ended = lifecycle.support_end(number)
    if ended is not None and ended < updates.today():
        return (f"The pull asked for {name}, which has been out of support since {ended.isoformat()}: images are "
                f"no longer published for it, so move the node to a supported Windows Server build and use that "
                f"build's tag.")
    tags = builds.tags_for(number) if info is not None else str(number)
    return f"The pull asked for {name}; the image lists no variant for it: use a tag built for it ({tags})."
