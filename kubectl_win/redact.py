"""One redaction pass for everything the tool prints about itself: error lines, internal errors and
`--debug` tracebacks. A credential must never reach a terminal, a CI log or a pasted bug report.

Two layers: the patterns of knowledge/redact.yaml for the shapes credentials take (Authorization headers,
bearer and basic schemes, URL user-info, PEM private keys, bootstrap tokens, `token:`/`password:`-like keys
of kubeconfigs, registry and cloud configs), and the literal values the kubeconfig loader handed out this
run (`remember`), which catch a token wherever a library quotes it, in whatever shape.

The same table redacts a support bundle's files (`redact_counted`), each by its kind; the collection script
on the node applies it first, and the bundle writer checks again here.
"""

from __future__ import annotations

import re
from functools import cache

from kubectl_win.knowledge import load

REDACTED = "<redacted>"
_KEEP_GROUP_1 = rf"\g<1>{REDACTED}"
_MIN_SECRET = 6  # shorter values are too likely to be ordinary words to replace literally

_known: set[str] = set()



@cache
def _rules() -> tuple[tuple[str, frozenset[str], re.Pattern[str]], ...]:
    return tuple((r["name"], frozenset(r["in"]), re.compile(r["pattern"])) for r in load("redact")["patterns"])


def remember(secret: str | bytes | None) -> None:
    """A credential value this run holds (a token, a password): replaced wherever it shows up."""
    if isinstance(secret, bytes):
        secret = secret.decode("utf-8", "replace")
    if not secret:
        return
    # As given, trimmed, each line of it, and as Python quotes it in a repr (b'Bearer x\\n').
    for part in (secret, secret.strip(), repr(secret)[1:-1], *secret.split()):
        if len(part) >= _MIN_SECRET:
            _known.add(part)


def redact(text: str) -> str:
    """`text` with every credential it may carry replaced by <redacted>."""
    for secret in sorted(_known, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    for _, kinds, pattern in _rules():
        if "message" in kinds:
            text = pattern.sub(_KEEP_GROUP_1, text)
    return text


def kind_of(member: str) -> str:
    """A bundle member's kind: config for files under config/, json for the structured dumps, log for the
    rest."""
    if member.startswith("config/"):
        return "config"
    return "json" if member.endswith(".json") else "log"


def redact_counted(text: str, kind: str) -> tuple[str, dict[str, int]]:
    """Bundle text of a kind (see kind_of) with every credential the table knows for it replaced, and how many
    of each pattern's name. Structured dumps are redacted as log text."""
    counts: dict[str, int] = {}
    for name, kinds, pattern in _rules():
        if kind not in kinds and not (kind == "json" and "log" in kinds):
            continue
        text, found = pattern.subn(_KEEP_GROUP_1, text)
        if found:
            counts[name] = counts.get(name, 0) + found
    return text, counts
