"""`WWW-Authenticate` challenges of registries: `Bearer realm="…",service="…",scope="…"` or `Basic realm="…"`.

A Basic challenge's realm is a label, not a URL (one Python client mistakes it for one); only a Bearer realm is
the token service's address.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PARAM = re.compile(r'\s*([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?')


@dataclass(frozen=True, slots=True)
class Challenge:
    scheme: str  # "bearer" or "basic"
    realm: str = ""
    service: str = ""
    scope: str = ""


def parse_challenge(header: str) -> Challenge | None:
    """The first Bearer or Basic challenge of a WWW-Authenticate header, or None."""
    header = header.strip()
    if not header:
        return None
    scheme, _, rest = header.partition(" ")
    scheme = scheme.lower()
    if scheme not in ("bearer", "basic"):
        return None
    params: dict[str, str] = {}
    for match in _PARAM.finditer(rest):
        quoted, bare = match.group(2), match.group(3)
        params[match.group(1).lower()] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else (bare or "")
    if scheme == "bearer" and not params.get("realm"):
        return None
    return Challenge(scheme, params.get("realm", ""), params.get("service", ""), params.get("scope", ""))
