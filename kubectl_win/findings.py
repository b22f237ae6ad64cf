"""The Finding record shared by explain and doctor, and the severity arithmetic around it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any



class Severity(StrEnum):
    """How much a finding matters, least first. A member is its text ("error" == Severity.error, and it hashes
    as its text), so findings, policies and output read it as the plain string they always did; it compares
    as that text too, and `rank` (or SEVERITY_RANK) is the order."""

    info = "info"
    warning = "warning"
    error = "error"

    @property
    def rank(self) -> int:
        return SEVERITY_RANK[self]


# Keyed by member, looked up by plain text as well (same hash, equal): the sort keys' fast path.
SEVERITY_RANK: dict[str, int] = {severity: rank for rank, severity in enumerate(Severity)}
SCHEMA_VERSION = "kubectl-win/v1"
# How sure a finding read from a failure message is of its cause: "cause" when the message ties its condition to
# the operation and the object (or the cluster's evidence shows it), "unsure" when it does not and the finding
# says so and gives the next steps. Findings about configuration carry none (None): they are the rule itself.
CONFIDENCE_CAUSE = "cause"
CONFIDENCE_UNSURE = "unsure"


@dataclass(frozen=True, slots=True)
class ObjectRef:
    apiVersion: str = ""
    kind: str = ""
    namespace: str | None = None
    name: str = ""

    @classmethod
    def of(cls, obj: dict[str, Any]) -> ObjectRef:
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        namespace = meta.get("namespace")
        name = meta.get("name") or meta.get("generateName")
        return cls(
            apiVersion=_scalar(obj.get("apiVersion")),
            kind=_scalar(obj.get("kind")),
            namespace=_scalar(namespace) or None,
            name=_scalar(name),
        )

    def display(self) -> str:
        base = f"{self.kind}/{self.name}" if self.kind else self.name
        return f"{self.namespace}/{base}" if self.namespace else base

    def to_dict(self) -> dict[str, Any]:
        return {"apiVersion": self.apiVersion, "kind": self.kind, "namespace": self.namespace, "name": self.name}


@dataclass(frozen=True, slots=True)
class Fix:
    """How to fix a finding, as data every renderer reads.

    `commands` are complete commands as argument vectors, run in order; they are quoted for the user's
    shell only when rendered (kubectl_win.shells), so nothing a cluster or file holds can break out of an
    argument. `note` is prose: what to do where no command fits, or what the commands need around them.
    `judgement` says why a value in the commands is a starting point to adjust, not a verdict.
    """

    commands: tuple[tuple[str, ...], ...] = ()
    note: str = ""
    judgement: str = ""

    def __bool__(self) -> bool:
        return bool(self.commands or self.note)

    def to_dict(self, shell: str = "posix") -> dict[str, Any]:
        from kubectl_win.shells import quote_command

        return {"commands": [quote_command(argv, shell) for argv in self.commands],
                "argv": [list(argv) for argv in self.commands], "note": self.note or None,
                "judgement": self.judgement or None}

    def text(self, shell: str = "posix") -> str:
        """One line for renderers without structure (JUnit, SARIF messages): note, commands, judgement."""
        from kubectl_win.shells import quote_command

        parts = [self.note.rstrip(".")] if self.note else []
        parts += [quote_command(argv, shell) for argv in self.commands]
        if self.judgement:
            parts.append(f"({self.judgement.rstrip('.')})")
        return "; ".join(parts)


NO_FIX = Fix()


def fix_from_template(spec: Any, values: dict[str, Any]) -> Fix:
    """A catalogue's fix template ({commands: [[arg, ...]], note, judgement}) filled with `values`.

    Each argument is filled on its own, so a value is one argument whatever it holds; an unknown
    placeholder raises KeyError (a bug the tests catch)."""
    if isinstance(spec, str):
        return Fix(note=spec.format_map(values))
    return Fix(
        commands=tuple(tuple(arg.format_map(values) for arg in argv) for argv in spec.get("commands") or ()),
        note=str(spec.get("note") or "").format_map(values),
        judgement=str(spec.get("judgement") or "").format_map(values),
    )


@dataclass(slots=True)
class Finding:
    id: str
    severity: Severity
    object: ObjectRef
    path: str
    message: str
    fix: Fix = NO_FIX
    file: str | None = None
    line: int | None = None
    since: str | None = None
    source: str | None = None
    # Who acts on it: api-server (rejects the object), kubelet, runtime; None for advice.
    enforced_by: str | None = None
    # Check ids the object itself asks to ignore (kubectl-win.io/ignore); never rendered.
    object_ignores: frozenset[str] = field(default_factory=frozenset, repr=False, compare=False)
    # CONFIDENCE_CAUSE or CONFIDENCE_UNSURE for a finding read from a failure message; None for the others.
    confidence: str | None = None

    def to_dict(self, location: bool = True, shell: str = "posix") -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "severity": self.severity}
        if location:
            data["file"] = self.file
            data["line"] = self.line
        data["object"] = self.object.to_dict()
        data["path"] = self.path
        data["message"] = self.message
        data["fix"] = self.fix.to_dict(shell) if self.fix else None
        data["enforcedBy"] = self.enforced_by
        if self.confidence is not None:
            data["confidence"] = self.confidence
        if location:
            data["since"] = self.since
            data["source"] = self.source
        return data


def _scalar(value: Any) -> str:
    """A name-like field as text; a list or mapping where a name belongs counts as absent."""
    return str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else ""


def at_or_above(severity: str, threshold: str) -> bool:
    if threshold == "never":
        return False
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[threshold]


def exit_code(findings: Iterable[Finding], fail_on: str) -> int:
    """0 when nothing reaches --fail-on, 1 when something does."""
    return 1 if any(at_or_above(f.severity, fail_on) for f in findings) else 0


def summarize(findings: Iterable[Finding]) -> dict[str, int]:
    counts = {"errors": 0, "warnings": 0, "infos": 0}
    for finding in findings:
        counts[finding.severity + "s"] += 1
    return counts


def sort_key(finding: Finding) -> tuple[Any, ...]:
    return (
        -SEVERITY_RANK[finding.severity],
        finding.file or "",
        finding.line or 0,
        finding.object.namespace or "",
        finding.object.kind,
        finding.object.name,
        finding.path,
        finding.id,
    )
