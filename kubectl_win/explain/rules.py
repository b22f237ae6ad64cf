"""The field rules from knowledge/field_rules.yaml as typed, validated records (loaded once)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from kubectl_win.findings import SEVERITY_RANK
from kubectl_win.knowledge import load
from kubectl_win.versions import parse_version

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any

STATUSES = ("rejected", "ignored", "unsupported", "partial", "works", "windows-only", "rule")
SCOPES = ("pod", "container", "volume", "mount", "metadata")
TEMPLATES = (
    "forbidden",
    "runtime",
    "linux-forbidden",
    "os-name",
    "pod-os-label",
    "hostprocess-consistent",
    "hostprocess-all",
    "hostprocess-host-network",
    "run-as-user-name",
    "gmsa-name",
    "gmsa-spec",
    "stop-signal",
    "run-as-non-root-admin",
    "missing",
    "os-selector",
    "hostprocess-user",
)
TRIGGERS = ("present", "true", "non-empty", "equals:", "not-equals:", "key-prefix:")
# Who acts on a finding; None is advice (nothing stops the pod).
ENFORCERS = ("api-server", "kubelet", "runtime", None)


class RuleError(ValueError):
    """The rules file is inconsistent (caught by the test suite, never by users)."""


@dataclass(frozen=True, slots=True)
class Location:
    scope: str
    path: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Check:
    template: str
    at: tuple[Location, ...]
    trigger: str = "present"
    severity: str = "warning"
    inferred: str = "warning"
    unless: str | None = None
    container_lists: tuple[str, ...] = ("containers", "initContainers", "ephemeralContainers")


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    fields: tuple[str, ...]
    status: str
    summary: str
    reason: str
    instead: str
    since: str
    field_since: str | None
    until: str | None
    sources: tuple[str, ...]
    check: Check | None
    enforced_by: str | None = None
    enforced_by_node: str | None = None
    feature_gate: str | None = None
    gate_default_since: str | None = None
    admission: str | None = None  # why `scaffold policy` leaves the rule out (None: it carries it)
    admission_trigger: str | None = None  # the trigger the policy uses instead of check.trigger

    def gate_on_by_default(self, version: tuple[int, int]) -> bool:
        if self.feature_gate is None:
            return True
        return self.gate_default_since is not None and version >= parse_version(self.gate_default_since)

    @property
    def source(self) -> str:
        return "; ".join(self.sources)


@cache
def all_rules() -> tuple[Rule, ...]:
    data = load("field_rules")
    return tuple(_rule(entry) for entry in data["rules"])


@cache
def checks() -> tuple[Rule, ...]:
    """The rules that lint manifests, in file order."""
    return tuple(rule for rule in all_rules() if rule.check is not None)


@cache
def check_ids() -> tuple[str, ...]:
    return tuple(rule.id for rule in checks())


def _rule(entry: dict[str, Any]) -> Rule:
    rule_id = entry.get("id", "?")
    try:
        status = entry["status"]
        if status not in STATUSES:
            raise RuleError(f"unknown status {status!r}")
        for key in ("since", "field_since", "until", "gate_default_since"):
            if entry.get(key) is not None:
                parse_version(entry[key])
        check = _check(entry["check"]) if entry.get("check") else None
        if check is not None and "enforced_by" not in entry:
            raise RuleError("a checked rule says who enforces it (enforced_by)")
        for key in ("enforced_by", "enforced_by_node"):
            if entry.get(key) not in ENFORCERS:
                raise RuleError(f"{key} must be one of api-server, kubelet, runtime or null")
        return Rule(
            id=rule_id,
            fields=tuple(entry["fields"]),
            status=status,
            summary=entry["summary"].strip(),
            reason=entry["reason"].strip(),
            instead=entry["instead"].strip(),
            since=str(entry["since"]),
            field_since=entry.get("field_since"),
            until=entry.get("until"),
            sources=tuple(entry["sources"]),
            check=check,
            enforced_by=entry.get("enforced_by"),
            enforced_by_node=entry.get("enforced_by_node"),
            feature_gate=entry.get("feature_gate"),
            gate_default_since=entry.get("gate_default_since"),
            admission=_admission(entry.get("admission")),
            admission_trigger=entry.get("admission_trigger"),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise RuleError(f"field rule {rule_id}: {exc}") from exc


def _admission(value: Any) -> str | None:
    if value is not None and not (isinstance(value, str) and value.strip()):
        raise RuleError("admission must say why the admission policy leaves the rule out")
    return value.strip() if value else None


def _check(data: dict[str, Any]) -> Check:
    template = data["template"]
    if template not in TEMPLATES:
        raise RuleError(f"unknown template {template!r}")
    trigger = str(data.get("trigger", "present"))
    if not any(trigger == t or (t.endswith(":") and trigger.startswith(t)) for t in TRIGGERS):
        raise RuleError(f"unknown trigger {trigger!r}")
    locations = []
    for item in data["at"]:
        if item["scope"] not in SCOPES:
            raise RuleError(f"unknown scope {item['scope']!r}")
        locations.append(Location(item["scope"], tuple(str(step) for step in item["path"])))
    severity = data.get("severity", "warning")
    inferred = data.get("inferred", "warning")
    if severity not in SEVERITY_RANK or inferred not in SEVERITY_RANK:
        raise RuleError("severity must be error, warning or info")
    lists = tuple(data.get("containers") or ("containers", "initContainers", "ephemeralContainers"))
    return Check(template, tuple(locations), trigger, severity, inferred, data.get("unless"), lists)
