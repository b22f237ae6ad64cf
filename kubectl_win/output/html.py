"""Self-contained HTML pages: escaping of untrusted text and the page shell (inline CSS, no scripts).

Everything a report shows from a cluster (names, labels, messages) goes through `text()`: it is escaped,
its direction isolated in <bdi>, control and bidi-override characters made visible, and very long values
cut. The shell carries a Content-Security-Policy that forbids scripts and every network fetch, so even a
rendering bug cannot run code or reach out. The standard library's html.escape does the escaping; no
template engine is needed for a page this size, and none would do the control-character handling.
"""

from __future__ import annotations

import html
import re
from functools import cache

MAX_TEXT = 4000  # characters of one untrusted value; the rest is summarised, not rendered
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

# C0/C1 controls (but tab and newline), bidi embeddings/overrides/isolates and marks, zero-width and
# line/paragraph separators: shown as <U+XXXX> so they can neither hide nor reorder text.
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def esc(value: object) -> str:
    """Escape for text and for double- or single-quoted attribute values."""
    return html.escape(str(value), quote=True)


def text(value: object, limit: int = MAX_TEXT) -> str:
    """Untrusted text as inert HTML: escaped, direction-isolated, control characters visible."""
    raw = "" if value is None else str(value)
    cut = ""
    if len(raw) > limit:
        cut = f'<span class="cut">… ({len(raw) - limit:,} more characters)</span>'
        raw = raw[:limit]
    parts = []
    position = 0
    for match in _INVISIBLE.finditer(raw):
        parts.append(esc(raw[position:match.start()]))
        parts.append(f'<span class="ctl" title="control character">&lt;U+{ord(match.group()):04X}&gt;</span>')
        position = match.end()
    parts.append(esc(raw[position:]))
    return f"<bdi>{''.join(parts)}</bdi>{cut}"


def plain(value: object, limit: int = 200) -> str:
    """Untrusted text for an attribute (title=...): control characters dropped, escaped, short."""
    raw = _INVISIBLE.sub("", "" if value is None else str(value))
    return esc(raw if len(raw) <= limit else raw[: limit - 1] + "…")


@cache
def stylesheet() -> str:
    from importlib.resources import files

    return files("kubectl_win.output").joinpath("report.css").read_text(encoding="utf-8")


def page(title: str, body: str) -> str:
    """A whole document; `title` is untrusted text, `body` is HTML built with the helpers above."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light dark">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{plain(title)}</title>\n"
        f"<style>\n{stylesheet()}</style>\n"
        "</head>\n<body>\n"
        f"{body}"
        "</body>\n</html>\n"
    )
