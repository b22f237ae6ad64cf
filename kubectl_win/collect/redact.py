"""The bundle is checked again here before it is written: the node script redacts, and this is the second
line. The same patterns (knowledge/collect.yaml `redact`), the same kinds (config files, everything else
as log text); a file whose content is a credential (`never_content`) is dropped and listed.
"""

from __future__ import annotations

import re
from functools import cache

from kubectl_win.knowledge import load

REPLACEMENT = r"\g<1><redacted>"


@cache
def _rules() -> tuple[tuple[str, frozenset[str], re.Pattern[str]], ...]:
    return tuple((r["name"], frozenset(r["in"]), re.compile(r["pattern"])) for r in load("collect")["redact"])


@cache
def _never() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in load("collect")["never_content"])


def kind_of(member: str) -> str:
    """config for files under config/, json for the structured dumps, log for the rest."""
    if member.startswith("config/"):
        return "config"
    return "json" if member.endswith(".json") else "log"


def credential(text: str) -> bool:
    return any(p.search(text) for p in _never())


def redact(text: str, kind: str) -> tuple[str, dict[str, int]]:
    """The text with every credential the rules know replaced, and how many of each."""
    counts: dict[str, int] = {}
    for name, kinds, pattern in _rules():
        if kind not in kinds and not (kind == "json" and "log" in kinds):
            continue
        text, found = pattern.subn(REPLACEMENT, text)
        if found:
            counts[name] = counts.get(name, 0) + found
    return text, counts
