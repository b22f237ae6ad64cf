"""Text from a kubeconfig or a cluster made safe for a terminal, a log line or an XML document.

A context, node or event message may hold an escape sequence (which sets a terminal's title or colours, or
moves the cursor), a line break (which forges a line of output or of a log), or a bidirectional override
(which shows text reversed). Every such character is shown as its escape instead (`\\x1b`, `\\n`, `\\u202e`),
so what the user sees is what the cluster holds and nothing more.

Only `re` is imported: table output and serve's log use this.
"""

from __future__ import annotations

import re

# C0 controls (tab and line breaks included: inside a name or a cell they are forgeries), DEL, C1 controls,
# and the Unicode format characters that reorder or hide text.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
# Characters XML 1.0 cannot hold at all, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _shown(match: re.Match[str]) -> str:
    if match.group() in _SHORT:
        return _SHORT[match.group()]
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: object) -> str:
    """`text` with every control or reordering character shown as its escape."""
    value = str(text)
    return _UNSAFE.sub(_shown, value) if _UNSAFE.search(value) else value


def xml_safe(text: object) -> str:
    """`text` with the characters XML 1.0 cannot carry shown as their escapes (then XML-escape it as usual)."""
    value = str(text)
    return _NOT_XML.sub(_shown, value) if _NOT_XML.search(value) else value
