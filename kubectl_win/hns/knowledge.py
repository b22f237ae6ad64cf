"""What knowledge/hns.yaml holds beside its checks (those are in kubectl_win/catalog.py): the limits the scale
checks compare against and the event-log and kube-proxy log patterns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from kubectl_win.knowledge import load


@dataclass(frozen=True)
class TextPattern:
    what: str
    regex: re.Pattern[str]


def limits() -> dict[str, Any]:
    return load("hns")["limits"]


@cache
def event_patterns() -> tuple[TextPattern, ...]:
    return tuple(TextPattern(e["what"], re.compile(e["pattern"], re.IGNORECASE)) for e in load("hns")["events"])


@cache
def kube_proxy_patterns() -> tuple[TextPattern, ...]:
    return tuple(TextPattern(e["what"], re.compile(e["pattern"])) for e in load("hns")["kube_proxy_log"])
