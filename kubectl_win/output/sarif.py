"""SARIF 2.1.0 for code scanning (GitHub, Azure DevOps): one run, rules from the check catalogue."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kubectl_win import __version__
from kubectl_win.findings import CONFIDENCE_CAUSE, CONFIDENCE_UNSURE, Finding
from kubectl_win.output.structured import render_json

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import IO, Any

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
CONFIDENCE_RANK = {CONFIDENCE_CAUSE: 90.0, CONFIDENCE_UNSURE: 30.0}


def sarif_document(findings: Iterable[Finding], rules: Mapping[str, Mapping[str, Any]],
                   shell: str = "posix") -> dict[str, Any]:
    """rules maps check id -> {"description": ..., "help": ..., "source": ...} for the ids used."""
    findings = list(findings)
    used = sorted({f.id for f in findings})
    rule_index = {rule_id: index for index, rule_id in enumerate(used)}
    results = []
    for finding in findings:
        result: dict[str, Any] = {
            "ruleId": finding.id,
            "ruleIndex": rule_index[finding.id],
            "level": LEVELS[finding.severity],
            "message": {
                "text": f"{finding.object.display()}: {finding.path}: {finding.message}"
                + (f" Fix: {finding.fix.text(shell)}" if finding.fix else "")
            },
            "properties": {"object": finding.object.to_dict(), "path": finding.path,
                           "enforcedBy": finding.enforced_by,
                           "fix": finding.fix.to_dict(shell) if finding.fix else None},
        }
        if finding.confidence is not None:
            # How sure doctor is of the cause it states: a script keeps properties.confidence == "cause"; an
            # unsure answer ranks low (SARIF rank 0-100: the result's priority).
            result["properties"]["confidence"] = finding.confidence
            result["rank"] = CONFIDENCE_RANK.get(finding.confidence, -1.0)
        location: dict[str, Any] = {
            "logicalLocations": [
                {
                    "name": finding.path,
                    "fullyQualifiedName": f"{finding.object.display()}:{finding.path}",
                    "kind": "member",
                }
            ]
        }
        if finding.file:
            physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(finding.file)}}
            if finding.line:
                physical["region"] = {"startLine": finding.line}
            location["physicalLocation"] = physical
        result["locations"] = [location]
        results.append(result)
    driver_rules = []
    for rule_id in used:
        meta = rules.get(rule_id, {})
        entry: dict[str, Any] = {
            "id": rule_id,
            "shortDescription": {"text": meta.get("description") or rule_id},
        }
        if meta.get("help"):
            entry["help"] = {"text": meta["help"]}
        if meta.get("source"):
            entry["properties"] = {"source": meta["source"]}
        driver_rules.append(entry)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "kubectl-win",
                        "version": __version__,
                        "informationUri": "https://github.com/kubectl-win/kubectl-win",
                        "rules": driver_rules,
                    }
                },
                "results": results,
            }
        ],
    }


def render_sarif(findings: Iterable[Finding], rules: Mapping[str, Mapping[str, Any]], out: IO[str],
                 shell: str = "posix") -> None:
    render_json(sarif_document(findings, rules, shell), out)


def _uri(path: str) -> str:
    return path.replace("\\", "/").removeprefix("./")
