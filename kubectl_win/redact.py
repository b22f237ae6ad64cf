"""One redaction pass for everything the tool prints about itself: error lines, internal errors and
`--debug` tracebacks. A credential must never reach a terminal, a CI log or a pasted bug report.

Two layers: patterns for the shapes credentials take in messages (Authorization headers, bearer and
basic schemes, URL user-info, PEM private keys, `token:`/`password:`-like keys of kubeconfigs and
registry configs), and the literal values the kubeconfig loader handed out this run (`remember`), which
catch a token wherever a library quotes it, in whatever shape.
"""

from __future__ import annotations

import re

REDACTED = "<redacted>"
_MIN_SECRET = 6  # shorter values are too likely to be ordinary words to replace literally

_known: set[str] = set()

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)", re.S),
     "<redacted private key>"),
    # `Authorization: Bearer x`, `'Authorization': 'Basic x'`, `authorization=x`: the whole value.
    (re.compile(r"(?i)((?:proxy-)?authorization['\"]?\s*[:=]\s*['\"]?)[^'\"\r\n,}]+"), rf"\1{REDACTED}"),
    (re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=\-]{4,}"), rf"\1\2{REDACTED}"),
    # scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s:@]+:[^/\s@]*@"), rf"\1{REDACTED}@"),
    # kubeconfig, exec-credential and registry-config keys whose values are credentials
    (re.compile(r"(?i)((?<![\w\-/.\\])[\w-]*(?:token|password|passwd|secret|key-data|keydata|auth)['\"]?\s*[:=]\s*"
                r"(?:b?['\"])?)[^\s'\",}]+"), rf"\1{REDACTED}"),
)


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


def forget_all() -> None:
    """For tests: drop every remembered value."""
    _known.clear()


def redact(text: str) -> str:
    """`text` with every credential it may carry replaced by <redacted>."""
    for secret in sorted(_known, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
