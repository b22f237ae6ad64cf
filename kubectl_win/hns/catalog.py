"""The hns check catalogue (knowledge/hns.yaml): ids, severities, texts, limits and log/event patterns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from kubectl_win.findings import Finding, ObjectRef, fix_from_template
from kubectl_win.knowledge import load


@dataclass(frozen=True)
class HnsCheck:
    id: str
    pattern: int
    severity: str
    title: str
    message: str
    fix: Any  # a fix template: {commands: [[arg, ...]], note}
    remediation: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class TextPattern:
    what: str
    regex: re.Pattern[str]


@cache
def checks() -> dict[str, HnsCheck]:
    return {e["id"]: HnsCheck(e["id"], int(e["pattern"]), e["severity"], e["title"], e["message"], e["fix"],
                              e["remediation"], tuple(e["sources"])) for e in load("hns")["checks"]}


def limits() -> dict[str, Any]:
    return load("hns")["limits"]


@cache
def event_patterns() -> tuple[TextPattern, ...]:
    return tuple(TextPattern(e["what"], re.compile(e["pattern"], re.IGNORECASE)) for e in load("hns")["events"])


@cache
def kube_proxy_patterns() -> tuple[TextPattern, ...]:
    return tuple(TextPattern(e["what"], re.compile(e["pattern"])) for e in load("hns")["kube_proxy_log"])


def finding(check_id: str, obj: ObjectRef, path: str = "", **values: Any) -> Finding:
    """A Finding from the catalogue's templates; an unknown id or placeholder raises (a bug tests catch)."""
    info = checks()[check_id]
    return Finding(id=check_id, severity=info.severity, object=obj, path=path,
                   message=info.message.format_map(values), fix=fix_from_template(info.fix, values),
                   source="; ".join(info.sources))


def sarif_rules() -> dict[str, dict[str, str]]:
    return {c.id: {"description": c.title, "help": c.remediation, "source": "; ".join(c.sources)}
            for c in checks().values()}
