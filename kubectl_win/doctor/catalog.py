"""The check catalogue (knowledge/doctor_checks.yaml): ids, severities and the texts findings are made of."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from kubectl_win.findings import Finding, Fix, ObjectRef, fix_from_template
from kubectl_win.knowledge import load


@dataclass(frozen=True)
class CheckInfo:
    id: str
    area: str
    severity: str
    title: str
    message: str
    # A fix template ({commands, note, judgement}), or "check": the check builds the Fix itself.
    fix: Any
    remediation: str
    source: str
    enforced_by: str | None = None


SYMPTOM_MESSAGE = "{object}: {reason}: {excerpt}{where}"


@cache
def catalog() -> dict[str, CheckInfo]:
    """doctor_checks.yaml, plus the symptom checks that knowledge/symptoms.yaml alone defines (their
    title, severity, cause and sources live with their patterns)."""
    entries = load("doctor_checks")["checks"]
    out = {e["id"]: CheckInfo(e["id"], e["area"], e["severity"], e["title"], e["message"], e["fix"],
                              e["remediation"], e["source"], e.get("enforced_by")) for e in entries}
    for entry in load("symptoms")["symptoms"]:
        if entry["check"] in out:
            continue
        out[entry["check"]] = CheckInfo(
            entry["check"], "events", entry.get("severity") or "warning", entry.get("title") or entry["check"],
            SYMPTOM_MESSAGE, "check", " ".join(str(entry.get("cause") or "").split()).rstrip(".") + ".",
            "; ".join(entry.get("sources") or ()), entry.get("enforced_by"))
    from kubectl_win.doctor.signatures import model

    for entry in model.catalogue_entries():  # one check per subsystem of the node stack (failure_model.yaml)
        out[entry["id"]] = CheckInfo(entry["id"], "events", "warning", entry["title"], model.MESSAGE, "check",
                                     entry["remediation"], "; ".join(entry["sources"]), None)
    return out


def finding(check_id: str, obj: ObjectRef, path: str = "", *, severity: str | None = None,
            ignores: frozenset[str] = frozenset(), fix: Fix | None = None, **values: Any) -> Finding:
    """A Finding whose message and fix are the catalogue's templates filled with `values`.

    An unknown id or a missing placeholder raises (KeyError): that is a bug the tests catch. A check
    whose catalogue entry says `fix: check` passes the Fix it built (doctor/fixes.py) as `fix`.
    """
    info = catalog()[check_id]
    if info.fix == "check":
        if fix is None:
            raise KeyError(f"{check_id}: the check must pass its fix")
    else:
        fix = fix_from_template(info.fix, values)
    return Finding(
        id=check_id,
        severity=severity or info.severity,
        object=obj,
        path=path,
        message=info.message.format_map(values),
        fix=fix,
        source=info.source,
        enforced_by=info.enforced_by,
        object_ignores=ignores,
    )


def sarif_rules() -> dict[str, dict[str, str]]:
    return {c.id: {"description": c.title, "help": c.remediation, "source": c.source} for c in catalog().values()}


def sarif_rules_for(findings: Sequence[Finding], shell: str = "posix") -> dict[str, dict[str, str]]:
    """The SARIF rules a report's findings need: the catalogue, hns's (--deep), the bundle's (--from-bundle),
    and for any other id a rule made from the finding itself."""
    rules = sarif_rules()
    if any(f.id.startswith("hns-") for f in findings):  # doctor --deep
        from kubectl_win.hns import catalog as hns_catalog

        rules.update(hns_catalog.sarif_rules())
    if any(f.id.startswith("bundle-") for f in findings):  # doctor --from-bundle
        rules.update(bundle_sarif_rules())
    for finding in findings:
        rules.setdefault(finding.id, {"description": finding.id, "help": finding.fix.text(shell),
                                      "source": finding.source or ""})
    return rules


def knowledge(key: str) -> Any:
    return load("doctor_checks")[key]


@dataclass(frozen=True)
class BundleCheck:
    id: str
    severity: str
    title: str
    message: str
    fix: Any  # a fix template (findings.fix_from_template)
    remediation: str
    source: str
    enforced_by: str | None


@cache
def bundle_checks() -> dict[str, BundleCheck]:
    """The checks doctor --from-bundle adds (knowledge/bundle_checks.yaml)."""
    return {e["id"]: BundleCheck(e["id"], e["severity"], e["title"], e["message"], e["fix"], e["remediation"],
                                 e["source"], e.get("enforced_by")) for e in load("bundle_checks")["checks"]}


def bundle_sarif_rules() -> dict[str, dict[str, str]]:
    return {c.id: {"description": c.title, "help": c.remediation, "source": c.source}
            for c in bundle_checks().values()}
