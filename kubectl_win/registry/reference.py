"""Image references as Kubernetes and Docker read them: `[HOST[:PORT]/]PATH[:TAG][@DIGEST]`.

Docker Hub's names: a reference without a host is `docker.io`, a one-word repository is `library/NAME`, and
the API lives at `registry-1.docker.io`. A host is the first component when it has a `.` or a `:`, is
`localhost`, or is an IPv6 literal in brackets (`[::1]:5000/app`). No tag and no digest means `latest`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"
_DOCKER_HUB_ALIASES = ("docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com")
_PATH = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$")
_TAG = re.compile(r"^[\w][\w.-]{0,127}$")
_DIGEST = re.compile(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$")
_HOST = re.compile(r"^(?:\[[0-9a-fA-F:.%]+\]|[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?)(?::\d{1,5})?$")


class BadReference(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Reference:
    given: str  # as the user (or the pod spec) wrote it
    registry: str  # docker.io, mcr.microsoft.com, localhost:5000, [::1]:5000
    repository: str  # library/python, windows/servercore
    tag: str | None = None
    digest: str | None = None

    @property
    def api_host(self) -> str:
        """Where the registry API is served (Docker Hub's differs from its name)."""
        return DOCKER_HUB_API if self.registry == DOCKER_HUB else self.registry

    @property
    def target(self) -> str:
        """What GET /v2/<repo>/manifests/<target> asks for: the digest when there is one (it pins the image)."""
        return self.digest or self.tag or "latest"

    @property
    def scope(self) -> str:
        return f"repository:{self.repository}:pull"

    def canonical(self) -> str:
        text = f"{self.registry}/{self.repository}"
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text


def parse_reference(text: str) -> Reference:
    """Parse an image reference; BadReference (a ValueError) with a one-line reason when it is not one."""
    given = text
    text = text.strip()
    if not text or any(c.isspace() for c in text):
        raise BadReference(f"not an image reference: {given!r}")
    name, _, digest = text.partition("@")
    if "@" in text and not _DIGEST.match(digest):
        raise BadReference(f"invalid digest in image reference {given!r}")
    registry, remainder = DOCKER_HUB, name
    first, slash, rest = name.partition("/")
    if slash and (first.startswith("[") or "." in first or ":" in first or first == "localhost"):
        if not _HOST.match(first):
            raise BadReference(f"invalid registry host {first!r} in image reference {given!r}")
        registry, remainder = first, rest
    tag = None
    last_slash = remainder.rfind("/")
    colon = remainder.rfind(":")
    if colon > last_slash:
        remainder, tag = remainder[:colon], remainder[colon + 1:]
        if not _TAG.match(tag):
            raise BadReference(f"invalid tag {tag!r} in image reference {given!r}")
    if not _PATH.match(remainder):
        raise BadReference(f"invalid repository name {remainder!r} in image reference {given!r}")
    if registry.lower() in _DOCKER_HUB_ALIASES:
        registry = DOCKER_HUB
    if registry == DOCKER_HUB and "/" not in remainder:
        remainder = f"library/{remainder}"
    if tag is None and not digest:
        tag = "latest"
    return Reference(given, registry, remainder, tag, digest or None)


def normalise_host(key: str) -> str:
    """A config.json `auths` key or a flag's host as a registry name: scheme and path dropped, Docker Hub's
    aliases (https://index.docker.io/v1/) folded into docker.io."""
    host = re.sub(r"^[a-z][a-z0-9+.-]*://", "", key.strip(), flags=re.IGNORECASE).split("/", 1)[0]
    return DOCKER_HUB if host.lower() in _DOCKER_HUB_ALIASES else host
