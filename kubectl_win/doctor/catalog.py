"""The check catalogue (knowledge/doctor_checks.yaml): ids, severities and the texts findings are made of."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from kubectl_win.findings import Finding, ObjectRef
from kubectl_win.knowledge import load


@dataclass(frozen=True)
class CheckInfo:
    id: str
    area: str
    severity: str
    title: str
    message: str
    hint: str
    remediation: str
    source: str
    enforced_by: str | None = None


@cache
def catalog() -> dict[str, CheckInfo]:
    entries = load("doctor_checks")["checks"]
    return {e["id"]: CheckInfo(e["id"], e["area"], e["severity"], e["title"], e["message"], e["hint"],
                               e["remediation"], e["source"], e["enforced_by"]) for e in entries}


def finding(check_id: str, obj: ObjectRef, path: str = "", *, severity: str | None = None,
            ignores: frozenset[str] = frozenset(), **values: Any) -> Finding:
    """A Finding whose message and hint are the catalogue's templates filled with `values`.

    An unknown id or a missing placeholder raises (KeyError): that is a bug the tests catch.
    """
    info = catalog()[check_id]
    return Finding(
        id=check_id,
        severity=severity or info.severity,
        object=obj,
        path=path,
        message=info.message.format_map(values),
        hint=info.hint.format_map(values),
        source=info.source,
        enforced_by=info.enforced_by,
        object_ignores=ignores,
    )


def sarif_rules() -> dict[str, dict[str, str]]:
    return {c.id: {"description": c.title, "help": c.remediation, "source": c.source} for c in catalog().values()}


def knowledge(key: str) -> Any:
    return load("doctor_checks")[key]
