"""The check catalogue: every check's id, severity and the texts its findings are made of, and the one
`finding()` that fills them in.

Each knowledge file that defines checks is one family of the same entries, read into the same record:

    doctor   knowledge/doctor_checks.yaml  what doctor finds through the API (area: its module in doctor/checks/)
    symptom  knowledge/symptoms.yaml       failure signatures that only symptoms.yaml defines (title, severity,
                                           cause and sources live with their patterns)
    hns      knowledge/hns.yaml            what hns (and doctor --deep, --from-bundle) finds in a node's HNS state
    bundle   knowledge/bundle_checks.yaml  node facts only a support bundle holds (doctor --from-bundle)
    model    knowledge/failure_model.yaml  a failure no specific entry names, placed in its subsystem of the node
                                           stack (one check per subsystem: title, next steps and sources)

A new check is one entry in one of these files (and the code that notices it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from kubectl_win.findings import CONFIDENCE_CAUSE, Finding, Fix, ObjectRef, Severity, fix_from_template
from kubectl_win.knowledge import load

SYMPTOM_MESSAGE = "{object}: {reason}: {excerpt}{where}"


@dataclass(frozen=True)
class CheckInfo:
    id: str
    family: str
    severity: Severity
    title: str
    message: str
    # A fix template ({commands, note, judgement}), or "check": the check builds the Fix itself.
    fix: Any
    remediation: str
    source: str  # where the knowledge comes from; several sources joined with "; "
    enforced_by: str | None = None
    area: str = ""  # doctor: the checks module; symptom: "events"
    pattern: int | None = None  # hns: the number of the HNS failure pattern it detects
    # The entry's own confidence (findings.CONFIDENCE_*) where the entry names what failed but never why.
    confidence: str | None = None


def _entry(family: str, e: dict[str, Any], **given: Any) -> CheckInfo:
    """A knowledge entry as a CheckInfo; `given` are the fields its family spells differently or not at all."""
    fields = {key: e.get(key) for key in ("id", "severity", "title", "message", "fix", "remediation", "source",
                                           "enforced_by", "confidence")}
    fields.update(given)
    return CheckInfo(family=family, **{**fields, "severity": Severity(fields["severity"])})


@cache
def catalog() -> dict[str, CheckInfo]:
    """Every check of every family, by id (ids are unique across families; the tests hold them to it)."""
    out = {e["id"]: _entry("doctor", e, area=e["area"]) for e in load("doctor_checks")["checks"]}
    for e in load("symptoms")["symptoms"]:
        if e["check"] in out:
            continue
        cause = _cause_of(e) or "."
        out[e["check"]] = _entry("symptom", e, id=e["check"], severity=e.get("severity") or "warning",
                                 title=e.get("title") or e["check"], message=SYMPTOM_MESSAGE, fix="check",
                                 remediation=cause, source="; ".join(e.get("sources") or ()), area="events")
    for e in load("hns")["checks"]:
        out[e["id"]] = _entry("hns", e, source="; ".join(e["sources"]), pattern=int(e["pattern"]))
    for e in load("bundle_checks")["checks"]:
        out[e["id"]] = _entry("bundle", e)
    from kubectl_win.doctor.signatures import model

    for e in model.catalogue_entries():
        out[e["id"]] = _entry("model", e, severity="warning", message=model.MESSAGE, fix="check",
                              source="; ".join(e["sources"]), enforced_by=None, area="events")
    return out


@cache
def family(*names: str) -> dict[str, CheckInfo]:
    """The entries of the named families, in catalogue order."""
    return {check_id: info for check_id, info in catalog().items() if info.family in names}


def doctor_checks() -> dict[str, CheckInfo]:
    """What doctor reports on any cluster (doctor, symptom and model): its JUnit testcases, titles and HTML areas."""
    return family("doctor", "symptom", "model")


@cache
def _readings() -> dict[tuple[str, str], str]:
    """What symptoms.yaml says a text means, by (check, confidence): the cause, or the unsure sentence with its
    candidates (a check whose entries differ in confidence has one reading per confidence)."""
    out: dict[tuple[str, str], str] = {}
    for e in load("symptoms")["symptoms"]:
        cause = _cause_of(e)
        if cause:
            out.setdefault((e["check"], str(e.get("confidence") or CONFIDENCE_CAUSE)), cause)
    return out


def _cause_of(entry: dict[str, Any]) -> str:
    """A symptoms.yaml entry's cause as one sentence ending in a period; "" when it has none."""
    cause = " ".join(str(entry.get("cause") or "").split()).rstrip(".")
    return cause + "." if cause else ""


def finding(check_id: str, obj: ObjectRef, path: str = "", *, severity: str | None = None,
            ignores: frozenset[str] = frozenset(), fix: Fix | None = None, route: Fix | None = None,
            at: tuple[str, int | None] | None = None, confidence: str | None = None, **values: Any) -> Finding:
    """A Finding whose message and fix are the catalogue's templates filled with `values`.

    An unknown id or a missing placeholder raises (KeyError): that is a bug the tests catch. A check
    whose catalogue entry says `fix: check` passes the Fix it built (doctor/fixes.py) as `fix`; `route` replaces
    any entry's fix (the node's platform's own way, or what the evidence points at). `at` is
    (file, line) where in an input the finding was read (a support bundle's member; line None for all of it).
    `confidence` (findings.CONFIDENCE_*) is given by the checks that read a failure message; otherwise the
    entry's own (an entry that names what failed but never why is `unsure` wherever it is reported).
    """
    info = catalog()[check_id]
    if route is not None:
        fix = route
    elif info.fix == "check":
        if fix is None:
            raise KeyError(f"{check_id}: the check must pass its fix")
    else:
        fix = fix_from_template(info.fix, values)
    chosen = confidence if confidence is not None else info.confidence
    message = info.message.format_map(values)
    reading = _readings().get((check_id, chosen or "")) if info.message == SYMPTOM_MESSAGE else None
    if reading:
        # The catalogue's reading of the text, said where the user reads the finding (the table, JSON, SARIF's
        # message): its cause, or that the text does not say why and the candidates. Where the cluster's evidence
        # decided otherwise (no entry of that confidence), the fix carries what it decided instead.
        message += f" {'Cause' if chosen == CONFIDENCE_CAUSE else 'Unsure'}: {reading}"
    return Finding(
        id=check_id,
        severity=Severity(severity) if severity else info.severity,
        object=obj,
        path=path,
        message=message,
        fix=fix,
        file=at[0] if at else None,
        line=at[1] if at else None,
        source=info.source,
        enforced_by=info.enforced_by,
        object_ignores=ignores,
        confidence=chosen,
    )


def sarif_rules(findings: Sequence[Finding], shell: str = "posix") -> dict[str, dict[str, str]]:
    """The SARIF rules a report's findings need: the catalogue's, and for any other id (explain's field rules)
    a rule made from the finding itself."""
    rules = {c.id: {"description": c.title, "help": c.remediation, "source": c.source} for c in catalog().values()}
    for item in findings:
        rules.setdefault(item.id, {"description": item.id, "help": item.fix.text(shell), "source": item.source or ""})
    return rules
