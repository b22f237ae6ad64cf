"""SARIF 2.1.0 for code scanning (GitHub, Azure DevOps): one run, rules from the check catalogue.

Every result has a logical location (the object and field). A finding read from a file (explain -f, a support
bundle's log) also has a physical one, its file and line; GitHub code scanning drops results without one, so
a finding on an object read from a file that did not place it (doctor --from-dump) is given that file, at the
object's line where `artifact` finds it. URIs are relative to the working directory where the file is under
it (as code scanning expects paths in the repository), else file:// URIs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from kubectl_win import __version__
from kubectl_win.findings import CONFIDENCE_CAUSE, CONFIDENCE_UNSURE, Finding, ObjectRef
from kubectl_win.output.structured import render_json

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import IO, Any

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
CONFIDENCE_RANK = {CONFIDENCE_CAUSE: 90.0, CONFIDENCE_UNSURE: 30.0}


@dataclass
class Artifact:
    """The file the objects were read from (a dump), for results whose finding names no file of its own."""

    path: str
    text: str = ""  # its contents, to find each object's line; "" places every object on line 1
    _lines: dict[tuple[str, str], int] | None = field(default=None, repr=False)

    def line_of(self, ref: ObjectRef) -> int:
        """The line of the object's metadata.name (the first object of that kind and name), else of the first mention
        of its name (an object known from events only: their involvedObject), else 1."""
        if self._lines is None:
            self._lines = _object_lines(self.text)
        return self._lines.get((ref.kind, ref.name)) or self._lines.get(("", ref.name)) or 1


_KIND = re.compile(r'^\s*(?:"kind"\s*:\s*"([A-Za-z]+)"|-?\s*kind:\s*([A-Za-z]+)\s*$)')
_METADATA = re.compile(r'^\s*(?:"metadata"\s*:|metadata:)')
_NAME = re.compile(r'^\s*(?:"name"\s*:\s*"([^"]+)"|name:\s*[\'"]?([^\'"\s#]+))')


def _object_lines(text: str) -> dict[tuple[str, str], int]:
    """(kind, name) -> line of its metadata.name, for dumps as kubectl and doctor --save-dump write them: one key a
    line, each object's kind before its metadata (an owner reference's kind and name have no metadata between);
    ("", name) -> the first line naming it at all."""
    lines: dict[tuple[str, str], int] = {}
    kind, in_metadata = "", False
    for number, line in enumerate(text.splitlines(), 1):
        found = _KIND.match(line)
        if found:
            kind, in_metadata = found.group(1) or found.group(2), False
        elif kind and _METADATA.match(line):
            in_metadata = True
        elif named := _NAME.match(line):
            name = named.group(1) or named.group(2)
            lines.setdefault(("", name), number)
            if kind and in_metadata:
                lines.setdefault((kind, name), number)
                kind, in_metadata = "", False
    return lines


def sarif_document(findings: Iterable[Finding], rules: Mapping[str, Mapping[str, Any]],
                   shell: str = "posix", artifact: Artifact | None = None) -> dict[str, Any]:
    """rules maps check id -> {"description": ..., "help": ..., "source": ...} for the ids used; `artifact`: the
    file the objects came from, the physical location of results whose finding has none."""
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
            location["physicalLocation"] = {"artifactLocation": {"uri": _uri(finding.file)},
                                            "region": {"startLine": finding.line or 1}}
        elif artifact is not None:
            location["physicalLocation"] = {"artifactLocation": {"uri": _uri(artifact.path)},
                                            "region": {"startLine": artifact.line_of(finding.object)}}
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
                 shell: str = "posix", artifact: Artifact | None = None) -> None:
    render_json(sarif_document(findings, rules, shell, artifact), out)


def _uri(path: str, cwd: str | None = None) -> str:
    """A URI reference for a file: relative (percent-encoded) when under the working directory, else file://."""
    if path in ("-", "<stdin>"):
        return "stdin"
    from kubectl_win.output.fold import display_path

    windows_drive = re.match(r"^[A-Za-z]:[\\/]", path)
    shown = display_path(path, cwd)  # an absolute path under the working directory comes back relative
    if not (os.path.isabs(shown) or windows_drive):
        return quote(shown.replace(os.sep, "/").replace("\\", "/").removeprefix("./"))
    absolute = path.replace("\\", "/")
    return "file://" + quote(absolute if absolute.startswith("/") else "/" + absolute, safe="/:")
